"""The same planned cases on MuJoCo and PyBullet: the monitor's verdicts per engine (issue 6, item 4).

Cases are planned by the five-stage planner with seed 000's ``straight`` controller, which inserts along
the source -> target line even through the heart; the emulated physical arm runs them too.
"""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.assembly import MonitorWorld, RecordReport, check_records, monitor_world
from cosim_validation.common.config import load_config, resolve_resource
from cosim_validation.common.record import RobotRole, TrajectoryRecord
from cosim_validation.monitor.properties import SessionMonitor, Status, record_samples
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import execute_trajectory

TARGETS_M = {
    "clear": (0.44, 0.02, 0.03),  # a left-lung target the straight line reaches without touching the heart
    "through_heart": (0.4656, 0.0616, 0.0567),  # the straight line from the default source crosses the heart
}
ENGINES = ("mujoco", "pybullet", "emulated")


Runs = dict[str, tuple[dict[str, TrajectoryRecord], dict[str, RecordReport]]]


@pytest.fixture(scope="module")
def world() -> MonitorWorld:
    config = load_config(resolve_resource("config/needle_insertion.yaml"))
    return monitor_world(config, resolve_resource("config/properties.yaml"))


@pytest.fixture(scope="module")
def runs(world: MonitorWorld) -> Runs:
    from cosim_validation.controllers import InsertionSetup

    config = load_config(resolve_resource("config/needle_insertion.yaml"))
    setup = InsertionSetup.from_config(config)
    kinematics = setup.robot.kinematics
    controller = setup.controller("straight")
    out = {}
    for name, target in TARGETS_M.items():
        plan = controller.plan_case(setup.planning.default_source_m, np.array(target))
        meta = {"target_m": list(target)}
        records: list[TrajectoryRecord] = [plan.to_record(kinematics, name, meta)]
        for engine in ENGINES:
            backend = make_backend(engine, config, kinematics, seed=1)
            records.append(execute_trajectory(backend, kinematics, plan.t_s, plan.stage, plan.q, meta=meta))
            backend.close()
        done = check_records(world, records, records[0])
        robots = ("expected", *ENGINES)
        out[name] = (dict(zip(robots, records, strict=True)), dict(zip(robots, done, strict=True)))
    return out


@pytest.fixture(scope="module")
def reports(runs: Runs) -> dict[str, dict[str, RecordReport]]:
    return {case: reports for case, (_, reports) in runs.items()}


def statuses(report: RecordReport) -> dict[str, Status]:
    return {v.property: v.status for v in report.verdicts}


@pytest.mark.parametrize("case", sorted(TARGETS_M))
def test_mujoco_and_pybullet_agree(case: str, reports: dict[str, dict[str, RecordReport]]) -> None:
    mujoco, pybullet = statuses(reports[case]["mujoco"]), statuses(reports[case]["pybullet"])
    assert mujoco == pybullet
    assert Status.UNKNOWN not in mujoco.values()
    for machine in ("machine:stage_order", "machine:no_retraction_during_injection", "machine:settles_at_target"):
        assert mujoco[machine] is Status.HOLDS


def test_the_needle_through_the_heart_is_caught_on_every_robot(reports: dict[str, dict[str, RecordReport]]) -> None:
    for robot, report in reports["through_heart"].items():
        verdict = next(v for v in report.verdicts if v.property == "needle_outside_forbidden_regions")
        assert verdict.status is Status.VIOLATED, robot
        assert verdict.first_violation_stage.label == "injection"
    for robot, report in reports["clear"].items():
        assert statuses(report)["needle_outside_forbidden_regions"] is Status.HOLDS, robot


def test_the_emulated_arm_errs_like_a_real_one(reports: dict[str, dict[str, RecordReport]]) -> None:
    """Its tracked tip strays beyond the 2 mm bound somewhere; the simulators' tips stay well within."""
    for case in TARGETS_M:
        for engine in ("mujoco", "pybullet"):
            kpis = {k.name: k.value for k in reports[case][engine].kpis if k.stage == 0}
            assert kpis["actual_deviation_p2t_max"] < 1e-3
        emulated = {k.name: k.value for k in reports[case]["emulated"].kpis if k.stage == 0}
        assert emulated["actual_deviation_p2t_max"] > 1e-3


def test_online_session_equals_offline_on_a_planned_case(world: MonitorWorld, runs: Runs) -> None:
    records, _ = runs["through_heart"]
    plan, robot = records["expected"], records["emulated"]
    context = world.context(np.array(TARGETS_M["through_heart"]))
    session = SessionMonitor(world.properties, context, robots=(RobotRole.EXPECTED, robot.robot))
    changes = []
    for sample in sorted([*record_samples(plan), *record_samples(robot)], key=lambda s: s.t_s):
        changes += session.push(sample)
    finals = session.finish()
    offline = check_records(world, [plan, robot], plan, context.target_m)
    for report in offline:
        online = finals[RobotRole.parse(report.robot)]
        assert all(a.same_outcome(b) for a, b in zip(report.verdicts, online, strict=True))
    first = next(v for v in changes if v.property == "needle_outside_forbidden_regions")
    assert first.first_violation_stage.label == "injection"
