"""Hand-eye calibration AX = YB: known transforms recovered under tracker noise; degenerate motion refused."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cosim_validation.error_injection.error_types import CalibrationError
from cosim_validation.error_injection.hand_eye import calibrate, solve_closed_form
from cosim_validation.error_injection.transforms import from_rotation, inverse, pose_gap


def _transform(rotvec: list[float], position_m: list[float]) -> np.ndarray:
    T: np.ndarray = from_rotation(Rotation.from_rotvec(rotvec).as_matrix(), np.array(position_m))[0]
    return T


# the hidden truth: a marker 4 cm off the flange, tilted; a tracker 1.5 m in front of the robot, facing it
X_TRUE = _transform([0.3, -0.2, 0.9], [0.04, -0.01, 0.06])
Y_TRUE = _transform([0.1, 2.8, -0.4], [1.5, 0.2, 0.6])


def _pairs(A: np.ndarray, noise_m: float, noise_rad: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Tracker readings B_i = Y^-1 A_i X with noise on the marker's position and orientation."""
    rng = np.random.default_rng(seed)
    B = inverse(Y_TRUE) @ A @ X_TRUE
    jitter = Rotation.from_rotvec(rng.normal(0.0, noise_rad, size=(len(A), 3))).as_matrix()
    B[:, :3, :3] = B[:, :3, :3] @ jitter
    B[:, :3, 3] += rng.normal(0.0, noise_m, size=(len(A), 3))
    return A, B


def _random_tool_poses(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    R = Rotation.from_rotvec(rng.uniform(-0.8, 0.8, size=(n, 3))).as_matrix()
    return from_rotation(R, rng.uniform([0.2, -0.3, 0.1], [0.6, 0.3, 0.6], size=(n, 3)))


def _errors(found: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    t, r = pose_gap(found[None], truth[None])
    return float(t[0]), float(r[0])


def test_exact_poses_give_the_exact_transforms() -> None:
    result = calibrate(*_pairs(_random_tool_poses(20, 0), 0.0, 0.0, 0), refined=False)
    for found, truth in ((result.X, X_TRUE), (result.Y, Y_TRUE)):
        t_m, r_rad = _errors(found, truth)
        assert t_m < 1e-9
        assert r_rad < 1e-7
    assert result.translation_residual_m.max() < 1e-9


def test_tracker_noise_leaves_a_small_recovery_error_and_refinement_reduces_it() -> None:
    # 0.1 mm and 0.05 deg of tracker noise, 200 poses: X and Y within 0.1 mm / 0.05 deg (see docs/ERRORS.md)
    A, B = _pairs(_random_tool_poses(200, 1), 1e-4, np.radians(0.05), 1)
    closed, refined = calibrate(A, B, refined=False), calibrate(A, B)
    assert refined.method == "shah+refined"
    for found, truth in ((refined.X, X_TRUE), (refined.Y, Y_TRUE)):
        t_m, r_rad = _errors(found, truth)
        assert t_m < 1e-4
        assert np.degrees(r_rad) < 0.05
    assert refined.translation_residual_m.mean() <= closed.translation_residual_m.mean() + 1e-12
    assert 5e-5 < refined.translation_residual_m.mean() < 3e-4  # the residual shows the noise, not less


def test_actual_tool_poses_come_back_from_marker_poses() -> None:
    A, B = _pairs(_random_tool_poses(30, 2), 0.0, 0.0, 2)
    np.testing.assert_allclose(calibrate(A, B).actual_tool_poses(B), A, atol=1e-9)


def test_rotation_about_one_axis_only_is_refused() -> None:
    rng = np.random.default_rng(3)
    angles = rng.uniform(-1.5, 1.5, size=40)
    R = Rotation.from_rotvec(np.outer(angles, [0.0, 0.0, 1.0])).as_matrix()
    A = from_rotation(R, rng.uniform(-0.3, 0.3, size=(40, 3)))
    with pytest.raises(CalibrationError, match="rotate the tool about at least two different axes"):
        solve_closed_form(*_pairs(A, 0.0, 0.0, 3))


def test_pure_translation_is_refused() -> None:
    A = from_rotation(np.tile(np.eye(3), (30, 1, 1)), np.random.default_rng(4).uniform(-0.3, 0.3, size=(30, 3)))
    with pytest.raises(CalibrationError, match="leaves the hand-eye rotation open"):
        solve_closed_form(*_pairs(A, 0.0, 0.0, 4))


def test_too_few_or_non_finite_poses_are_refused() -> None:
    A, B = _pairs(_random_tool_poses(12, 5), 0.0, 0.0, 5)
    with pytest.raises(CalibrationError, match="5 pose pairs, at least 10"):
        calibrate(A[:5], B[:5])
    B[3, 0, 3] = np.nan
    with pytest.raises(CalibrationError, match="not all finite"):
        calibrate(A, B)
    with pytest.raises(CalibrationError, match="two \\(n, 4, 4\\) stacks"):
        calibrate(A, B[:-1])


@pytest.mark.parametrize("refined", [False, True])
def test_a_tracker_that_did_not_follow_the_tool_is_refused(refined: bool) -> None:
    """A frozen tracker (every marker pose the first one): the kinematic calibration fitted every joint ratio to 0
    and printed a residual of 0.000 mm, exit 0."""
    A, B = _pairs(_random_tool_poses(30, seed=5), 0.0, 0.0, seed=5)
    frozen = np.broadcast_to(B[0], B.shape).copy()
    with pytest.raises(CalibrationError, match=r"the tracked marker did not move \(within 0 mm and 0 deg over 30"):
        calibrate(A, frozen, refined=refined)
    calibrate(A, B, refined=refined)  # the same tool poses with a marker that follows: calibrated
