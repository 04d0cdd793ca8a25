"""The emulated ER3 Pro errs like a real arm: each error source has its configured effect, and together
they give millimetre tip errors, larger than the virtual robot's; a seed fixes everything."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pinocchio as pin
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.robots.emulated.emulated_er3_pro import EmulatedEr3Pro
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import execute_trajectory
from test.robots.virtual.plans import config_node, quiet_emulated, shipped_config_dict

Plan = tuple[np.ndarray, np.ndarray, np.ndarray]
SHIPPED = shipped_config_dict()["backends"]


def _emulated(kinematics: Kinematics, edit: Callable[[dict[str, Any]], None], seed: int = 0) -> EmulatedEr3Pro:
    """An arm with every error source off except what ``edit`` switches on in ``backends.emulated``."""
    data = quiet_emulated(shipped_config_dict())
    edit(data["backends"]["emulated"])
    arm = make_backend("emulated", config_node(data), kinematics, seed=seed)
    assert isinstance(arm, EmulatedEr3Pro)
    return arm


def test_quiet_arm_is_the_virtual_robot_delayed_by_its_latency(
    kinematics: Kinematics, config: ConfigNode, plan: Plan
) -> None:
    """Law: with only a latency of one sample period, sample k + 1 of the arm is sample k of MuJoCo (run at the
    emulated arm's own physics step: the virtual engines' shipped step is longer)."""
    arm = _emulated(kinematics, lambda e: e.update(command_latency_s=0.1))
    delayed = execute_trajectory(arm, kinematics, *plan)
    same_step = shipped_config_dict()
    same_step["backends"]["physics_timestep_s"] = arm.physics_timestep_s
    virtual = execute_trajectory(make_backend("mujoco", config_node(same_step), kinematics), kinematics, *plan)
    np.testing.assert_allclose(delayed.q_measured[1:], virtual.q_measured[:-1], atol=1e-9)
    np.testing.assert_allclose(delayed.actual_tip_pos_m[1:], virtual.actual_tip_pos_m[:-1], atol=1e-9)


def test_friction_leaves_a_direction_dependent_error(kinematics: Kinematics, robot_config: RobotConfig) -> None:
    friction = np.array(SHIPPED["emulated"]["dynamics"]["coulomb_friction_nm"])
    arm = _emulated(kinematics, lambda e: e["dynamics"].update(coulomb_friction_nm=friction.tolist()))
    band_rad = friction / np.array(SHIPPED["servo"]["kp_nm_per_rad"])
    target = robot_config.home_q
    error = {}
    for side in (-1.0, 1.0):
        arm.reset(target + side * 0.05)
        arm.command(target, 0.5)
        arm.advance(3.0)
        error[side] = arm.read().q_measured - target
    assert np.all(np.sign(error[-1.0]) == -np.sign(error[1.0]))  # each joint rests on the other side
    assert np.all(np.abs(error[-1.0]) <= 1.05 * band_rad)
    assert np.all(np.abs(error[1.0]) <= 1.05 * band_rad)
    assert np.all(np.abs(error[-1.0] - error[1.0]) > 0.5 * band_rad)  # a real hysteresis, of the band's size


def test_gear_torsion_sags_the_tip_by_the_gravity_torque(kinematics: Kinematics, robot_config: RobotConfig) -> None:
    """Law (first order): tip - FK(motor) = J (-g(q) / k), g from pinocchio; the encoders do not see it."""
    stiffness = np.array(SHIPPED["emulated"]["dynamics"]["joint_stiffness_nm_per_rad"])
    arm = _emulated(kinematics, lambda e: e["dynamics"].update(joint_stiffness_nm_per_rad=stiffness.tolist()))
    q = robot_config.home_q
    arm.reset(q)
    sample = arm.read()
    np.testing.assert_allclose(sample.q_measured, q, atol=1e-9)
    model = kinematics.chain.model
    gravity_nm = pin.computeGeneralizedGravity(model, model.createData(), q)
    sag_m = kinematics.tip_jacobian(q)[:3] @ (-gravity_nm / stiffness)
    assert np.linalg.norm(sag_m) > 5e-4  # the home pose loads the shoulder: a sub-millimetre-plus sag
    np.testing.assert_allclose(sample.actual_tip_pos_m - kinematics.tip_pose(q).pos_m, sag_m, atol=2e-5)


def test_encoders_and_tracker_have_the_configured_noise(kinematics: Kinematics, robot_config: RobotConfig) -> None:
    def noisy(e: dict[str, Any]) -> None:
        e["encoder"] = dict(SHIPPED["emulated"]["encoder"])
        e["tracker"] = dict(SHIPPED["emulated"]["tracker"])

    arm = _emulated(kinematics, noisy)
    q = robot_config.home_q
    arm.reset(q)
    true_pos, _ = arm.true_tip_pose()
    samples = []
    for _ in range(1500):
        arm.advance(0.001)
        samples.append(arm.read())
    encoder, tracker = SHIPPED["emulated"]["encoder"], SHIPPED["emulated"]["tracker"]
    joint_noise = np.array([s.q_measured for s in samples]) - q
    expected = np.hypot(encoder["noise_std_rad"], encoder["resolution_rad"] / np.sqrt(12.0))
    assert np.sqrt(np.mean(joint_noise**2)) == pytest.approx(expected, rel=0.05)
    tip_noise = np.array([s.actual_tip_pos_m for s in samples]) - true_pos
    np.testing.assert_allclose(tip_noise.std(axis=0), tracker["position_noise_std_m"], rtol=0.08)
    assert np.all(np.abs(tip_noise.mean(axis=0)) < 4 * tracker["position_noise_std_m"] / np.sqrt(len(samples)))


@pytest.fixture(scope="module")
def runs(config: ConfigNode, kinematics: Kinematics, plan: Plan) -> dict[str, TrajectoryRecord]:
    return {
        name: execute_trajectory(make_backend(name, config, kinematics), kinematics, *plan)
        for name in ("mujoco", "emulated")
    }


def _tip_error_m(record: TrajectoryRecord, kinematics: Kinematics) -> np.ndarray:
    expected = kinematics.record_arrays(record.q_setpoint).tip_pos_m
    return np.asarray(np.linalg.norm(record.actual_tip_pos_m - expected, axis=1))


def test_tip_errors_are_millimetres_and_larger_than_the_virtual_robot(
    runs: dict[str, TrajectoryRecord], kinematics: Kinematics
) -> None:
    virtual, physical = (_tip_error_m(runs[name], kinematics) for name in ("mujoco", "emulated"))
    assert 0.5e-3 < physical.mean() < 5e-3
    assert physical.max() < 10e-3
    assert physical.mean() > 10 * virtual.mean()
    assert np.median(physical) > np.percentile(virtual, 99)


def test_fk_of_the_encoders_misses_the_tracked_tip(runs: dict[str, TrajectoryRecord]) -> None:
    """The nominal model does not know the real geometry: FK tip and tracker tip differ, unlike in MuJoCo."""
    gap = {n: np.linalg.norm(r.actual_tip_pos_m - r.tip_pos_m, axis=1) for n, r in runs.items()}
    assert gap["mujoco"].max() < 1e-9
    assert gap["emulated"].mean() > 3e-4


def test_same_seed_same_run_other_seed_other_arm(config: ConfigNode, kinematics: Kinematics, plan: Plan) -> None:
    short = tuple(a[:40] for a in plan)
    first, again, other = (
        execute_trajectory(make_backend("emulated", config, kinematics, seed=seed), kinematics, *short)
        for seed in (7, 7, 8)
    )
    for field in ("q_measured", "actual_tip_pos_m", "actual_tip_quat_wxyz", "tip_pos_m"):
        np.testing.assert_array_equal(getattr(first, field), getattr(again, field))
        assert not np.array_equal(getattr(first, field), getattr(other, field))


def test_reseed_makes_a_case_independent_of_what_ran_before(
    kinematics: Kinematics, config: ConfigNode, plan: Plan
) -> None:
    """The batch runner reseeds per case: the same case seed gives the same run after any other run."""
    arm = make_backend("emulated", config, kinematics)
    assert isinstance(arm, EmulatedEr3Pro)
    arm.reseed(7)
    first = execute_trajectory(arm, kinematics, *plan)
    arm.reseed(8)
    other = execute_trajectory(arm, kinematics, *plan)
    arm.reseed(7)
    again = execute_trajectory(arm, kinematics, *plan)
    np.testing.assert_array_equal(again.q_measured, first.q_measured)
    np.testing.assert_array_equal(again.actual_tip_pos_m, first.actual_tip_pos_m)
    assert not np.array_equal(other.actual_tip_pos_m, first.actual_tip_pos_m)  # the noise did change
