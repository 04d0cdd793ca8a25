"""Choosing the samples of a motion to check, so that the unchecked ones are provably close to a checked one."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def covering_indices(points: np.ndarray, step: float) -> np.ndarray:
    """Indices of samples such that every sample lies within ``step`` of the last chosen one before it.

    Args:
        points: (n, P, 3) positions of P points at n samples [m] (or joint vectors as (n, J, 1) [rad]).
        step: Largest displacement of any point from the last chosen sample [m].

    Returns:
        (k,) increasing int64 indices, first 0 and last n - 1.
    """
    n = points.shape[0]
    chosen = np.empty(n, dtype=np.int64)
    chosen[0] = 0
    k = 1
    last = 0
    for i in range(1, n):
        largest = 0.0
        for p in range(points.shape[1]):
            d = 0.0
            for c in range(points.shape[2]):
                diff = points[i, p, c] - points[last, p, c]
                d += diff * diff
            largest = max(largest, d)
        if np.sqrt(largest) > step or i == n - 1:
            chosen[k] = i
            k += 1
            last = i
    return chosen[:k]


def box_distance(points_m: np.ndarray, bounds_m: np.ndarray) -> np.ndarray:
    """(...,) distance of points (..., 3) to the axis-aligned box ``bounds_m`` (2, 3) [m], 0 inside.

    A lower bound of the distance to anything inside the box.

    Args:
        points_m: Points, shape (..., 3), in [m], in the box's frame.
        bounds_m: Minimum and maximum corner of the box, shape (2, 3), in [m].
    """
    below = np.maximum(bounds_m[0] - points_m, 0.0)
    above = np.maximum(points_m - bounds_m[1], 0.0)
    return np.asarray(np.linalg.norm(np.maximum(below, above), axis=-1))
