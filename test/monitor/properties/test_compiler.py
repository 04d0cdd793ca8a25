"""Name resolution, quantifier expansion, kinds and units; every bad name gives a clear error."""

from __future__ import annotations

import pytest

from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.errors import PropertyError
from cosim_validation.monitor.properties.language import formula as f
from cosim_validation.monitor.properties.property_set import PropertySet, PropertySpec
from test.monitor.properties.traces import JOINTS, Sphere


@pytest.fixture(scope="module")
def context() -> MonitorContext:
    obstacles = {"heart": Sphere((0.5, 0.0, 0.0), 0.05), "aorta": Sphere((0.6, 0.1, 0.0), 0.02)}
    constants = {"delta_m": 0.02, "tol_rad": 0.01, "wait_s": 0.5, "eps": 0.001, "tol_deg": 1.0, "gap_mm": 2.0}
    constants |= {"tol_mrad": 2.0, "gap_nm": 2.0, "tol_MM": 1.0, "tol_M": 0.001}
    return MonitorContext(JOINTS, 0.1, obstacles, constants=constants)


def compile_one(expression: str, context: MonitorContext) -> f.Formula:
    return PropertySpec("p", expression).compile(context).compiled.formula


def test_forall_expands_over_joints_and_obstacles(context: MonitorContext) -> None:
    formula = compile_one("forall j in joints, o in obstacles: always safedis(joint[j], o, delta_m)", context)
    assert isinstance(formula, f.And)
    assert len(f.clauses(formula)) == 7 * 2
    assert all(isinstance(c, f.Always) for c in f.clauses(formula))


def test_units_of_margins(context: MonitorContext) -> None:
    def unit(expression: str) -> str:
        return PropertySpec("p", expression).compile(context).compiled.unit

    assert unit("always safediff(q[0], expected.q[0], 0.01)") == "rad"
    assert unit("always nocollision(needle, heart)") == "m"
    assert unit("always (stage == injection -> angle(tip_axis, entry(tip_axis, injection)) < 0.02)") == "rad"
    assert unit("eventually stage == reset") == "1"
    assert unit("always t < 30") == "s"


def test_requirements_are_collected(context: MonitorContext) -> None:
    compiled = PropertySpec("p", "always safebound(actual_tip, expected.tip, 0.002) and dist(tip, target) < 1")
    assert compiled.compile(context).compiled.requires == {"actual_tip", "expected", "target"}
    staged = PropertySpec("p", "always (stage == injection -> angle(tip_axis, entry(tip_axis, injection)) < 0.02)")
    assert staged.compile(context).compiled.requires == {"stages"}
    assert PropertySpec("p", "always t < 30").compile(context).compiled.requires == frozenset()


