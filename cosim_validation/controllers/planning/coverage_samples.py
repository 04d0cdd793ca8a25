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
