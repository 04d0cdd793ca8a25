"""Joint-space cases (joint_goals, teleoperation) for every robot of the registry, through the one assembly."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.assembly import AssemblySpec, CaseAssembly, case_seed, check_records
from cosim_validation.common.config import load_case_config, parse_case_config, resolve_resource
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.controllers import ControllersConfig, InsertionSetup
from cosim_validation.controllers.joint_space_controller import JointSpaceController
from cosim_validation.controllers.planning import PlanningError
from cosim_validation.testgen import TestCase

CONFIGS = {
    "xmate_er3_pro": "config/needle_insertion.yaml",
    "dvrk_psm": "config/dvrk_psm_insertion.yaml",
    "raven2": "config/raven2_insertion.yaml",
}
PROPERTIES = resolve_resource("config/joint_space_properties.yaml")


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def setup(request: pytest.FixtureRequest) -> InsertionSetup:
    return InsertionSetup.from_config(load_case_config(resolve_resource(CONFIGS[request.param])))


def _controller(setup: InsertionSetup, name: str) -> JointSpaceController:
    controller = setup.controller(name)
    assert isinstance(controller, JointSpaceController)
    return controller


def test_joint_goals_stop_at_each_goal_inside_the_box(setup: InsertionSetup) -> None:
    controller = _controller(setup, "joint_goals")
    plan = controller.plan_case(np.zeros(3), np.zeros(3), seed=11)
    q, dt = plan.q, setup.planning.dt_s
    np.testing.assert_allclose(q[0], setup.robot.home_q)
    np.testing.assert_allclose(q[-1], setup.robot.home_q)
    assert (q >= controller.box[0] - 1e-12).all()
    assert (q <= controller.box[1] + 1e-12).all()
    still = np.flatnonzero(np.abs(np.diff(q, axis=0)).max(axis=1) == 0.0)
    hold = round(controller.settings.hold_s / dt)
    runs = np.split(still, np.flatnonzero(np.diff(still) != 1) + 1)
    assert sum(len(r) >= hold for r in runs) == controller.settings.goals  # rests at every goal
    velocity = np.abs(np.diff(q, axis=0)) / dt
    assert (velocity <= controller.limits.velocity * (1 + 1e-9)).all()
    assert set(np.unique(plan.stage)) == {int(Stage.INITIALIZATION), int(Stage.RESET)}


def test_a_case_seed_fixes_the_motion(setup: InsertionSetup) -> None:
    controller = _controller(setup, "joint_goals")
    a = controller.plan_case(np.zeros(3), np.zeros(3), seed=5).q
    b = controller.plan_case(np.ones(3), np.ones(3), seed=5).q
    c = controller.plan_case(np.zeros(3), np.zeros(3), seed=6).q
    np.testing.assert_array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


def test_teleoperation_is_smooth_within_the_limits(setup: InsertionSetup) -> None:
    controller = _controller(setup, "teleoperation")
    plan = controller.plan_case(np.zeros(3), np.zeros(3), seed=3)
    q, dt = plan.q, setup.planning.dt_s
    np.testing.assert_allclose(q[[0, -1]], np.stack([setup.robot.home_q] * 2), atol=1e-12)
    assert plan.t_s[-1] == pytest.approx(controller.settings.teleoperation_s)
    velocity = np.abs(np.diff(q, axis=0)) / dt
    acceleration = np.abs(np.diff(q, n=2, axis=0)) / dt**2
    assert (velocity <= controller.limits.velocity * (1 + 1e-9)).all()
    assert (acceleration <= controller.limits.acceleration * (1 + 1e-9)).all()
    home = setup.robot.home_q
    room = np.minimum(home - controller.box[0], controller.box[1] - home)  # to the nearer side of the box
    assert (np.abs(q - home) <= room + 1e-12).all()
    assert (np.ptp(q, axis=0) > 0.1 * room).all()  # every joint takes part


def test_no_free_goal_is_a_refusal(setup: InsertionSetup) -> None:
    controller = _controller(setup, "joint_goals")

    class Blocked:
        def problem(self, q: np.ndarray, *, check_needle: bool) -> str:
            return "self-collision a-b at sample 0"

    controller.checker = Blocked()  # type: ignore[assignment]
    with pytest.raises(PlanningError, match="no collision-free joint goal in 50 draws") as info:
        controller.plan_case(np.zeros(3), np.zeros(3), seed=1)
    assert info.value.reason == "no_free_goal"


@pytest.mark.parametrize("robot", sorted(CONFIGS))
def test_a_joint_space_case_runs_through_the_assembly(robot: str) -> None:
    spec = AssemblySpec(
        str(resolve_resource(CONFIGS[robot])),
        engines=("mujoco", "emulated"),
        controller="joint_goals",
        properties_path=str(PROPERTIES),
    )
    assembly = CaseAssembly(spec)
    try:
        z = np.zeros(3)
        case = TestCase("js-0000001", "js", "base_link", z, z, np.zeros(3, dtype=np.int64), 0.0, "manual", 9, 0.0)
        batch = assembly.run_batch(case)
        assert batch.run.outcome == "completed", batch.run.message
        expected = assembly.controller().plan_case(z, z, seed=case_seed(9, "js-0000001"))
        np.testing.assert_array_equal(batch.records[0].q_setpoint, expected.q)
        reports = {r.robot: r for r in assembly.check(batch, z)}
        virtual = {v.property: v.status.name for v in reports[RobotRole.VIRTUAL.label].verdicts}
        assert virtual["no_self_collision"] == "HOLDS"
        assert virtual["tip_follows_plan"] == "HOLDS"
        limits = {r: next(v for v in reports[r].verdicts if v.property == "joints_within_limits") for r in reports}
        kin = assembly.kinematics
        for record in batch.records:  # the margin is the smallest distance of a measured joint to its limits
            margin = np.min(np.minimum(record.q_measured - kin.q_lower, kin.q_upper - record.q_measured))
            assert limits[record.robot.label].status.name == "HOLDS"
            assert limits[record.robot.label].margin == pytest.approx(margin, abs=1e-12), record.robot
        # the physical arm's last joint 1 mm or 1 mrad past its upper limit from sample 40 on: violated there
        physical = batch.records[-1]
        q = physical.q_measured.copy()
        q[40:, -1] = kin.q_upper[-1] + 0.001
        beyond = dataclasses.replace(physical, q_measured=q)
        report = check_records(assembly.monitor, [beyond], batch.records[0], z)[0]
        verdict = next(v for v in report.verdicts if v.property == "joints_within_limits")
        assert verdict.status.name == "VIOLATED"
        assert verdict.margin == pytest.approx(-0.001, abs=1e-12)
        assert verdict.first_violation_time_s == pytest.approx(physical.t_s[40])
        kpis = {k.name: k for k in reports[RobotRole.PHYSICAL.label].kpis}
        assert np.isfinite(kpis["deviation_frechet"].value)
        assert np.isfinite(kpis["insertion_deviation_max"].value) == (robot != "xmate_er3_pro")
    finally:
        assembly.close()


def test_a_bad_joint_space_setting_is_named(tmp_path: Path) -> None:
    text = "controllers: {default: joint_goals, guarded: {clearance_m: 0.01, n_directions: 10, "
    text += "max_deviation_rad: 0.5, max_attempts: 2}, joint_space: {goals: 0}}\n"
    node = parse_case_config(text, tmp_path / "c.yaml")
    with pytest.raises(ConfigError, match=r"controllers\.joint_space\.goals: expected an integer >= 1"):
        ControllersConfig.from_config(node["controllers"])