def test_joint_limits_need_the_robot_models_limits(context: MonitorContext) -> None:
    from cosim_validation.monitor.properties.property_set import missing_requirement

    spec = PropertySpec("p", "forall j in joints: always (q[j] >= q_lower[j] and q[j] <= q_upper[j])")
    compiled = spec.compile(context)
    assert compiled.compiled.requires == frozenset({"joint_limits"})
    assert compiled.compiled.unit == "rad"
    assert "needs the robot model's joint limits" in missing_requirement(compiled, context, True, True)
    limited = MonitorContext(JOINTS, 0.1, q_lower=(-1.0,) * 7, q_upper=(1.0,) * 7)
    assert missing_requirement(spec.compile(limited), limited, True, True) == ""
    with pytest.raises(PropertyError, match="joint index 7 out of range"):
        PropertySpec("p", "always q[0] < q_upper[7]").compile(limited)
    with pytest.raises(PropertyError, match=r"'expected.q_upper' cannot be indexed; indexed signals: .*q_upper"):
        PropertySpec("p", "always q[0] < expected.q_upper[0]").compile(limited)
    with pytest.raises(Exception, match="3 q_lower values for 7 joints"):
        MonitorContext(JOINTS, 0.1, q_lower=(0.0,) * 3)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("always tipp < 1", "unknown name 'tipp'; known signals"),
        ("always expected.tipp < 1", "unknown expected signal 'expected.tipp'"),
        ("always q[7] < 1", "joint index 7 out of range: the robot has 7 joints"),
        ("always q < 1", "signal 'q' needs a joint index"),
        ("always tip[0] < 1", "'tip' cannot be indexed"),
        ("always nocollision(needle, lung)", "unknown name 'lung'"),
        ("forall o in organs: always p2m(tip, o) > 0", "unknown domain 'organs'"),
        ("always safediff(q[0], x(tip), 0.1)", "units do not match: 'rad' and 'm'"),
        ("always dist(tip, q[0]) < 1", "expected a point, got a scalar"),
        ("always foo(tip) < 1", "unknown function 'foo'"),
        ("always dist(tip) < 1", "dist takes 2 arguments, got 1"),
        ("always safebound(tip, target)", "safebound takes 3 arguments, got 2"),
        ("always stage < injection", "stages compare with == or != only"),
        ("always x(tip) == 1", "== and != compare stages only"),
        ("always x(tip) < 1 and q[0] < 1", "mixes margins in m and rad"),
        ("always nocollision(tip, target)", "nocollision needs an obstacle"),
        ("always heart < 1", "obstacle 'heart' is not a value here"),
        ("always self_collision < 1", "self_collision is a condition"),
        ("forall j in joints: always j < 1", "a joint variable is an index"),
        ("always x(tip) * x(tip) < 1", "needs a plain number on one side"),
        ("always entry(tip, tip) < 1", "entry needs a stage or supervisor mode name"),
        ("always supervisor < stopped", "supervisor modes compare with == or != only"),
        ("always supervisor == 1", "compare the supervisor signal with a mode name"),
        ("always stage == stopped", "compare the stage signal with a stage name"),
        ("always supervisor == injection", "compare the stage signal with a stage name"),
        ("forall j in joints, j in joints: q[j] < 1", "variable 'j' is already bound"),
        # bounds that ask for the impossible, and a division by zero, were judged (on infinities, with warnings)
        ("always safedis(tip, target, -0.05)", r"safedis's bound must be >= 0, got -0.05"),
        ("always safebound(tip, expected.tip, -(0.002))", r"safebound's bound must be >= 0, got -0.002"),
        ("always safediff(q[0], expected.q[0], -1)", r"safediff's bound must be >= 0, got -1"),
        ("always x(tip) / 0 < 1", "division by zero"),
        ("always x(tip) / -0.0 < 1", "division by zero"),
        ("always x(tip) < 1e400", r"number 1e400 is too large"),  # it was infinity: 'unknown, vacuous'
        ("always safebound(tip, expected.tip, 1e999)", r"number 1e999 is too large"),
        ("always x(tip) < 1e300", r"number 1e300 is too large \(beyond 1e\+12\)"),  # finite, but overflowed
        ("always x(tip) * 1e200 * 1e200 < 1", r"number 1e200 is too large"),  # to inf: 'vacuous'
        ("always x(tip) < 1e7 * 1e7", r"1e\+14 is too large \(beyond 1e\+12\)"),
        ("always x(tip) < -1e13", r"number 1e13 is too large"),
        ("always x(tip) < 1e-400", r"number 1e-400 is too small \(it rounds to 0\)"),  # read as 0: never held
        # a constant's name declares its unit: metres added to radians, or compared with an angle, were taken
        ("always x(tip) < delta_m + tol_rad", r"units do not match: 'm' and 'rad'"),
        ("always x(tip) < tol_rad", r"units do not match: 'm' and 'rad'"),
        ("always safedis(tip, target, wait_s)", r"units do not match: 'm' and 's'"),
        # and a name in another unit was read as if in the language's (1 degree judged as 1 rad)
        ("always q[0] < tol_deg", r"constant 'tol_deg' is named in deg, .* give it in rad as tol_rad"),
        ("always x(tip) < gap_mm", r"constant 'gap_mm' is named in mm, .* give it in m as gap_m"),
        ("always q[0] < tol_mrad", r"constant 'tol_mrad' is named in mrad, .* give it in rad as tol_rad"),  # 2 rad
        ("always x(tip) < gap_nm", r"constant 'gap_nm' is named in nm"),
        ("always x(tip) < tol_MM", r"constant 'tol_MM' is named in MM"),
        ("always q[0] < tol_M", r"constant 'tol_M' is named in M, .* give it in m"),
    ],
)
def test_bad_names_and_kinds_are_errors(expression: str, message: str, context: MonitorContext) -> None:
    with pytest.raises(PropertyError, match=message) as info:
        compile_one(expression, context)
    assert "property 'p'" in str(info.value)
    assert info.value.position >= 0


