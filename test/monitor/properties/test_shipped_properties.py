"""Each shipped property of config/properties.yaml holds on a nominal case and fails on a case built to violate it."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.monitor.properties import MonitorContext, PropertySet, Status, Verdict, record_samples
from cosim_validation.monitor.properties.offline.evaluation import RunResult, evaluate_run
from cosim_validation.monitor.properties.online.monitor import OnlineMonitor
from test.monitor.properties.traces import (
    DOWN,
    HEART_CENTER,
    HEART_RADIUS,
    TARGET,
    edited,
    heart_mesh_obstacle,
    insertion_case,
    insertion_joints,
    machine_verdicts,
)

Case = tuple[TrajectoryRecord, TrajectoryRecord]


def folded_elbow_collides(q: np.ndarray) -> np.ndarray:
    """Test double of a self-collision check: the links touch when joint 4 folds beyond 2 rad."""
    return np.abs(q[:, 3]) > 2.0


@pytest.fixture(scope="module")
def shipped() -> PropertySet:
    return PropertySet.load("config/properties.yaml")


@pytest.fixture(scope="module")
def context() -> MonitorContext:
    joints = tuple(f"joint{i + 1}" for i in range(7))
    obstacles = {"heart": heart_mesh_obstacle()}
    return MonitorContext(joints, 0.1, obstacles, target_m=TARGET, self_collision=folded_elbow_collides)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def nominal(shipped: PropertySet, context: MonitorContext) -> RunResult:
    record, expected = insertion_case()
    return evaluate_run(shipped, record, context, expected)


def verdict(result: RunResult, name: str) -> Verdict:
    return next(v for v in result.verdicts if v.property == name)


def test_every_shipped_property_holds_on_the_nominal_case(nominal: RunResult, shipped: PropertySet) -> None:
    machines = [f"machine:{m}" for m in shipped.machines]
    assert [v.property for v in nominal.verdicts] == [p.name for p in shipped.properties] + machines
    for v in nominal.verdicts:
        assert v.status is Status.HOLDS, v
        assert v.margin > 0
    assert next(v for v in nominal.verdicts if v.property == "no_self_collision").unit == "1"


def injection(record: TrajectoryRecord) -> np.ndarray:
    return record.stage_indices(Stage.INJECTION)


def both(case: Case, field: str, change: Callable[[TrajectoryRecord, np.ndarray], None]) -> Case:
    """A fault of the plan that the robot follows: ``change`` applied to both records' ``field``."""
    out = []
    for record in case:
        values = getattr(record, field).copy()
        change(record, values)
        fields = {field: values}
        if field == "tip_pos_m" and record.has_actual_tip:  # the tracker sees the robot's tip where it is
            actual = record.actual_tip_pos_m.copy()
            change(record, actual)
            fields["actual_tip_pos_m"] = actual
        out.append(edited(record, **fields))
    return out[0], out[1]


def robot_only(case: Case, field: str, change: Callable[[TrajectoryRecord, np.ndarray], None]) -> Case:
    """A fault of the robot alone (the plan is right)."""
    values = getattr(case[0], field).copy()
    change(case[0], values)
    return edited(case[0], **{field: values}), case[1]


def joint_near_heart(case: Case) -> Case:
    def change(record: TrajectoryRecord, joints: np.ndarray) -> None:
        joints[30, 4] = HEART_CENTER + np.array([0.0, 0.0, HEART_RADIUS + 0.02])  # 2 cm from the heart; delta 5 cm

    return both(case, "joint_pos_m", change)


def folded_elbow(case: Case) -> Case:
    def change(record: TrajectoryRecord, q: np.ndarray) -> None:
        q[10:13, 3] = 2.2

    return both(both(case, "q_measured", change), "q_setpoint", change)


def needle_through_heart(case: Case) -> Case:
    def change(record: TrajectoryRecord, tip: np.ndarray) -> None:
        # one approach sample: tip 2 cm below the heart, the needle (10 cm, pointing down) crosses it
        tip[record.stage_indices(Stage.APPROACH)[4]] = HEART_CENTER - np.array([0.0, 0.0, HEART_RADIUS + 0.02])

    return both(case, "tip_pos_m", change)


def off_target(case: Case) -> Case:
    def change(record: TrajectoryRecord, tip: np.ndarray) -> None:
        tip[injection(record)[-1]] += [0.005, 0.0, 0.0]

    return both(case, "tip_pos_m", change)


def tilted_during_injection(case: Case) -> Case:
    def change(record: TrajectoryRecord, quat: np.ndarray) -> None:
        half = (math.pi + math.radians(3.0)) / 2  # pointing down (pi about x), tilted by 3 degrees more
        quat[injection(record)[5]] = [math.cos(half), math.sin(half), 0.0, 0.0]

    return both(case, "tip_quat_wxyz", change)


def extraction_off_path(case: Case) -> Case:
    def change(record: TrajectoryRecord, tip: np.ndarray) -> None:
        tip[record.stage_indices(Stage.EXTRACTION)[4:8]] += [0.0, 0.004, 0.0]

    return both(case, "tip_pos_m", change)


def tip_off_plan(case: Case) -> Case:
    def change(record: TrajectoryRecord, tip: np.ndarray) -> None:
        tip[25] += [0.0, 0.003, 0.0]

    return robot_only(case, "tip_pos_m", change)


