"""The tracker: unbiased, with the configured spread in position and orientation; quaternion helpers."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.hardware.emulated_config import TrackerConfig
from cosim_validation.hardware.external_tracker import ExternalTracker, quat_from_rotvec, quat_multiply

N = 3000


def _conjugate(q: np.ndarray) -> np.ndarray:
    return np.array([q[0], -q[1], -q[2], -q[3]])


@pytest.mark.parametrize("rotvec", [np.zeros(3), np.array([1e-13, 0, 0]), np.array([0.3, -1.2, 2.0])])
def test_rotvec_quaternion_is_unit_and_has_the_angle(rotvec: np.ndarray) -> None:
    q = quat_from_rotvec(rotvec)
    assert np.linalg.norm(q) == pytest.approx(1.0, abs=1e-15)
    assert 2 * np.arccos(np.clip(q[0], -1, 1)) == pytest.approx(np.linalg.norm(rotvec), abs=1e-7)


def test_multiplying_by_the_conjugate_gives_identity() -> None:
    q = quat_from_rotvec(np.array([0.4, 0.1, -0.9]))
    np.testing.assert_allclose(quat_multiply(q, _conjugate(q)), [1, 0, 0, 0], atol=1e-15)
    a, b = quat_from_rotvec(np.array([0.0, 0.0, 0.3])), quat_from_rotvec(np.array([0.0, 0.0, 0.5]))
    np.testing.assert_allclose(quat_multiply(a, b), quat_from_rotvec(np.array([0.0, 0.0, 0.8])), atol=1e-15)


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
