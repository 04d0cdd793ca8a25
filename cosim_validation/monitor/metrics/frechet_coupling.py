"""An optimal coupling of the discrete Fréchet distance, for plots and explanations.

The coupling is the sequence of index pairs (i, j) of [Actuators 2025]'s definition whose largest coupled distance
is the Fréchet distance. It needs the whole table of predecessor choices: O(n m) bytes (one uint8 per
cell; 4 MB for n = m = 2000) on top of O(n m) time, so it is for showing one pair, not for campaigns
(use :func:`cosim_validation.monitor.metrics.frechet` there).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray

from cosim_validation.monitor.metrics.arrays import as_points, same_dimension
from cosim_validation.monitor.metrics.frechet_kernels import sq_dist
from cosim_validation.monitor.metrics.trajectory_batch import pack_columns

_DIAGONAL, _UP, _LEFT = 0, 1, 2


class FrechetCoupling(NamedTuple):
    """Discrete Fréchet distance and one optimal coupling.

    Attributes:
        distance: The distance, equal to ``frechet(P, Q)`` (same squared distances, same rounding).
        index_pairs: (L, 2) int64 pairs (i into P, j into Q) from (0, 0) to (n-1, m-1), each step advancing
            i, j or both by one; max(n, m) <= L <= n + m - 1.
        argmax: Row of ``index_pairs`` whose coupled points are farthest apart (the bottleneck).
    """

    distance: float
    index_pairs: NDArray[np.int64]
    argmax: int


@njit(cache=True)
def _choices(XP: np.ndarray, n: int, XQ: np.ndarray, q0: int, m: int) -> tuple[float, np.ndarray]:
    """Row-by-row dynamic programme keeping the chosen predecessor of every cell (diagonal first on ties)."""
    choice = np.empty((n, m), dtype=np.uint8)
    prev = np.empty(m)
    cur = np.empty(m)
    for i in range(n):
        for j in range(m):
            d = sq_dist(XP, i, XQ, q0 + j)
            if i == 0 and j == 0:
                best, how = 0.0, _DIAGONAL
            elif i == 0:
                best, how = cur[j - 1], _LEFT
            elif j == 0:
                best, how = prev[0], _UP
            else:
                best, how = prev[j - 1], _DIAGONAL
                if prev[j] < best:
                    best, how = prev[j], _UP
                if cur[j - 1] < best:
                    best, how = cur[j - 1], _LEFT
            cur[j] = d if d > best else best
            choice[i, j] = how
        prev, cur = cur, prev
    return prev[m - 1], choice


@njit(cache=True)
def _backtrack(choice: np.ndarray) -> np.ndarray:
    n, m = choice.shape
    path = np.empty((n + m - 1, 2), dtype=np.int64)
    i, j, k = n - 1, m - 1, n + m - 2
    path[k, 0], path[k, 1] = i, j
    while i > 0 or j > 0:
        how = choice[i, j]
        if how == _DIAGONAL:
            i, j = i - 1, j - 1
        elif how == _UP:
            i -= 1
        else:
            j -= 1
        k -= 1
        path[k, 0], path[k, 1] = i, j
    return path[k:].copy()


def frechet_coupling(P: ArrayLike, Q: ArrayLike) -> FrechetCoupling:
    """Discrete Fréchet distance of P and Q with an optimal coupling.

    Args:
        P: (n, d) first trajectory, n >= 1.
        Q: (m, d) second trajectory, same d.

    Returns:
        :class:`FrechetCoupling`; ``index_pairs[:, 0]`` indexes P and ``index_pairs[:, 1]`` indexes Q.
    """
    P_arr = as_points("P", P)
    Q_arr = as_points("Q", Q)
    same_dimension("P", P_arr, "Q", Q_arr)
    n, m = P_arr.shape[0], Q_arr.shape[0]
    X = pack_columns((P_arr, Q_arr), P_arr.shape[1])
    d2, choice = _choices(X, n, X, n, m)
    pairs = _backtrack(choice)
    gaps = ((X[:, pairs[:, 0]] - X[:, n + pairs[:, 1]]) ** 2).sum(axis=0)
    return FrechetCoupling(math.sqrt(d2), pairs, int(np.argmax(gaps)))
