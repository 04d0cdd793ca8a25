"""Poses from xyz and roll-pitch-yaw follow REP 103 (fixed axes x, y, z)."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.anatomy import pose_matrix, rotation_rpy, transform_points

ANGLES = [(0.0, 0.0, 0.0), (0.3, -1.1, 2.5), (np.pi, 0.2, -0.7), (-2.0, 1.5, 0.1)]


@pytest.mark.parametrize("rpy", ANGLES)
def test_rotation_is_proper_orthonormal(rpy: tuple[float, float, float]) -> None:
    R = rotation_rpy(np.array(rpy))
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-12)
    assert np.linalg.det(R) == pytest.approx(1.0)


@pytest.mark.parametrize("rpy", ANGLES)
def test_rotation_is_yaw_after_pitch_after_roll(rpy: tuple[float, float, float]) -> None:
    r, p, y = rpy
    composed = rotation_rpy(np.array([0, 0, y])) @ rotation_rpy(np.array([0, p, 0])) @ rotation_rpy(np.array([r, 0, 0]))
    np.testing.assert_allclose(rotation_rpy(np.array(rpy)), composed, atol=1e-12)


def test_single_axis_rotations_turn_the_right_way() -> None:
    np.testing.assert_allclose(rotation_rpy(np.array([0, 0, np.pi / 2])) @ [1, 0, 0], [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(rotation_rpy(np.array([np.pi / 2, 0, 0])) @ [0, 1, 0], [0, 0, 1], atol=1e-12)
    np.testing.assert_allclose(rotation_rpy(np.array([0, np.pi / 2, 0])) @ [0, 0, 1], [1, 0, 0], atol=1e-12)


def test_transform_points_rotates_then_translates() -> None:
    T = pose_matrix(np.array([1.0, 2.0, 3.0]), np.array([0.0, 0.0, np.pi]))
    np.testing.assert_allclose(transform_points(T, np.array([[1.0, 1.0, 1.0]])), [[0.0, 1.0, 4.0]], atol=1e-12)
