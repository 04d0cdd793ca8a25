"""The drawn real arm: its geometry errors have the configured spread and move the tip as they should."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.robots.emulated.arm_perturbation import ArmPerturbation
from cosim_validation.robots.emulated.emulated_config import EmulatedArmConfig
from cosim_validation.robots.emulated.emulated_er3_pro import EmulatedEr3Pro
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.robots.registry import make_backend
from test.robots.virtual.plans import config_node, quiet_emulated, shipped_config_dict

N_ARMS = 400


def _arms(kinematics: Kinematics, seeds: Iterable[int], **kinematic_std: float) -> Iterator[EmulatedEr3Pro]:
    """Arms with only geometry errors (the given standard deviations), one per seed."""
    data = quiet_emulated(shipped_config_dict())
    data["backends"]["emulated"]["kinematics"].update(kinematic_std)
    data["backends"]["emulated"]["reset_settle_s"] = 0.0
    node = config_node(data)
    for seed in seeds:
        arm = make_backend("emulated", node, kinematics, seed=seed)
        assert isinstance(arm, EmulatedEr3Pro)
        yield arm


def _true_tip(arm: EmulatedEr3Pro, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    arm.reset(q)
    return arm.true_tip_pose()


def test_draws_have_the_configured_spread(config: ConfigNode) -> None:
    shipped = shipped_config_dict()["backends"]["emulated"]
    emulated = EmulatedArmConfig.from_config(config["backends"]["emulated"])
    bodies = tuple(f"body{i}" for i in range(8))
    draws = [
        ArmPerturbation.draw(emulated.kinematics, emulated.dynamics, 7, bodies, np.random.default_rng(s))
        for s in range(N_ARMS)
    ]
    zero = np.array([d.joint_zero_offset_rad for d in draws])
    length = np.array([d.link_length_error_m for d in draws])
    scale = np.array([d.mass_scale for d in draws])
    # N * 7 draws: relative std of a spread estimate ~ 1/sqrt(2 * 2800) = 1.3 %; masses: N * 8 draws
    assert zero.std() == pytest.approx(shipped["kinematics"]["joint_zero_offset_std_rad"], rel=0.06)
    assert length.std() == pytest.approx(shipped["kinematics"]["link_length_error_std_m"], rel=0.06)
    assert (scale - 1).std() == pytest.approx(shipped["dynamics"]["link_mass_error_rel_std"], rel=0.06)
    assert abs(zero.mean()) < 4 * zero.std() / np.sqrt(zero.size)


def test_zero_offsets_shift_the_joints(kinematics: Kinematics, robot_config: RobotConfig) -> None:
    """Law: the real arm at encoder angles q is the nominal arm at q + offsets."""
    (arm,) = _arms(kinematics, [3], joint_zero_offset_std_rad=1e-2)
    q = robot_config.home_q
    pos, quat = _true_tip(arm, q)
    nominal = kinematics.record_arrays(q + arm.perturbation.joint_zero_offset_rad)
    np.testing.assert_allclose(pos, nominal.tip_pos_m[0], atol=1e-9)
    np.testing.assert_allclose(np.abs(quat @ nominal.tip_quat_wxyz[0]), 1.0, atol=1e-12)


def test_needle_error_moves_the_tip_along_the_needle(kinematics: Kinematics, robot_config: RobotConfig) -> None:
    (arm,) = _arms(kinematics, [4], needle_length_error_std_m=2e-3)
    q = robot_config.home_q
    pos, _ = _true_tip(arm, q)
    pose = kinematics.tip_pose(q)
    np.testing.assert_allclose(pos - pose.pos_m, arm.perturbation.needle_length_error_m * pose.axis, atol=1e-10)


def test_tip_error_spread_matches_first_order_prediction(kinematics: Kinematics, robot_config: RobotConfig) -> None:
    """Over many arms, E|tip error|^2 = s_zero^2 sum_i |a_i x (p_tip - p_i)|^2 + J s_len^2 + s_needle^2."""
    std = shipped_config_dict()["backends"]["emulated"]["kinematics"]
    q = robot_config.home_q
    frames = kinematics.record_arrays(q)
    lever = np.cross(frames.joint_axis[0], frames.tip_pos_m[0] - frames.joint_pos_m[0])
    predicted = (
        std["joint_zero_offset_std_rad"] ** 2 * np.sum(lever**2)
        + kinematics.n_joints * std["link_length_error_std_m"] ** 2
        + std["needle_length_error_std_m"] ** 2
    )
    errors = np.array([_true_tip(arm, q)[0] - frames.tip_pos_m[0] for arm in _arms(kinematics, range(N_ARMS), **std)])
    observed = np.mean(np.sum(errors**2, axis=1))
    # |error|^2 over N arms: relative std of the mean ~ sqrt(2 tr(C^2)) / tr(C) / sqrt(N), about 4 % here
    assert observed == pytest.approx(predicted, rel=0.12)
    assert 2e-4 < np.sqrt(predicted) < 2e-3  # sub-millimetre to millimetre, as configured