def test_yaml_errors_name_file_and_key(context: MonitorContext) -> None:
    text = "properties:\n  ok: {expression: 'always x(tip) < 1'}\n  bad: {expression: 'always x(tip) <'}\n"
    with pytest.raises(Exception, match=r"<t>: properties\.bad\.expression: property 'bad': expected a signal"):
        PropertySet.parse(text, "<t>")
    with pytest.raises(Exception, match=r"properties\.ok\.expresion: unknown key"):
        PropertySet.parse("properties:\n  ok: {expresion: 'always x(tip) < 1'}\n", "<t>")
    with pytest.raises(Exception, match="unknown robot 'robo'"):
        PropertySet.parse("properties:\n  ok: {expression: 'x(tip) < 1', robots: [robo]}\n", "<t>")
    with pytest.raises(Exception, match="defined twice"):
        PropertySet((PropertySpec("a", "x(tip) < 1"), PropertySpec("a", "x(tip) < 2")))
    with pytest.raises(PropertyError, match="must be an identifier"):
        PropertySpec("a b", "x(tip) < 1")
    with pytest.raises(Exception, match=r"<t>: constants\.big_m: expected a number <= 1000000000000\.0, got 1e\+300"):
        PropertySet.parse("constants: {big_m: 1.0e+300}\nproperties:\n  ok: {expression: 'x(tip) < big_m'}\n", "<t>")


def test_expected_properties_do_not_apply_to_the_plan(context: MonitorContext) -> None:
    from cosim_validation.common.record import RobotRole

    prop = PropertySpec("p", "always safebound(tip, expected.tip, 0.01)").compile(context)
    assert not prop.applies_to(RobotRole.EXPECTED)
    assert prop.applies_to(RobotRole.PHYSICAL)


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        ("kpi(targeting_error) < -0.003", "compared with -0.003 it never holds"),
        ("-0.003 > kpi(targeting_error)", "compared with -0.003 it never holds"),
        ("kpi(targeting_error) >= -(1)", "compared with -1 it always holds"),
        ("-2 * 0.5 <= kpi(targeting_error)", "compared with -1 it always holds"),
        ("kpi(targeting_error) < 0", "compared with 0 it never holds"),
        ("0 > kpi(targeting_error)", "compared with 0 it never holds"),
        ("kpi(targeting_error) >= 0", "compared with 0 it always holds"),
        ("0 <= kpi(targeting_error)", "compared with 0 it always holds"),
    ],
)
def test_a_kpi_against_a_negative_bound_is_an_error(expression: str, says: str, context: MonitorContext) -> None:
    """A KPI is a distance, angle or duration, never negative: such a comparison was taken and judged."""
    from cosim_validation.monitor.properties.language.compiler import compile_formula
    from cosim_validation.monitor.properties.language.parser import parse_formula

    def compile_kpi(text: str) -> object:
        return compile_formula("p", text, parse_formula(text, "p"), context, {"targeting_error": "m"})

    with pytest.raises(
        PropertyError, match=r"kpi\(targeting_error\) is a distance, angle or duration \(>= 0\): " + says
    ):
        compile_kpi(expression)
    compile_kpi("kpi(targeting_error) < 0.003")  # a bound a KPI can be on either side of
    compile_kpi("kpi(targeting_error) <= 0")  # exactly zero: can hold, and fail
    compile_kpi("kpi(targeting_error) > 0")


def test_a_constant_named_without_a_unit_adopts_its_partners(context: MonitorContext) -> None:
    """``eps`` (no unit suffix) bounds a length and an angle alike (a prismatic joint's bound is in m, the others'
    in rad); ``delta_m`` bounds a length."""
    for expression in ("always x(tip) < eps", "always q[0] < eps", "always x(tip) < delta_m - eps"):
        compile_one(expression, context)