def tracked_tip_off_plan(case: Case) -> Case:
    def change(record: TrajectoryRecord, actual: np.ndarray) -> None:
        actual[40] += [0.003, 0.0, 0.0]

    return robot_only(case, "actual_tip_pos_m", change)


def joint_off_plan(case: Case) -> Case:
    def change(record: TrajectoryRecord, q: np.ndarray) -> None:
        q[50, 2] += 0.02

    return robot_only(case, "q_measured", change)


VIOLATIONS: dict[str, tuple[Callable[[Case], Case], float]] = {
    # property -> (how to break the nominal case, time of the first violation [s])
    "joints_clear_of_obstacles": (joint_near_heart, 3.0),
    "no_self_collision": (folded_elbow, 1.0),
    "needle_outside_forbidden_regions": (needle_through_heart, 2.5),
    "targeting_error_bound": (off_target, 4.2),
    "needle_orientation_constant_during_injection": (tilted_during_injection, 3.6),
    "injection_extraction_aligned": (extraction_off_path, 5.4),
    "tip_follows_plan": (tip_off_plan, 2.5),
    "actual_tip_follows_plan": (tracked_tip_off_plan, 4.0),
    "joints_follow_plan": (joint_off_plan, 5.0),
}


def test_every_shipped_property_has_a_violating_case(shipped: PropertySet) -> None:
    assert set(VIOLATIONS) == {p.name for p in shipped.properties}


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_shipped_property_fails_on_a_case_built_to_violate_it(
    name: str, shipped: PropertySet, context: MonitorContext, nominal: RunResult
) -> None:
    breaker, when = VIOLATIONS[name]
    record, expected = breaker(insertion_case())
    result = evaluate_run(shipped, record, context, expected)
    broken = verdict(result, name)
    assert broken.status is Status.VIOLATED
    assert broken.margin <= 0
    assert broken.first_violation_time_s == pytest.approx(when)
    properties = [v for v in result.verdicts if not v.property.startswith("machine:")]  # behaviour tests aside
    others = [v.property for v in properties if v.status is not Status.HOLDS and v.property != name]
    assert others == [], "the broken case must violate only the property it was built for"


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_shipped_properties_online_equal_offline(name: str, shipped: PropertySet, context: MonitorContext) -> None:
    record, expected = VIOLATIONS[name][0](insertion_case(seed=3))
    offline = evaluate_run(shipped, record, context, expected)
    monitor = OnlineMonitor(shipped, context, RobotRole.VIRTUAL)
    early = []
    for plan, robot in zip(record_samples(expected), record_samples(record), strict=True):
        early += monitor.push(plan)
        early += monitor.push(robot)
    online = monitor.finish()
    machines = machine_verdicts(shipped.machines, record, context.target_m)
    assert offline.verdicts[-len(machines) :] == tuple(machines)  # offline runs the machines too, last
    for off, on in zip(offline.verdicts, online, strict=True):
        assert off.same_outcome(on), (off, on)  # type: ignore[attr-defined]
    assert [k.to_dict() for k in offline.kpis] == [k.to_dict() for k in monitor.kpis()]
    if name not in ("targeting_error_bound", "injection_extraction_aligned"):  # over KPIs: decided at the end
        assert [v.property for v in early if not v.property.startswith("machine:")] == [name]


def test_kpis_of_the_nominal_case(nominal: RunResult) -> None:
    kpis = {(k.name, k.stage): k for k in nominal.kpis}
    assert kpis["targeting_error", Stage.NONE].value < 3e-4
    assert kpis["deviation_p2t_max", Stage.NONE].value < 3e-4
    assert kpis["duration", Stage.NONE].value == pytest.approx(6.4)
    assert kpis["duration", Stage.INJECTION].value == pytest.approx(1.2)
    assert sum(kpis["duration", s].value for s in Stage if s is not Stage.NONE) == pytest.approx(6.4)
    assert all(k.unit in ("m", "rad", "s") for k in nominal.kpis)
    assert all(not math.isnan(k.value) for k in nominal.kpis)


def test_the_plan_is_checked_without_deviation_properties(shipped: PropertySet, context: MonitorContext) -> None:
    _, expected = insertion_case()
    result = evaluate_run(shipped, expected, context)
    names = [v.property for v in result.verdicts]
    assert "tip_follows_plan" not in names
    assert "needle_outside_forbidden_regions" in names
    assert all(v.status is Status.HOLDS for v in result.verdicts)
    assert all(k.name not in ("deviation_p2t_max", "joint_deviation_max") for k in result.kpis)


def test_segment_through_the_heart_is_caught_although_the_tip_is_outside(context: MonitorContext) -> None:
    from cosim_validation.monitor.properties.obstacles import MeshObstacle

    heart = context.obstacles["heart"]
    assert isinstance(heart, MeshObstacle)
    tip = HEART_CENTER - np.array([0.0, 0.0, HEART_RADIUS + 0.02])
    assert heart.point_distance_m(tip[None])[0] == pytest.approx(0.02, abs=1e-3)
    base = tip - 0.1 * DOWN
    assert heart.segment_distance_m(base[None], tip[None])[0] <= 0.0
    assert insertion_joints(tip[None]).shape == (1, 7, 3)
