"""Every operator and predicate against hand-computed values on small traces (offline evaluation)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.monitor.properties import MonitorContext, PropertySet, PropertySpec, Status, evaluate
from test.monitor.properties.traces import JOINTS, Sphere, make_record

X = np.array([3.0, 1.0, 4.0, 1.0, 5.0])  # x of the tip at t = 0, 0.1, ..., 0.4 s
STAGES = np.array([1, 2, 3, 3, 4])


def x_record(x: np.ndarray = X, stage: np.ndarray = STAGES, **kwargs: object) -> TrajectoryRecord:
    tip = np.zeros((x.size, 3))
    tip[:, 0] = x
    return make_record(tip, stage, **kwargs)  # type: ignore[arg-type]


CONTEXT = MonitorContext(JOINTS, 0.1, {"heart": Sphere((0.0, 0.0, 0.0), 0.5)}, target_m=np.array([4.0, 0.0, 0.0]))


def check(expression: str, record: TrajectoryRecord | None = None, **kwargs: object):  # type: ignore[no-untyped-def]
    record = x_record() if record is None else record
    (verdict,) = evaluate((PropertySpec("p", expression).compile(CONTEXT),), record, CONTEXT, **kwargs)  # type: ignore[arg-type]
    return verdict


@pytest.mark.parametrize(
    ("expression", "margin", "violation_t"),
    [
        ("x(tip) < 10", 7.0, math.nan),  # an atom is evaluated at the case start
        ("always x(tip) < 6", 1.0, math.nan),
        ("always x(tip) < 4.5", -0.5, 0.4),
        ("always x(tip) > 1", 0.0, 0.1),  # margin 0 is a violation
        ("always x(tip) >= 1", 0.0, 0.1),  # robust semantics: <= and < have the same margin
        ("eventually x(tip) > 4.5", 0.5, math.nan),
        ("eventually x(tip) > 6", -1.0, 0.4),  # liveness: violated at the end of the trace
        ("always[0.1, 0.25] x(tip) < 10", 6.0, math.nan),  # samples 1, 2
        ("always[0.1, 0.25] x(tip) < 3.5", -0.5, 0.2),
        ("eventually[0, 0.15] x(tip) > 2", 1.0, math.nan),  # samples 0, 1
        ("next x(tip) > 0", 1.0, math.nan),
        ("always next x(tip) > 0", -math.inf, 0.4),  # strong next: false at the last sample
        ("x(tip) > 0.5 until x(tip) > 4.5", 0.5, math.nan),
        ("x(tip) > 0.5 until[0, 0.25] x(tip) > 4.5", -0.5, 0.4),
        ("x(tip) > 2 until x(tip) > 4.5", -1.0, 0.4),  # x drops to 1 before reaching 5
        ("not always x(tip) < 4.5", 0.5, math.nan),
        ("always x(tip) < 6 and eventually x(tip) > 4.5", 0.5, math.nan),
        ("always x(tip) < 4.5 or eventually x(tip) > 4.8", 0.2, math.nan),
        ("always (x(tip) > 2 -> eventually[0, 0.1] x(tip) > 3.5)", -0.5, 0.0),  # sample 0: 3 then 1
        ("always (x(tip) > 3.5 -> eventually[0, 0.1] x(tip) > 0.5)", 2.5, math.nan),  # last sample: window truncated
        ("always eventually x(tip) > 4", 1.0, math.nan),
        ("eventually always x(tip) > 2", 3.0, math.nan),  # the last sample alone
        ("always (stage == injection -> x(tip) < 4.5)", 0.5, math.nan),
        ("always (stage != injection -> x(tip) < 4.5)", -0.5, 0.4),
        ("always 2 * x(tip) - 1 < 9.5", 0.5, math.nan),
        ("always abs(x(tip) - 3) < 2.5", 0.5, math.nan),
        ("always -x(tip) < 0", 1.0, math.nan),
        ("always (x(tip) + 1) / 2 < 3.5", 0.5, math.nan),
        ("always t < 0.45", 0.05, math.nan),
    ],
)
def test_operators_on_a_hand_computed_trace(expression: str, margin: float, violation_t: float) -> None:
    verdict = check(expression)
    assert verdict.margin == pytest.approx(margin, abs=1e-12)
    assert verdict.status is (Status.HOLDS if margin > 0 else Status.VIOLATED)
    assert verdict.holds == (margin > 0)
    if math.isnan(violation_t):
        assert math.isnan(verdict.first_violation_time_s)
        assert verdict.first_violation_stage is Stage.NONE
    else:
        assert verdict.first_violation_time_s == pytest.approx(violation_t)
        index = round(violation_t / 0.1)
        assert verdict.first_violation_stage is Stage(int(STAGES[index]))


def test_boolean_properties_have_infinite_margins_and_unit_1() -> None:
    holds = check("eventually stage == extraction")
    assert (holds.status, holds.margin, holds.unit) == (Status.HOLDS, math.inf, "1")
    violated = check("eventually stage == reset")
    assert (violated.status, violated.margin) == (Status.VIOLATED, -math.inf)


def test_seed_predicates() -> None:
    q = np.zeros((5, 7))
    q[:, 0] = [0.45, 0.5, 0.55, 0.5, 0.5]
    record = x_record(q=q)
    assert check("always safediff(q[0], 0.5, 0.1)", record).margin == pytest.approx(0.05)
    assert check("always safebound(tip, target, 3.5)", record).margin == pytest.approx(0.5)
    assert check("always safedis(tip, target)", record).margin == pytest.approx(0.0)  # the tip passes the target
    assert check("always safedis(tip, heart, 0.1)", record).margin == pytest.approx(0.4)
    assert check("always nocollision(tip, heart)", record).margin == pytest.approx(0.5)


def test_nocollision_checks_the_needle_segment_not_only_the_tip() -> None:
    # the tip stays 0.1 m outside the ball; the needle (0.3 m, pointing +x) crosses it
    tip = np.tile([0.6, 0.0, 0.0], (3, 1))
    record = make_record(tip, np.full(3, 3), tip_axis=np.tile([1.0, 0.0, 0.0], (3, 1)), needle_length_m=0.3)
    assert check("always nocollision(tip, heart)", record).margin == pytest.approx(0.1)
    needle = check("always nocollision(needle, heart)", record)
    assert needle.status is Status.VIOLATED
    assert needle.margin == pytest.approx(-0.2)
    assert check("always p2m(needle_base, heart) > 0", record).margin == pytest.approx(-0.2)


def test_orientation_relative_to_the_stage_entry() -> None:
    axis = np.tile([0.0, 0.0, -1.0], (5, 1))
    tilt = 0.03
    axis[3] = [math.sin(tilt), 0.0, -math.cos(tilt)]  # injection is samples 2, 3
    record = x_record(tip_axis=axis)
    verdict = check("always (stage == injection -> angle(tip_axis, entry(tip_axis, injection)) < 0.02)", record)
    assert verdict.status is Status.VIOLATED
    assert verdict.margin == pytest.approx(0.02 - tilt, abs=1e-9)
    assert verdict.first_violation_time_s == pytest.approx(0.3)


def test_comparison_with_the_expected_trajectory() -> None:
    expected = x_record(X + 0.001, robot=RobotRole.EXPECTED)
    verdict = check("always safebound(tip, expected.tip, 0.002)", expected=expected)
    assert verdict.margin == pytest.approx(0.001)
    assert check("always safebound(tip, expected.tip, 0.0005)", expected=expected).status is Status.VIOLATED


def test_nan_samples_give_bounds_or_unknown() -> None:
    x = X.copy()
    x[2] = np.nan
    record = x_record(x)
    unknown = check("always x(tip) < 6", record)
    assert unknown.status is Status.UNKNOWN
    assert math.isnan(unknown.margin)
    assert "NaN in 'x(tip) < 6' from t=0.2 s" in unknown.reason
    violated = check("always x(tip) < 4.5", record)  # the known samples already violate it
    assert (violated.status, violated.margin, violated.first_violation_time_s) == (Status.VIOLATED, -0.5, 0.4)
    assert "upper bound" in violated.reason
    holds = check("eventually x(tip) > 4.5", record)
    assert (holds.status, holds.margin) == (Status.HOLDS, 0.5)
    assert "lower bound" in holds.reason


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("always (stage == reset -> x(tip) < 1)", "vacuous"),
        ("always safebound(tip, expected.tip, 0.1)", "needs the expected trajectory"),
        ("always safebound(actual_tip, tip, 0.1)", "needs the actual tip pose"),
        ("always self_distance > 0", "needs a self-collision distance model"),
        ("always not self_collision", "needs a self-collision model"),
        ("always[10, 20] x(tip) < 1", "vacuous"),
    ],
)
def test_undecidable_properties_are_unknown_with_a_reason(expression: str, reason: str) -> None:
    verdict = check(expression)
    assert verdict.status is Status.UNKNOWN
    assert reason in verdict.reason


def test_missing_target_and_obstacles_are_unknown() -> None:
    bare = MonitorContext(JOINTS, 0.1)
    props = PropertySet(
        (
            PropertySpec("a", "always dist(tip, target) < 1"),
            PropertySpec("b", "forall o in obstacles: always p2m(tip, o) > 0"),
        )
    )
    a, b = evaluate(props, x_record(), bare)
    assert a.status is Status.UNKNOWN
    assert "target" in a.reason
    assert b.status is Status.UNKNOWN
    assert "obstacles" in b.reason


def test_empty_trace_is_unknown() -> None:
    empty = x_record(np.zeros(0), np.zeros(0))
    verdict = check("always x(tip) < 1", empty)
    assert verdict.status is Status.UNKNOWN
    assert verdict.reason == "empty trace: no samples"


def test_set_constants_and_robot_filter() -> None:
    props = PropertySet.parse(
        "constants: {limit_m: 4.5}\nproperties:\n"
        "  a: {expression: 'always x(tip) < limit_m'}\n"
        "  b: {expression: 'always x(tip) < 1', robots: [physical]}\n"
    )
    verdicts = evaluate(props, x_record(), MonitorContext(JOINTS, 0.1))
    assert [v.property for v in verdicts] == ["a"]
    assert verdicts[0].margin == -0.5
    assert verdicts[0].to_dict()["status"] == "violated"


@pytest.mark.parametrize(
    "expression",
    [
        "always x(tip)" + " * 1e12" * 27 + " > 1",
        "always x(tip)" + " * 1e12" * 27 + " * 0 < 1",
    ],
    ids=["overflow-to-inf", "overflow-times-zero"],
)
def test_arithmetic_that_overflows_is_unknown_without_numpy_warnings(expression: str) -> None:
    """A product of a signal and constants past float range was +inf (a margin of +inf: "vacuous: no sample was
    checked") or NaN, with numpy's overflow warnings on stderr; it is unknown at those samples, without warnings."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning fails the test
        verdict = check(expression)
    assert verdict.status == Status.UNKNOWN, verdict
    assert math.isnan(verdict.margin)
    assert verdict.reason.startswith("NaN in 'x(tip) * 1e12"), verdict.reason  # not "vacuous: no sample was checked"


def test_a_set_compiled_once_per_worker_still_reads_each_cases_target_and_constants() -> None:
    """A property set compiles once for contexts that differ only in what is read at evaluation (a campaign's cases:
    the target); a context with another constant value, or other obstacles, compiles again."""
    text = "constants: {near_m: 1.5}\nproperties:\n  reaches: {expression: 'eventually dist(tip, target) < near_m'}\n"
    props = PropertySet.parse(text, "<t>")
    heart = {"heart": Sphere((0.0, 0.0, 0.0), 0.5)}
    on_path = MonitorContext(JOINTS, 0.1, heart, target_m=np.array([4.0, 0.0, 0.0]))
    far_away = MonitorContext(JOINTS, 0.1, heart, target_m=np.array([4.0, 9.0, 0.0]))
    first = props.compile(on_path)
    assert props.compile(far_away)[0] is first[0]  # reused
    (near,) = evaluate(props, x_record(), on_path)
    (far,) = evaluate(props, x_record(), far_away)
    assert near.status is Status.HOLDS
    assert far.status is Status.VIOLATED
    wide = MonitorContext(JOINTS, 0.1, heart, target_m=np.array([4.0, 9.0, 0.0]), constants={"near_m": 10.0})
    assert props.compile(wide)[0] is not first[0]
    (wide_verdict,) = evaluate(props, x_record(), wide)
    assert wide_verdict.status is Status.HOLDS
    assert props.compile(MonitorContext(JOINTS, 0.1, {}, target_m=np.array([4.0, 0.0, 0.0])))[0] is not first[0]
