"""The tracker: unbiased, with the configured spread in position and orientation."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.robots.emulated.emulated_config import TrackerConfig
from cosim_validation.robots.emulated.external_tracker import ExternalTracker
from cosim_validation.robots.virtual.quaternion import quat_from_rotvec, quat_multiply

N = 3000


def _conjugate(q: np.ndarray) -> np.ndarray:
    return np.array([q[0], -q[1], -q[2], -q[3]])


def test_orientation_keeps_the_record_convention() -> None:
    tracker = ExternalTracker(TrackerConfig(0.0, 0.3), np.random.default_rng(1))
    for _ in range(50):
        _, quat = tracker.measure(np.zeros(3), np.array([0.0, 1.0, 0.0, 0.0]))
        assert quat[0] >= 0.0
        assert np.linalg.norm(quat) == pytest.approx(1.0)


def test_noise_matches_its_configuration() -> None:
    sigma_p, sigma_r = 2e-4, 5e-4
    tracker = ExternalTracker(TrackerConfig(sigma_p, sigma_r), np.random.default_rng(5))
    true_pos = np.array([0.4, -0.1, 0.3])
    true_quat = quat_from_rotvec(np.array([2.0, 0.5, -0.3]))
    positions, rotvecs = [], []
    for _ in range(N):
        pos, quat = tracker.measure(true_pos, true_quat)
        positions.append(pos)
        delta = quat_multiply(_conjugate(true_quat), quat)  # noise in the tip frame
        rotvecs.append(2.0 * delta[1:] * np.sign(delta[0]))
    errors, rot = np.array(positions) - true_pos, np.array(rotvecs)
    # relative std of a standard-deviation estimate from N samples ~ 1/sqrt(2N) = 1.3 %
    np.testing.assert_allclose(errors.std(axis=0), sigma_p, rtol=0.06)
    np.testing.assert_allclose(rot.std(axis=0), sigma_r, rtol=0.06)
    assert np.all(np.abs(errors.mean(axis=0)) < 4 * sigma_p / np.sqrt(N))
    assert np.all(np.abs(rot.mean(axis=0)) < 4 * sigma_r / np.sqrt(N))


def test_a_frame_is_the_true_pose_moved_by_its_own_draws() -> None:
    """Each frame, recomputed with scipy from the same generator's draws (position noise, then the rotation noise's
    rotation vector, applied in the tip's frame)."""
    from scipy.spatial.transform import Rotation

    tracker, replay = ExternalTracker(TrackerConfig(2e-4, 5e-3), np.random.default_rng(3)), np.random.default_rng(3)
    rng = np.random.default_rng(8)
    for _ in range(40):
        true_pos, true_rot = rng.normal(0.0, 0.3, 3), Rotation.from_rotvec(rng.normal(0.0, 1.5, 3))
        x, y, z, w = true_rot.as_quat()
        pos, quat = tracker.measure(true_pos, np.array([w, x, y, z]))
        np.testing.assert_allclose(pos, true_pos + replay.normal(0.0, 2e-4, 3), rtol=0, atol=1e-15)
        x, y, z, w = (true_rot * Rotation.from_rotvec(replay.normal(0.0, 5e-3, 3))).as_quat()
        np.testing.assert_allclose(quat, np.array([w, x, y, z]) * np.sign(w), rtol=0, atol=1e-12)