def test_a_time_window_may_name_a_constant_in_seconds(context: MonitorContext) -> None:
    """``eventually[0, wait_s]`` is the window ``[0, 0.5]`` (a window took only numbers: a constant in seconds
    could bound everything but time)."""
    named = compile_one("always eventually[0, wait_s] q[0] < 1", context)
    literal = compile_one("always eventually[0, 0.5] q[0] < 1", context)
    assert repr(named) == repr(literal)
    assert "window=(-1e-09, 0.500000001)" in repr(named)
    assert repr(compile_one("q[0] < 1 until[eps, wait_s] q[1] < 1", context)) == repr(
        compile_one("q[0] < 1 until[0.001, 0.5] q[1] < 1", context)
    )


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("eventually[0, delta_m] q[0] < 1", "a time window is in s, but constant 'delta_m' is in m"),
        ("eventually[0, tol_rad] q[0] < 1", "a time window is in s, but constant 'tol_rad' is in rad"),
        ("eventually[0, tol_deg] q[0] < 1", "constant 'tol_deg' is named in deg"),
        ("eventually[0, soon_s] q[0] < 1", "a time window names 'soon_s', which is no constant; constants: "),
        ("eventually[wait_s, eps] q[0] < 1", r"time window \[0.5, 0.001\] must satisfy 0 <= a <= b"),
    ],
)
def test_a_time_window_names_only_constants_in_seconds(expression: str, message: str, context: MonitorContext) -> None:
    with pytest.raises(PropertyError, match=message):
        compile_one(expression, context)


@pytest.mark.parametrize(
    ("expression", "says"),
    [
        (
            "2 * kpi(targeting_error) < -0.001",
            r"within \[0, inf\], the right side within \[-0.001, -0.001\], so the "
            r"comparison never holds",
        ),
        ("kpi(targeting_error) + 0.001 < 0", "never holds"),
        ("kpi(targeting_error) + 0.001 >= 0.0005", "always holds"),
        ("-kpi(targeting_error) > 0", "never holds"),
        ("kpi(targeting_error) / 2 - 1 < -1", "never holds"),
        ("abs(-kpi(targeting_error)) >= 0", "always holds"),
        ("kpi(targeting_error) + kpi(duration) < 0", r"kpi\(duration\), kpi\(targeting_error\) are never negative"),
        ("kpi(duration) - kpi(duration) < 0", "never holds"),  # the same KPI twice is one value, not two ranges
        ("kpi(duration) < kpi(duration) - 1", r"the left side minus the right side is 1 whatever kpi\(duration\) is"),
        ("kpi(duration) <= kpi(duration)", "side is 0 whatever kpi.duration. is, so the comparison always holds"),
        ("2 * kpi(duration) / 2 - kpi(duration) > 0.5", "the left side minus the right side is -0.5 whatever"),
        ("kpi(duration) + kpi(targeting_error) < kpi(duration) - 0.001", "never holds"),
    ],
)
def test_a_kpi_inside_arithmetic_is_checked_too(expression: str, says: str, context: MonitorContext) -> None:
    """``2 * kpi(x) < -0.001`` never holds as ``kpi(x) < -0.0005`` never does; only the bare comparison was caught."""
    from cosim_validation.monitor.properties.language.compiler import compile_formula
    from cosim_validation.monitor.properties.language.parser import parse_formula

    def compile_kpi(text: str) -> object:
        kpis = {"targeting_error": "m", "duration": "m"}
        return compile_formula("p", text, parse_formula(text, "p"), context, kpis)

    with pytest.raises(PropertyError, match=says):
        compile_kpi(expression)
    fine_ones = ("2 * kpi(targeting_error) < 0.003", "kpi(targeting_error) - 0.001 < 0", "kpi(duration) / 2 > 1")
    for fine in (*fine_ones, "kpi(duration) < kpi(targeting_error)", "kpi(duration) - kpi(targeting_error) < 0.5"):
        compile_kpi(fine)  # can hold and can fail
