"""The five-stage plan: stage order, straight injection and extraction, constant orientation, limits, goals."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.common.record.stage import CASE_STAGES
from cosim_validation.controllers import InsertionSetup
from cosim_validation.controllers.planning import FiveStagePlanner, InsertionLine, Plan, PlanningError, limit_ratios
from cosim_validation.controllers.planning.joint_motion import scaled

TARGET = np.array([0.44, 0.02, 0.03])
OFF_LINE_SOURCE = np.array([0.40, -0.05, 0.32])


@pytest.fixture(scope="module", params=["on_line", "off_line"])
def plan(request: pytest.FixtureRequest, insertion_setup: InsertionSetup) -> Plan:
    """A straight-controller plan (source on the line), and a guarded plan with its own direction (standoff)."""
    if request.param == "on_line":
        return insertion_setup.controller("straight").plan_case(insertion_setup.planning.default_source_m, TARGET)
    plan = insertion_setup.controller("guarded").plan_case(OFF_LINE_SOURCE, TARGET)
    return plan


@pytest.fixture(scope="module")
def record(plan: Plan, insertion_setup: InsertionSetup) -> TrajectoryRecord:
    return plan.to_record(insertion_setup.robot.kinematics, "plan-test")


def _on_line_distance(points: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    direction = (b - a) / np.linalg.norm(b - a)
    offset = points - a
    return np.linalg.norm(offset - np.outer(offset @ direction, direction), axis=1)


def test_stages_come_in_order(plan: Plan, insertion_setup: InsertionSetup) -> None:
    assert plan.stage[0] == Stage.INITIALIZATION
    assert np.all(np.diff(plan.stage.astype(int)) >= 0)
    assert [Stage(s) for s in np.unique(plan.stage)] == list(CASE_STAGES)
    np.testing.assert_allclose(np.diff(plan.t_s), insertion_setup.planning.dt_s, atol=1e-12)
    np.testing.assert_allclose(plan.q[0], insertion_setup.robot.home_q)


def test_each_stage_ends_at_its_goal(plan: Plan, record: TrajectoryRecord) -> None:
    """Initialization at the source, approach at the entry, injection at the target (< 0.1 mm), back again."""
    goals = {
        Stage.INITIALIZATION: plan.source_m,
        Stage.APPROACH: plan.line.entry_m,
        Stage.INJECTION: plan.line.target_m,
        Stage.EXTRACTION: plan.line.entry_m,
        Stage.RESET: plan.source_m,
    }
    for stage, goal in goals.items():
        last = plan.stage_indices(stage)[-1]
        assert np.linalg.norm(record.tip_pos_m[last] - goal) < 1e-6, stage
    assert np.linalg.norm(record.tip_pos_m[plan.stage_indices(Stage.INJECTION)[-1]] - TARGET) < 1e-4


def test_injection_is_straight_with_constant_orientation(plan: Plan, record: TrajectoryRecord) -> None:
    idx = np.concatenate(([plan.stage_indices(Stage.INJECTION)[0] - 1], plan.stage_indices(Stage.INJECTION)))
    tips = record.tip_pos_m[idx]
    assert np.max(_on_line_distance(tips, plan.line.entry_m, plan.line.target_m)) < 1e-6
    progress = (tips - plan.line.entry_m) @ plan.line.axis
    assert np.all(np.diff(progress) >= -1e-9)
    angles = np.arccos(np.clip(record.tip_axis[idx] @ plan.line.axis, -1.0, 1.0))
    assert np.max(angles) < 1e-5
    # the needle axis is the insertion direction from the entry to the target
    np.testing.assert_allclose(plan.line.axis, (TARGET - plan.line.entry_m) / plan.line.depth_m, atol=1e-9)


def test_extraction_and_reset_reverse_injection_and_approach(plan: Plan) -> None:
    injection = plan.q[
        np.concatenate(([plan.stage_indices(Stage.INJECTION)[0] - 1], plan.stage_indices(Stage.INJECTION)))
    ]
    extraction = plan.q[
        np.concatenate(([plan.stage_indices(Stage.EXTRACTION)[0] - 1], plan.stage_indices(Stage.EXTRACTION)))
    ]
    np.testing.assert_array_equal(extraction, injection[::-1])
    approach = plan.q[np.concatenate(([plan.stage_indices(Stage.APPROACH)[0] - 1], plan.stage_indices(Stage.APPROACH)))]
    reset = plan.q[np.concatenate(([plan.stage_indices(Stage.RESET)[0] - 1], plan.stage_indices(Stage.RESET)))]
    np.testing.assert_array_equal(reset, approach[::-1])


def test_approach_keeps_the_needle_aligned(plan: Plan, record: TrajectoryRecord) -> None:
    idx = plan.stage_indices(Stage.APPROACH)
    angles = np.arccos(np.clip(record.tip_axis[idx] @ plan.line.axis, -1.0, 1.0))
    assert np.max(angles) < 1e-5
    # the last part of the approach runs along the insertion line
    assert _on_line_distance(record.tip_pos_m[idx[-3:]], plan.line.entry_m, plan.line.target_m).max() < 1e-6


def test_limits_are_respected(plan: Plan, insertion_setup: InsertionSetup) -> None:
    robot = insertion_setup.robot
    assert np.all(plan.q >= robot.q_lower - 1e-12)
    assert np.all(plan.q <= robot.q_upper + 1e-12)
    cfg = insertion_setup.planning
    used = scaled(robot.limits, cfg.joint_velocity_scale, cfg.joint_acceleration_scale)
    for stage in CASE_STAGES:
        idx = plan.stage_indices(stage)
        velocity, acceleration = limit_ratios(plan.q[np.concatenate(([max(idx[0] - 1, 0)], idx))], used, cfg.dt_s)
        assert velocity <= 1.0 + 1e-9, stage
        assert acceleration <= 1.0 + 1e-9, stage


def test_expected_record(record: TrajectoryRecord, plan: Plan) -> None:
    assert record.robot == RobotRole.EXPECTED
    assert record.backend == "plan"
    np.testing.assert_array_equal(record.q_setpoint, plan.q)
    np.testing.assert_array_equal(record.stage, plan.stage)
    assert record.meta["controller"] == plan.controller
    assert record.meta["sampling_rate_hz"] == pytest.approx(10.0)
    restored = TrajectoryRecord.from_bytes(record.to_bytes())
    np.testing.assert_array_equal(restored.tip_pos_m, record.tip_pos_m)


def test_a_plan_of_one_sample_is_a_record_of_one_sample(insertion_setup: InsertionSetup, plan: Plan) -> None:
    """A plugin may plan a single setpoint (hold there): its record has one sample and no sampling rate."""
    one = Plan(plan.t_s[:1], plan.stage[:1], plan.q[:1], plan.source_m, plan.line, "hold")
    record = one.to_record(insertion_setup.robot.kinematics, "one")
    assert record.n_samples == 1
    np.testing.assert_array_equal(record.q_setpoint, plan.q[:1])
    assert "sampling_rate_hz" not in record.meta


def test_too_deep_for_a_short_needle(insertion_setup: InsertionSetup, plan: Plan) -> None:
    robot = dataclasses.replace(
        insertion_setup.robot, kinematics=insertion_setup.robot.kinematics.with_needle_length(0.12)
    )
    short = FiveStagePlanner(robot, insertion_setup.planning, insertion_setup.world)
    with pytest.raises(PlanningError, match="deeper than the needle allows") as info:
        short.plan(plan.source_m, plan.line, "straight")
    assert info.value.reason == "too_deep"


def test_unreachable_source(insertion_setup: InsertionSetup, plan: Plan) -> None:
    line = InsertionLine(plan.line.target_m, plan.line.axis, plan.line.entry_m)
    with pytest.raises(PlanningError, match="out of reach") as info:
        insertion_setup.planner.plan(np.array([1.6, 0.0, 0.5]), line, "straight")
    assert info.value.reason == "unreachable"
