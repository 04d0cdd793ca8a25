"""Anchor: on the shared property our verdicts and margins equal rtamt's (PyPI, a well-kept STL monitor)."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole
from cosim_validation.monitor.properties import MonitorContext, Status, evaluate
from test.monitor.properties.rtamt_anchor import OURS, rtamt_robustness
from test.monitor.properties.traces import JOINTS, make_record


def excursion_case(rng: np.random.Generator, n: int) -> tuple[np.ndarray, object, object]:
    plan = np.cumsum(rng.normal(0.0, 0.002, (n, 3)), axis=0)
    dev = np.abs(rng.normal(0.0, 0.0008, n))
    for start in rng.integers(0, n, rng.integers(0, 4)):  # excursions of 1-8 samples
        dev[start : start + rng.integers(1, 9)] += rng.uniform(0.001, 0.004)
    direction = rng.normal(0.0, 1.0, (n, 3))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    stage = np.full(n, 2)
    robot = make_record(plan + dev[:, None] * direction, stage)
    expected = make_record(plan, stage, robot=RobotRole.EXPECTED)
    return np.linalg.norm(robot.tip_pos_m - plan, axis=1), robot, expected


def test_equal_verdicts_and_margins_with_rtamt() -> None:
    rng = np.random.default_rng(11)
    context = MonitorContext(JOINTS, 0.1)
    prop = OURS.compile(context)
    statuses = set()
    for _ in range(150):
        n = int(rng.integers(5, 80))
        dev, robot, expected = excursion_case(rng, n)
        (ours,) = evaluate([prop], robot, context, expected)  # type: ignore[arg-type]
        theirs = rtamt_robustness(robot.t_s, dev)  # type: ignore[attr-defined]
        assert ours.margin == pytest.approx(theirs, abs=1e-15)
        assert ours.status is (Status.HOLDS if theirs > 0 else Status.VIOLATED)
        statuses.add(ours.status)
    assert statuses == {Status.HOLDS, Status.VIOLATED}
