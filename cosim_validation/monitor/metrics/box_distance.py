"""Distance from points to an axis-aligned box: a lower bound of the distance to anything inside it."""

from __future__ import annotations

import numpy as np


def box_distance_m(bounds_m: np.ndarray, points_m: np.ndarray) -> np.ndarray:
    """Distance of each point to the axis-aligned box ``bounds_m``; 0 inside.

    A lower bound of the distance to anything inside the box (a mesh's bounding box: a point farther than a
    margin from the box is farther than it from the mesh).

    Args:
        bounds_m: Minimum and maximum corner of the box, shape (2, 3), in [m].
        points_m: Points in the box's frame, shape (..., 3), in [m].

    Returns:
        The distances, shape (...), float64, in [m].
    """
    gap = np.maximum(np.maximum(bounds_m[0] - points_m, points_m - bounds_m[1]), 0.0)
    return np.asarray(np.sqrt(np.sum(gap * gap, axis=-1)))
