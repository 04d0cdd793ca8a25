"""The distance to an axis-aligned box: 0 inside, the face, edge or corner distance outside, any leading shape."""

from __future__ import annotations

import numpy as np

from cosim_validation.monitor.metrics import box_distance_m

BOX = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]])


def test_inside_faces_edges_and_corners() -> None:
    points = np.array([[0.5, 1.0, 1.5], [1.0, 2.0, 3.0], [1.5, 1.0, 1.5], [-0.3, -0.4, 1.0], [2.0, 4.0, 5.0]])
    np.testing.assert_allclose(box_distance_m(BOX, points), [0.0, 0.0, 0.5, 0.5, 3.0])


def test_a_lower_bound_of_the_distance_to_every_point_inside() -> None:
    rng = np.random.default_rng(3)
    outside = rng.uniform(-2.0, 5.0, (200, 3))
    inside = rng.uniform(BOX[0], BOX[1], (500, 3))
    nearest = np.linalg.norm(outside[:, None, :] - inside[None, :, :], axis=-1).min(axis=1)
    assert (box_distance_m(BOX, outside) <= nearest + 1e-12).all()


def test_any_leading_shape() -> None:
    grid = np.zeros((4, 5, 3)) + np.array([2.0, 1.0, 1.0])
    assert box_distance_m(BOX, grid).shape == (4, 5)
    np.testing.assert_allclose(box_distance_m(BOX, grid), 1.0)
