"""Quaternion helpers: unit results, composition of rotations about one axis, the w >= 0 convention."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.robots.virtual.quaternion import canonical, quat_from_rotvec, quat_multiply


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


@pytest.mark.parametrize(
    "quat", [np.array([-0.5, 0.5, -0.5, 0.5]), np.array([2.0, 0.0, 0.0, 0.0]), np.array([0.1, -3, 0, 1])]
)
def test_canonical_is_the_same_rotation_with_w_nonnegative(quat: np.ndarray) -> None:
    c = canonical(quat)
    assert c[0] >= 0.0
    assert np.linalg.norm(c) == pytest.approx(1.0)
    assert abs(c @ quat / np.linalg.norm(quat)) == pytest.approx(1.0)
