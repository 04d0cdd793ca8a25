"""The MuJoCo virtual robot: it reaches its setpoints, feels gravity as the URDF says, reports ground truth."""

from __future__ import annotations

import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.robots.virtual import BackendModelError, BackendsConfig, execute_trajectory
from cosim_validation.robots.virtual.mujoco_backend import MujocoBackend


@pytest.fixture(scope="module")
def shared(config: ConfigNode) -> BackendsConfig:
    return BackendsConfig.from_config(config["backends"])


@pytest.fixture(scope="module")
def mujoco_backend(shared: BackendsConfig, kinematics: Kinematics) -> MujocoBackend:
    return MujocoBackend(shared, kinematics)


def _poses(robot_config: RobotConfig, n: int) -> np.ndarray:
    rng = np.random.default_rng(7)
    return rng.uniform(robot_config.q_lower * 0.7, robot_config.q_upper * 0.7, (n, 7))


def test_tracking_reaches_the_setpoint_in_steady_state(
    mujoco_backend: MujocoBackend, robot_config: RobotConfig
) -> None:
    home = robot_config.home_q
    for target in _poses(robot_config, 3):
        mujoco_backend.reset(home)
        mujoco_backend.command(target, 1.5)
        mujoco_backend.advance(3.0)
        sample = mujoco_backend.read()
        np.testing.assert_allclose(sample.q_measured, target, atol=1e-7)


def test_tracking_error_at_samples_stays_small_on_a_plan(
    mujoco_backend: MujocoBackend, kinematics: Kinematics, plan: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> None:
    record = execute_trajectory(mujoco_backend, kinematics, *plan)
    deviation_m = np.linalg.norm(record.actual_tip_pos_m - kinematics.record_arrays(plan[2]).tip_pos_m, axis=1)
    assert deviation_m.max() < 5e-4  # the virtual arm follows a 10 Hz plan within half a millimetre
    assert deviation_m.max() > 1e-6  # ... but it is a dynamic arm, not a copy of the plan


def test_ground_truth_tip_equals_nominal_fk(
    mujoco_backend: MujocoBackend, kinematics: Kinematics, robot_config: RobotConfig
) -> None:
    for q in _poses(robot_config, 5):
        mujoco_backend.reset(q)
        sample = mujoco_backend.read()
        pose = kinematics.tip_pose(sample.q_measured)
        np.testing.assert_allclose(sample.actual_tip_pos_m, pose.pos_m, atol=1e-9)
        w, x, y, z = sample.actual_tip_quat_wxyz
        needle_axis = np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])
        np.testing.assert_allclose(needle_axis, pose.axis, atol=1e-9)


def test_without_compensation_gravity_deflects_by_g_over_kp(
    shared: BackendsConfig, kinematics: Kinematics, robot_config: RobotConfig
) -> None:
    """Statics law: kp (q_ref - q) = g(q), with g from pinocchio on the URDF (an independent model)."""
    servo = dataclasses.replace(shared.servo, gravity_compensation=False)
    backend = MujocoBackend(dataclasses.replace(shared, servo=servo), kinematics)
    model = kinematics.chain.model
    data = model.createData()
    for q_ref in _poses(robot_config, 3):
        backend.reset(q_ref)
        backend.advance(4.0)
        q = backend.read().q_measured
        gravity_nm = pin.computeGeneralizedGravity(model, data, q)
        assert np.abs(gravity_nm).max() > 1.0  # a pose that loads the arm
        np.testing.assert_allclose(servo.kp_nm_per_rad * (q_ref - q), gravity_nm, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("needle_length_m", [0.05, 0.35])
def test_the_needle_is_the_kinematics_needle(
    shared: BackendsConfig, kinematics: Kinematics, needle_length_m: float
) -> None:
    other = kinematics.with_needle_length(needle_length_m)
    backend = MujocoBackend(shared, other)
    q = np.array([0.3, 0.5, -0.2, 1.2, 0.4, 0.9, 1.0])
    backend.reset(q)
    np.testing.assert_allclose(backend.read().actual_tip_pos_m, other.tip_pose(q).pos_m, atol=1e-9)


def test_a_servo_for_another_arm_is_refused(shared: BackendsConfig, kinematics: Kinematics) -> None:
    six = dataclasses.replace(shared.servo, kp_nm_per_rad=shared.servo.kp_nm_per_rad[:6])
    with pytest.raises(BackendModelError, match=r"the servo configures 6 joints, the model has 7"):
        MujocoBackend(dataclasses.replace(shared, servo=six), kinematics)
