"""LT4R-style machines: every DSL feature on hand-made traces, and the shipped machines pass and fail."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.monitor.properties import PropertyError, Status, record_samples
from test.monitor.properties.lt4r_reference import (
    ANY,
    EOF,
    Interval,
    Machine,
    MachineRunner,
    fuzzy,
    no_retraction_during_injection,
    run_machine,
    settles_at_target,
    shipped,
    stage_order,
)
from test.monitor.properties.lt4r_reference.examples import SHIPPED
from test.monitor.properties.traces import TARGET, edited, insertion_case, make_record


def bouncing(z: np.ndarray, dt: float = 0.1) -> TrajectoryRecord:
    """A 'ball' (the tip) with height z, moving along z only."""
    tip = np.zeros((z.size, 3))
    tip[:, 2] = z
    return make_record(tip, np.full(z.size, 2), t_s=np.arange(z.size) * dt)


BALL = np.array([1.0, 0.6, 0.2, 0.5, 0.7, 0.5, 0.2, 0.35, 0.4, 0.35, 0.2, 0.22, 0.2, 0.2])  # three bounces


def bounce_counter(bounces: int) -> Machine:
    """Seed 004, section 5.2.1: the ball bounces exactly ``bounces`` times."""

    def count(s: object, v: object) -> None:
        v.count += 1  # type: ignore[attr-defined]

    m = Machine("bounce_counter", start="falling", variables={"count": 0})
    m.state("falling").state("rising", on_entry=count).state("green")
    m.event("going_up", lambda s, v: s.tip_velocity_m_s[2] > 0)
    m.event("going_down", lambda s, v: s.tip_velocity_m_s[2] < 0)
    m.event("end_well", lambda s, v: s.is_last and v.count == bounces)
    m.on("end_well", "falling", "green").on("end_well", "rising", "green")
    m.on("going_up", "falling", "rising").on("going_down", "rising", "falling")
    return m


def test_counter_with_on_entry_actions() -> None:
    assert run_machine(bounce_counter(3), bouncing(BALL)).status is Status.HOLDS
    failed = run_machine(bounce_counter(2), bouncing(BALL))
    assert failed.status is Status.VIOLATED
    assert "not green" in failed.reason
    assert failed.time_s == pytest.approx(1.3)


def test_nested_machine_exits_to_red_in_the_parent() -> None:
    """Seed 004, section 5.2.2: every bounce lower than the one before (nested 'bouncer' machine)."""

    def on_top(s: object, v: object) -> None:
        v.higher = s.tip_m[2] > v.top  # type: ignore[attr-defined]
        v.top = s.tip_m[2]  # type: ignore[attr-defined]

    bouncer = Machine("bouncer", start="falling")
    bouncer.state("rising").state("falling", on_entry=on_top)
    bouncer.event("going_up", lambda s, v: s.tip_velocity_m_s[2] > 0)
    bouncer.event("going_down", lambda s, v: s.tip_velocity_m_s[2] < 0)
    bouncer.event("bad_bounce", lambda s, v: v.higher)
    bouncer.on("going_up", "falling", "rising").on("going_down", "rising", "falling")
    bouncer.exit("bad_bounce", ANY, "red")
    m = Machine("bounce_lower", start="bouncing", variables={"top": 10.0, "higher": False})
    m.state("bouncing", machine=bouncer).state("red").state("green").on(EOF, "bouncing", "green")

    good = run_machine(m, bouncing(BALL))
    assert good.status is Status.HOLDS
    assert "bouncing/rising" in [to for _, _, to in good.transitions]
    higher = BALL.copy()
    higher[8:10] = [0.9, 0.85]  # the third bounce higher than the second
    bad = run_machine(m, bouncing(higher))
    assert bad.status is Status.VIOLATED
    assert bad.final_state == "red"
    assert bad.time_s == pytest.approx(1.0)  # falling entered at 0.9 (too high); its exit fires at the next snapshot


def test_timed_eps_and_wildcard_transitions() -> None:
    m = Machine("timing", start="a")
    m.state("a").state("b").state("c").state("green").state("red")
    m.eps("a", "b")
    m.after(0.5, "b", "c")
    m.event("too_high", lambda s, v: s.tip_m[2] > 0.95)
    m.on("too_high", ANY, "red")
    m.on(EOF, "c", "green")
    result = run_machine(m, bouncing(np.full(10, 0.2)))
    assert result.status is Status.HOLDS
    assert [(t, to) for t, _, to in result.transitions] == [(0.0, "a"), (0.0, "b"), (0.5, "c"), (0.9, "green")]
    short = run_machine(m, bouncing(np.full(5, 0.2)))  # ends after 0.4 s in b: not green
    assert short.status is Status.VIOLATED
    assert short.final_state == "b"
    high = run_machine(m, bouncing(np.array([0.2, 0.2, 1.0, 0.2])))
    assert (high.status, high.time_s) == (Status.VIOLATED, pytest.approx(0.2))


def test_red_stops_the_replay_at_once() -> None:
    m = Machine("slide", start="green")  # seed 004, section 5.1: fail as soon as it tumbles
    m.state("green").state("red")
    m.event("tumbling", lambda s, v: fuzzy(s.tip_velocity_m_s, 0.001).x != 0.0)  # type: ignore[union-attr]
    m.on("tumbling", "green", "red")
    x = np.zeros((8, 3))
    x[5:, 0] = [0.01, 0.02, 0.03]
    runner = MachineRunner(m, RobotRole_virtual())
    result = runner.run(list(record_samples(make_record(x, np.full(8, 2)))))
    assert result.status is Status.VIOLATED
    assert result.time_s == pytest.approx(0.5)  # sample 5: the first one that tumbles
    assert runner.index == 6  # no sample after it was replayed
    steady = np.zeros((8, 3))
    steady[:, 0] = np.arange(8) * 1e-5  # 0.1 mm/s: within the interval
    assert run_machine(m, make_record(steady, np.full(8, 2))).status is Status.HOLDS


def RobotRole_virtual():  # type: ignore[no-untyped-def]
    from cosim_validation.common.record import RobotRole

    return RobotRole.VIRTUAL


@pytest.mark.parametrize(
    ("value", "tol", "op", "other", "expected"),
    [
        (0.0, 1.0, "==", -0.75, True),  # seed 004: (ball pose ~ 1) x = -0.75 at the origin
        (0.0, 1.0, "==", 1.5, False),
        (0.05, 0.1, ">", 0.0, False),  # a small movement is not a rise
        (0.15, 0.1, ">", 0.0, True),
        (-0.15, 0.1, "<", 0.0, True),
        (0.0005, 0.001, "!=", 0.0, False),
        (0.002, 0.001, "!=", 0.0, True),
        (0.1, 0.1, ">=", 0.0, True),
        (-0.1, 0.1, "<=", 0.0, True),
    ],
)
def test_fuzzy_interval_comparisons(value: float, tol: float, op: str, other: float, expected: bool) -> None:
    interval = fuzzy(value, tol)
    assert isinstance(interval, Interval)
    result = {
        "==": interval == other,
        "!=": interval != other,
        ">": interval > other,
        "<": interval < other,
        ">=": interval >= other,
        "<=": interval <= other,
    }[op]
    assert result is expected
    vector = fuzzy(np.array([value, 0.0, 0.0]), tol)
    assert (vector.x == other) is (interval == other)  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="tolerance must be >= 0"):
        fuzzy(1.0, -1.0)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda m: m.on("e", "nowhere", "a"), "transition from unknown state 'nowhere'"),
        (lambda m: m.on("e", "a", "nowhere"), "transition to unknown state 'nowhere'"),
        (lambda m: m.on("missing", "a", "a"), "unknown event 'missing'"),
        (lambda m: m.exit("e", "a", "a"), "exit transitions belong to nested machines"),
        (lambda m: m.state("a"), "state 'a' defined twice"),
        (lambda m: m.event("eof", lambda s, v: True), "event 'eof' defined twice or reserved"),
        (lambda m: m.after(-1.0, "a", "a"), "seconds >= 0"),
    ],
)
def test_malformed_machines_are_errors(build: object, message: str) -> None:
    def build_and_check() -> None:
        m = Machine("bad", start="a").state("a").event("e", lambda s, v: True)
        build(m)  # type: ignore[operator]
        m.check()

    with pytest.raises(PropertyError, match=message):
        build_and_check()
    with pytest.raises(PropertyError, match="start state 'b' is not a state"):
        Machine("bad", start="b").state("a").check()
    with pytest.raises(PropertyError, match="unknown machine"):
        shipped("nonexistent")


def test_failing_event_names_machine_and_time() -> None:
    m = Machine("broken", start="a").state("a").state("green")
    m.event("boom", lambda s, v: v.undefined > 0)
    m.on("boom", "a", "green")
    with pytest.raises(PropertyError, match=r"event 'boom' failed at t=0.0 s"):
        run_machine(m, bouncing(BALL))


def test_empty_trace_is_unknown() -> None:
    result = run_machine(stage_order(), bouncing(np.zeros(0)))
    assert result.status is Status.UNKNOWN
    assert result.to_verdict().property == "machine:stage_order"


# ---------------------------------------------------------------------------------------------- shipped machines
def nominal() -> TrajectoryRecord:
    return insertion_case()[0]


def swapped_stages() -> TrajectoryRecord:
    record = nominal()
    stage = record.stage.copy()
    stage[record.stage_indices(Stage.APPROACH)[-3:]] = int(Stage.INJECTION)
    stage[record.stage_indices(Stage.INJECTION)[:2]] = int(Stage.APPROACH)  # back to approach after injection
    return edited(record, stage=stage)


def truncated() -> TrajectoryRecord:
    record = nominal()
    keep = record.stage < int(Stage.RESET)
    return make_record(record.tip_pos_m[keep], record.stage[keep])


def stuck() -> TrajectoryRecord:
    record = nominal()
    t = record.t_s.copy()
    t[record.stage_indices(Stage.APPROACH)[-1] :] += 200.0  # approach takes over 120 s
    return edited(record, t_s=t)


def retracting() -> TrajectoryRecord:
    record = nominal()
    tip = record.tip_pos_m.copy()
    tip[record.stage_indices(Stage.INJECTION)[6]] += [0.0, 0.0, 0.012]  # back out by 7 mm
    return edited(record, tip_pos_m=tip)


def oscillating() -> TrajectoryRecord:
    record = nominal()
    tip = record.tip_pos_m.copy()
    last = record.stage_indices(Stage.INJECTION)[-7:]
    tip[last] = TARGET + np.array(
        [[0, 0, 0.001], [0, 0, -0.005], [0, 0, 0.0], [0, 0, 0.005], [0, 0, 0.0], [0, 0, -0.004], [0, 0, 0.0]]
    )
    return edited(record, tip_pos_m=tip)


def short_of_target() -> TrajectoryRecord:
    record = nominal()
    tip = record.tip_pos_m.copy()
    tip[record.stage_indices(Stage.INJECTION)[-1]] += [0.0, 0.0, 0.006]
    return edited(record, tip_pos_m=tip)


@pytest.mark.parametrize(
    ("machine", "record", "status", "time_s"),
    [
        (stage_order, nominal, Status.HOLDS, math.nan),
        (stage_order, swapped_stages, Status.VIOLATED, 3.1),
        (stage_order, truncated, Status.VIOLATED, 5.4),
        (stage_order, stuck, Status.VIOLATED, 203.0),
        (no_retraction_during_injection, nominal, Status.HOLDS, math.nan),
        (no_retraction_during_injection, retracting, Status.VIOLATED, 3.7),
        (settles_at_target, nominal, Status.HOLDS, math.nan),
        (settles_at_target, oscillating, Status.VIOLATED, 4.2),
        (settles_at_target, short_of_target, Status.VIOLATED, 4.3),
    ],
)
def test_shipped_machines(machine: object, record: object, status: Status, time_s: float) -> None:
    replayed = record()  # type: ignore[operator]
    result = run_machine(machine(), replayed, TARGET)  # type: ignore[operator]
    assert result.status is status, result
    if math.isnan(time_s):
        assert math.isnan(result.time_s)
    else:
        assert result.time_s == pytest.approx(time_s)
    verdict = result.to_verdict()
    assert verdict.holds is (status is Status.HOLDS)


def test_settles_needs_a_target() -> None:
    """Without a target the test cannot be decided: UNKNOWN with the reason (issue 15: it said violated)."""
    result = run_machine(settles_at_target(), nominal(), None)
    assert result.status is Status.UNKNOWN
    assert result.reason == "needs the case's target (none in the context, the record or the plan)"
    assert result.to_verdict().status is Status.UNKNOWN


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_a_run_without_stages_is_unknown_for_every_shipped_machine(name: str) -> None:
    """Issue 15, item 4: a foreign recording (no stage labels) made every shipped machine report violated."""
    record = nominal()
    unstaged = edited(record, stage=np.zeros_like(record.stage))
    for target in (TARGET, None):
        result = run_machine(shipped(name), unstaged, target)
        assert result.status is Status.UNKNOWN, result
        assert result.reason.startswith("needs the stages of a case" if target is not None else "needs ")
    with_stages = run_machine(shipped(name), record, TARGET)
    assert with_stages.status is Status.HOLDS, with_stages  # the same arm motion with its stages passes


def test_leading_samples_without_a_stage_are_not_replayed() -> None:
    """Samples before the first stage (stage none) are before the case: the verdict is the staged run's."""
    record = nominal()
    stage = np.array(record.stage)
    stage[:3] = 0
    for name in SHIPPED:
        assert run_machine(shipped(name), edited(record, stage=stage.copy()), TARGET).status is Status.HOLDS, name
    stage[40] = 0  # a sample without a stage inside the case is out of order
    assert run_machine(shipped("stage_order"), edited(record, stage=stage), TARGET).status is Status.VIOLATED


def test_unknown_requirement_is_an_error() -> None:
    with pytest.raises(PropertyError, match=r"unknown requirement 'tracker'; expected some of: stages, target"):
        MachineRunner(Machine("m", start="a", requires=("tracker",)).state("a"), RobotRole.VIRTUAL)
