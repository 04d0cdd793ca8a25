"""The state validator (I-SUR): every setpoint checked before it is sent; the first refusal stops the robot."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.record import Stage
from cosim_validation.controllers import InsertionSetup
from cosim_validation.controllers.planning import Plan, StateValidator, validated_setpoints


@pytest.fixture(scope="module")
def safe_plan(insertion_setup: InsertionSetup) -> Plan:
    return insertion_setup.controller("straight").plan_case(
        insertion_setup.planning.default_source_m, [0.44, 0.02, 0.03]
    )


@pytest.fixture
def validator(insertion_setup: InsertionSetup) -> StateValidator:
    return insertion_setup.state_validator()


def test_a_safe_plan_passes_untouched(validator: StateValidator, safe_plan: Plan) -> None:
    sent, stop = validated_setpoints(validator, safe_plan.q)
    assert stop is None
    np.testing.assert_array_equal(sent, safe_plan.q)
    assert not validator.stopped


def test_straight_into_the_heart_is_stopped_before_the_heart(
    insertion_setup: InsertionSetup, validator: StateValidator, behind_heart: np.ndarray
) -> None:
    planner = insertion_setup.planner
    plan = insertion_setup.controller("straight").plan_case(insertion_setup.planning.default_source_m, behind_heart[0])
    assert planner.needle_clearance(plan.q).min() == 0.0  # the plan enters the heart
    sent, stop = validated_setpoints(validator, plan.q)
    assert stop is not None
    assert plan.stage[stop] == Stage.INJECTION
    assert validator.stop_reason is not None
    assert validator.stop_reason.code == "forbidden_region"
    assert "'heart'" in validator.stop_reason.message
    clearance = insertion_setup.validator_settings.forbidden_clearance_m
    assert planner.needle_clearance(sent).min() >= clearance  # what was sent never came within the clearance
    np.testing.assert_array_equal(sent[stop:], np.broadcast_to(sent[stop - 1], sent[stop:].shape))


def test_after_a_refusal_everything_is_refused_until_reset(validator: StateValidator, safe_plan: Plan) -> None:
    q0 = safe_plan.q[0]
    validator.reset(q0)
    bad = q0.copy()
    bad[1] = 2.5
    verdict = validator.check(bad)
    assert not verdict.accepted
    assert verdict.code == "joint_limits"
    assert "joint2 = 2.5 rad outside" in verdict.message
    again = validator.check(q0)
    assert not again.accepted
    assert again.code == "stopped"
    validator.reset(q0)
    assert validator.check(q0).accepted


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (lambda q: np.append(q, 0.0), "malformed"),
        (lambda q: np.where(np.arange(7) == 2, np.nan, q), "malformed"),
        (lambda q: q + np.where(np.arange(7) == 0, 0.5, 0.0), "velocity"),
    ],
)
def test_bad_setpoints_are_refused(validator: StateValidator, safe_plan: Plan, change: object, code: str) -> None:
    q0 = safe_plan.q[0]
    validator.reset(q0)
    verdict = validator.check(change(q0))  # type: ignore[operator]
    assert not verdict.accepted
    assert verdict.code == code
    assert validator.stopped


def test_self_collision_is_refused(insertion_setup: InsertionSetup) -> None:
    validator = insertion_setup.state_validator()
    folded = np.array([0.0, 2.0, 0.0, 2.0, 0.0, 2.0, 0.0])
    validator.reset(folded)
    verdict = validator.check(folded)
    assert verdict.code == "self_collision"


def test_arm_in_the_body_is_refused(insertion_setup: InsertionSetup, safe_plan: Plan) -> None:
    """Pushing the needle 5 cm deeper than the plan's target drives the holder into the skin."""
    kin = insertion_setup.robot.kinematics
    deepest = safe_plan.q[safe_plan.stage_indices(Stage.INJECTION)[-1]]
    pose = kin.tip_pose(deepest)
    path = insertion_setup.planner.ik.track(
        deepest, pose.pos_m + np.linspace(0, 0.12, 61)[1:, None] * pose.axis, pose.R
    )
    validator = insertion_setup.state_validator()
    _sent, stop = validated_setpoints(validator, np.concatenate((deepest[None, :], path.q)))
    assert stop is not None
    assert validator.stop_reason is not None
    assert validator.stop_reason.code == "arm_in_body"
