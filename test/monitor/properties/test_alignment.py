"""Pairing robot samples with expected samples: nearest in time, ties to the earlier, clamped at both ends."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.monitor.properties.alignment import align_expected
from cosim_validation.monitor.properties.online.expected_stream import ExpectedStream
from cosim_validation.monitor.properties.sample import Block
from test.monitor.properties.traces import make_record


@pytest.mark.parametrize(
    ("robot", "expected", "pairs"),
    [
        ([0.0, 0.1, 0.2], [0.0, 0.1, 0.2], [0, 1, 2]),  # same fixed rate: index k with index k
        ([0.004, 0.097, 0.203], [0.0, 0.1, 0.2], [0, 1, 2]),  # jitter below half a period
        ([0.05, 0.15], [0.0, 0.1, 0.2], [0, 1]),  # ties go to the earlier sample
        ([-0.1, 0.0], [0.0, 0.1], [0, 0]),  # before the plan: its first sample
        ([0.3, 0.5, 9.0], [0.0, 0.1, 0.2], [2, 2, 2]),  # after the plan: its last sample
        ([0.1, 0.1, 0.12], [0.0, 0.1, 0.1, 0.2], [1, 1, 2]),  # equal plan times: the first at, the last after
    ],
)
def test_nearest_in_time(robot: list[float], expected: list[float], pairs: list[int]) -> None:
    assert align_expected(np.array(robot), np.array(expected)).tolist() == pairs


def _blocks(times: list[float]) -> list[Block]:
    record = make_record(np.zeros((len(times), 3)), np.full(len(times), 2), t_s=np.array(times))
    full = Block.from_record(record)
    return [full.take(np.array([i])) for i in range(len(times))]


@pytest.mark.parametrize("lag", [-3, -1, 0, 1, 4])
def test_streaming_pairs_equal_the_offline_rule(lag: int) -> None:
    rng = np.random.default_rng(lag + 10)
    robot_t = np.sort(rng.uniform(-0.1, 2.2, 25))
    plan_t = np.round(np.arange(20) * 0.1 + rng.uniform(-0.02, 0.02, 20), 6)
    plan_t.sort()
    stream = ExpectedStream()
    robot, plan = _blocks(robot_t.tolist()), _blocks(plan_t.tolist())
    pairs: list[tuple[float, float]] = []
    for step in range(max(len(robot), len(plan)) + abs(lag)):  # the plan runs `lag` samples ahead (or behind)
        if 0 <= step - max(-lag, 0) < len(plan):
            stream.add_expected(plan[step - max(-lag, 0)])
        if 0 <= step - max(lag, 0) < len(robot):
            stream.add_robot(robot[step - max(lag, 0)])
        pairs += [(float(r.t_s[0]), float(e.t_s[0])) for r, e in stream.ready() if e is not None]
    stream.end()
    pairs += [(float(r.t_s[0]), float(e.t_s[0])) for r, e in stream.ready() if e is not None]
    offline = align_expected(robot_t, plan_t)
    assert pairs == [(float(t), float(plan_t[i])) for t, i in zip(robot_t, offline, strict=True)]
    assert len(stream.expected) <= len(plan)
