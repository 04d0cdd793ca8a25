"""The online monitor equals the offline evaluation (verdict, margin, first violation) and reacts at once."""

from __future__ import annotations

import dataclasses
import math
import random

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole, TrajectoryRecord
from cosim_validation.monitor.properties import (
    MonitorContext,
    OnlineMonitor,
    PropertySet,
    PropertySpec,
    Sample,
    Status,
    TraceError,
    evaluate,
    record_samples,
    replay,
)
from test.monitor.properties.traces import JOINTS, Sphere, make_record

CONTEXT = MonitorContext(JOINTS, 0.1, {"heart": Sphere((0.3, 0.0, 0.0), 0.1)}, target_m=np.array([0.5, 0.0, 0.0]))
ATOMS = [
    "x(tip) < {c}",
    "x(tip) > {c}",
    "y(tip) < {c}",
    "safebound(tip, expected.tip, {e})",
    "safedis(tip, heart, {e})",
    "nocollision(needle, heart)",
    "dist(tip, target) > {e}",
]
STAGE_ATOMS = ["stage == {s}", "stage != {s}"]
STAGE_NAMES = ["initialization", "approach", "injection", "extraction", "reset"]


def random_window(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return ""
    a = rng.choice([0.0, 0.0, 0.1, 0.25])
    return f"[{a}, {a + rng.choice([0.0, 0.1, 0.2, 0.45, 1.0])}]"


def random_formula(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.2:
            return rng.choice(STAGE_ATOMS).format(s=rng.choice(STAGE_NAMES))
        return rng.choice(ATOMS).format(c=round(rng.uniform(-0.5, 1.0), 2), e=round(rng.uniform(0.0, 0.2), 2))
    op = rng.choice(["always", "eventually", "until", "not", "and", "or", "->", "next", "always", "eventually"])
    a = random_formula(rng, depth - 1)
    if op in ("always", "eventually"):
        return f"{op}{random_window(rng)} ({a})"
    if op in ("not", "next"):
        return f"{op} ({a})"
    b = random_formula(rng, depth - 1)
    if op == "until":
        return f"({a}) until{random_window(rng)} ({b})"
    return f"({a}) {op} ({b})"


def random_record(rng: np.random.Generator, robot: RobotRole = RobotRole.VIRTUAL) -> TrajectoryRecord:
    n = int(rng.integers(0, 30)) if rng.random() < 0.05 else int(rng.integers(1, 40))
    dt = rng.choice([0.1, 0.1, 0.05]) * (1 + rng.uniform(-0.3, 0.3, n))
    t = np.cumsum(np.where(rng.random(n) < 0.1, 0.0, dt)) - dt[0] if n else np.zeros(0)  # some equal times
    tip = np.cumsum(rng.normal(0.0, 0.05, (n, 3)), axis=0) + np.array([0.3, 0.0, 0.0])
    if n and rng.random() < 0.2:
        tip[rng.integers(0, n), int(rng.integers(0, 3))] = np.nan
    stage = np.sort(rng.integers(1, 6, n))
    axis = rng.normal(0.0, 1.0, (n, 3))
    return make_record(tip, stage, t_s=t, tip_axis=axis, robot=robot)


def interleave(record: TrajectoryRecord, expected: TrajectoryRecord, rng: np.random.Generator) -> list[Sample]:
    """Robot and expected samples merged with a random lag in either direction."""
    robot, plan = record_samples(record), record_samples(expected)
    out: list[Sample] = []
    while robot or plan:
        take_plan = plan and (not robot or rng.random() < 0.5)
        out.append(plan.pop(0) if take_plan else robot.pop(0))
    return out


def test_online_equals_offline_on_random_traces_and_formulas() -> None:
    rng = np.random.default_rng(7)
    prng = random.Random(7)
    compared = 0
    for _ in range(1200):
        specs = tuple(PropertySpec(f"p{i}", random_formula(prng, 3)) for i in range(2))
        props = [s.compile(CONTEXT) for s in specs]
        record = random_record(rng)
        expected = random_record(rng, RobotRole.EXPECTED) if rng.random() < 0.9 else None
        offline = evaluate(props, record, CONTEXT, expected)
        samples = interleave(record, expected, rng) if expected is not None else record_samples(record)
        changes, online = replay(props, samples, CONTEXT, RobotRole.VIRTUAL)
        for off, on in zip(offline, online, strict=True):
            assert off.same_outcome(on), (off.property, specs, off, on)
            assert off.reason == on.reason
            compared += 1
        for change in changes:  # an early report is a violation that the final verdict confirms
            final = next(v for v in online if v.property == change.property)
            assert change.status is Status.VIOLATED
            assert not change.final
            assert final.status is Status.VIOLATED
            assert change.first_violation_time_s == final.first_violation_time_s
    assert compared == 2400


def line(n: int = 60) -> TrajectoryRecord:
    tip = np.zeros((n, 3))
    tip[:, 0] = np.linspace(0.0, 0.6, n)
    return make_record(tip, np.repeat(np.arange(1, 6), n // 5))


def test_first_violation_is_reported_immediately() -> None:
    monitor = OnlineMonitor(PropertySet((PropertySpec("p", "always x(tip) < 0.3"),)), CONTEXT, RobotRole.VIRTUAL)
    record = line()
    first_bad = int(np.argmax(record.tip_pos_m[:, 0] >= 0.3))
    for k, sample in enumerate(record_samples(record)):
        changes = monitor.push(sample)
        if k < first_bad:
            assert changes == []
            assert monitor.verdicts()[0].reason == "pending"
        elif k == first_bad:
            (change,) = changes
            assert change.status is Status.VIOLATED
            assert not change.final
            assert change.first_violation_time_s == record.t_s[k]
        else:
            assert changes == []  # reported once
    (final,) = monitor.finish()
    assert final.final
    assert final.status is Status.VIOLATED
    assert monitor.finish() == [final]


def test_robot_waits_for_its_expected_partner() -> None:
    props = PropertySet((PropertySpec("dev", "always safebound(tip, expected.tip, 0.01)"),))
    record = line(10)
    shifted = record.tip_pos_m.copy()
    shifted[5:, 1] += 0.05
    plan = make_record(shifted, record.stage, robot=RobotRole.EXPECTED)
    monitor = OnlineMonitor(props, CONTEXT, RobotRole.VIRTUAL)
    for sample in record_samples(record):
        assert monitor.push(sample) == []  # no plan yet: nothing can be decided
    changes = [c for s in record_samples(plan) for c in monitor.push(s)]
    assert [c.first_violation_time_s for c in changes] == [record.t_s[5]]
    assert monitor.finish()[0].margin == pytest.approx(-0.04)


def test_samples_after_the_plan_end_pair_with_its_last_sample() -> None:
    props = PropertySet((PropertySpec("dev", "always safebound(tip, expected.tip, 0.01)"),))
    record = line(20)
    plan = make_record(record.tip_pos_m[:10], record.stage[:10], robot=RobotRole.EXPECTED)
    offline = evaluate(props, record, CONTEXT, plan)[0]
    monitor = OnlineMonitor(props, CONTEXT, RobotRole.VIRTUAL)
    for sample in record_samples(plan):
        monitor.push(sample)
    early = monitor.end_expected()
    for sample in record_samples(record):
        early += monitor.push(sample)
    assert early
    assert early[0].first_violation_time_s == offline.first_violation_time_s
    assert monitor.finish()[0].same_outcome(offline)


def test_bad_samples_are_refused() -> None:
    monitor = OnlineMonitor(PropertySet((PropertySpec("p", "always x(tip) < 1"),)), CONTEXT, RobotRole.VIRTUAL)
    samples = record_samples(line(5))
    monitor.push(samples[1])
    with pytest.raises(TraceError, match="time goes backwards"):
        monitor.push(samples[0])
    with pytest.raises(TraceError, match="monitor of the virtual robot got a physical sample"):
        monitor.push(dataclasses.replace(samples[2], robot=RobotRole.PHYSICAL))
    with pytest.raises(TraceError, match=r"q_measured has shape \(6,\), expected \(7,\)"):
        monitor.push(dataclasses.replace(samples[2], q_measured=np.zeros(6)))
    with pytest.raises(TraceError, match="time must be finite"):
        monitor.push(dataclasses.replace(samples[2], t_s=math.nan))
    monitor.finish()
    with pytest.raises(TraceError, match="after finish"):
        monitor.push(samples[3])


def test_missing_context_requirements_are_unknown_online_too() -> None:
    bare = MonitorContext(JOINTS, 0.1)
    props = PropertySet(
        (
            PropertySpec("self", "always self_distance > 0"),
            PropertySpec("target", "always dist(tip, target) < 1"),
            PropertySpec("organs", "forall o in obstacles: always p2m(tip, o) > 0"),
        )
    )
    record = line(10)
    _, online = replay(props, record_samples(record), bare, RobotRole.VIRTUAL)
    offline = evaluate(props, record, bare)
    assert [v.status for v in online] == [Status.UNKNOWN] * 3
    assert [v.reason for v in online] == [v.reason for v in offline]


def test_no_samples_is_unknown() -> None:
    monitor = OnlineMonitor(PropertySet((PropertySpec("p", "always x(tip) < 1"),)), CONTEXT, RobotRole.PHYSICAL)
    (verdict,) = monitor.finish()
    assert verdict.status is Status.UNKNOWN
    assert verdict.reason == "empty trace: no samples"


def test_the_plan_itself_is_monitored() -> None:
    props = PropertySet(
        (PropertySpec("bound", "always x(tip) < 0.5"), PropertySpec("dev", "always safebound(tip, expected.tip, 0.01)"))
    )
    plan = dataclasses.replace(line(), robot=RobotRole.EXPECTED)
    changes, verdicts = replay(props, record_samples(plan), CONTEXT, RobotRole.EXPECTED)
    assert [v.property for v in verdicts] == ["bound"]
    assert verdicts[0].status is Status.VIOLATED
    assert changes[0].property == "bound"
