"""Kinematic calibration: known joint offsets, ratios, couplings and lost motion recovered with X and Y from noisy
tracked poses; what the data cannot identify is held at nominal and named; too few poses is one clear error."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cosim_validation.error_injection.error_types import CalibrationError
from cosim_validation.error_injection.features import DEFAULT_DEADBAND, series_directions
from cosim_validation.error_injection.joint_map import JointMap
from cosim_validation.error_injection.kinematic_calibration import (
    KinematicCalibration,
    calibrate_kinematics,
    default_coupled,
    kinematics_poses,
)
from cosim_validation.error_injection.transforms import inverse, pose_gap
from cosim_validation.robots.model import Kinematics
from test.error_injection.synthetic import hidden_transforms, random_walk

#: The tracker's noise in these tests: 0.1 mm per axis on the marker position, 0.02 deg per axis on its rotation.
NOISE_M, NOISE_RAD = 1e-4, np.radians(0.02)


def _truth(n_joints: int, seed: int) -> JointMap:
    """An arm with mastering offsets of ~5 mrad, ratio errors of ~1 %, a wrist coupling of 0.02 and 1 mrad play."""
    rng = np.random.default_rng(seed)
    offset = rng.normal(0.0, 5e-3, n_joints)
    scale = 1.0 + rng.normal(0.0, 0.01, n_joints)
    lost = -1e-3 * np.ones(n_joints)
    return JointMap(offset, scale, ((n_joints - 2, n_joints - 1),), np.array([0.02]), lost)


def _tracked(kinematics: Kinematics, truth: JointMap, q: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Marker poses B = Y^-1 FK(m(q, d)) X with tracker noise, and the directions d of the joints' last moves."""
    rng = np.random.default_rng(seed)
    starts = np.zeros(len(q), dtype=bool)
    starts[0] = True
    moves = series_directions(np.diff(q, axis=0, prepend=q[:1]), DEFAULT_DEADBAND, starts)
    X, Y = hidden_transforms()
    B = inverse(Y) @ kinematics_poses(kinematics, truth.apply(q, moves)) @ X
    B[:, :3, :3] = B[:, :3, :3] @ Rotation.from_rotvec(rng.normal(0.0, NOISE_RAD, (len(B), 3))).as_matrix()
    B[:, :3, 3] += rng.normal(0.0, NOISE_M, (len(B), 3))
    return B, moves


def _calibrated(kinematics: Kinematics, q: np.ndarray, seed: int) -> tuple[KinematicCalibration, JointMap]:
    truth = _truth(kinematics.n_joints, seed)
    B, moves = _tracked(kinematics, truth, q, seed)
    return calibrate_kinematics(kinematics, q, B, moves), truth


def _vector(joint_map: JointMap) -> np.ndarray:
    """The parameters in :func:`parameter_names` order: offsets, scales, couplings (the last pair's), lost motion."""
    coupling = np.zeros(len(default_coupled(joint_map.n_joints)))
    for pair, value in zip(joint_map.coupled, joint_map.coupling, strict=True):
        coupling[default_coupled(joint_map.n_joints).index(pair)] = value
    lost = np.zeros(joint_map.n_joints) if joint_map.lost_motion is None else joint_map.lost_motion
    return np.concatenate([joint_map.offset, joint_map.scale, coupling, lost])


@pytest.fixture(scope="module")
def recovered(kinematics: Kinematics) -> tuple[KinematicCalibration, JointMap]:
    return _calibrated(kinematics, random_walk(kinematics, 300, seed=3, step_rad=0.1), seed=3)


def test_offsets_ratios_coupling_and_lost_motion_are_recovered_within_the_noise(
    kinematics: Kinematics, recovered: tuple[KinematicCalibration, JointMap]
) -> None:
    found, truth = recovered
    j = kinematics.n_joints
    estimate, true = _vector(found.joint_map), _vector(truth)
    error = found.standard_error
    kept = np.isfinite(error)
    assert kept.sum() == error.size - 2  # all but the first and last offsets (next test)
    # every estimated parameter within 4 of its standard errors of the truth, and those small: the noise's
    assert (np.abs(estimate - true)[kept] < 4.0 * error[kept]).all()
    assert error[1 : j - 1].max() < 1e-3  # offsets [rad], against 5 mrad drawn
    assert error[j : 2 * j].max() < 2e-3  # ratios, against 1 % drawn
    assert error[2 * j + 1] < 2e-3  # the wrist coupling, 0.02
    assert error[-j:].max() < 1e-4  # lost motion [rad], 1 mrad
    assert abs(found.joint_map.coupling[-1] - 0.02) < 2e-3
    # the residual falls from millimetres to the tracker's noise (mean |3-D noise| = 1.6 x its per-axis std)
    before, after = found.nominal.translation_residual_m.mean(), found.hand_eye.translation_residual_m.mean()
    assert before > 1e-3
    assert after < 1.3 * 1.6 * NOISE_M
    assert found.hand_eye.rotation_residual_rad.mean() < 1.3 * 1.6 * NOISE_RAD


def test_the_offsets_that_x_and_y_absorb_are_held_at_nominal_and_named(
    kinematics: Kinematics, recovered: tuple[KinematicCalibration, JointMap]
) -> None:
    found, truth = recovered
    first, last = kinematics.joint_names[0], kinematics.joint_names[-1]
    assert found.held == (f"offset {first}", f"offset {last}")
    assert found.joint_map.offset[0] == 0.0
    assert found.joint_map.offset[-1] == 0.0
    # and the model with its X and Y still predicts what the tracker sees, on poses it was not fitted to
    X, Y = hidden_transforms()
    q = random_walk(kinematics, 50, seed=9)
    moves = np.zeros_like(q)
    seen = inverse(Y) @ kinematics_poses(kinematics, truth.apply(q, moves)) @ X
    model = found.joint_map.apply(q, moves)
    predicted = inverse(found.hand_eye.Y) @ kinematics_poses(kinematics, model) @ found.hand_eye.X
    t_m, r_rad = pose_gap(seen, predicted)
    assert t_m.max() < NOISE_M
    assert r_rad.max() < NOISE_RAD


def test_a_joint_the_data_never_moves_has_its_ratio_and_lost_motion_held_at_nominal(kinematics: Kinematics) -> None:
    q = random_walk(kinematics, 250, seed=4, step_rad=0.1)
    q[:, 3] = q[0, 3]  # joint 4 stays where it started
    found, _ = _calibrated(kinematics, q, seed=4)
    name = kinematics.joint_names[3]
    assert f"scale {name}" in found.held
    assert f"lost motion {name}" in found.held
    assert f"offset {name}" in found.estimated  # its offset still tilts the links after it
    assert found.joint_map.scale[3] == 1.0
    assert found.joint_map.lost_motion[3] == 0.0


def test_too_few_poses_for_the_parameters_is_one_error_naming_the_numbers(kinematics: Kinematics) -> None:
    q = random_walk(kinematics, 40, seed=5, step_rad=0.1)
    B, moves = _tracked(kinematics, _truth(kinematics.n_joints, 5), q, 5)
    with pytest.raises(CalibrationError) as raised:
        calibrate_kinematics(kinematics, q, B, moves)
    j = kinematics.n_joints
    n_parameters = 3 * j + 2 + 12
    assert str(raised.value) == (
        f"kinematic calibration: 40 tracked poses for {n_parameters} parameters ({j} joint offsets, {j} ratios, "
        f"2 couplings, {j} lost motions, X and Y); at least {2 * n_parameters} are needed (2 per parameter)"
    )
