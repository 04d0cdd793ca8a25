"""Discrete Fréchet distance between two trajectories ([Actuators 2025]'s t2t) and its decision version.

See :mod:`cosim_validation.monitor.metrics.frechet_kernels` for the definition and the algorithm. Both functions
take (n, d) and (m, d) arrays of any d >= 1 and any lengths n, m >= 1.

Defined results for degenerate input: a one-point trajectory is coupled with every point of the other, so
``frechet([p], Q) == max_j |p - Q[j]|``; identical trajectories give 0.0. Empty trajectories, mismatched d,
NaN or infinite coordinates, non-numeric dtypes raise :class:`MetricInputError`. Integer and
non-contiguous arrays are converted (copied) to C-contiguous float64.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosim_validation.monitor.metrics.arrays import as_distance, as_points, same_dimension
from cosim_validation.monitor.metrics.frechet_kernels import frechet_sq, within_sq
from cosim_validation.monitor.metrics.trajectory_batch import pack_columns


def squared_threshold(eps_m: float, name: str = "eps_m") -> float:
    """The largest float T with ``math.sqrt(T) <= eps_m``.

    Comparing squared values against T decides ``sqrt(value) <= eps_m`` exactly as the distance functions
    (which return the correctly rounded square root) would, so ``within(P, Q, frechet(P, Q))`` is True.

    Args:
        eps_m: Distance threshold >= 0, in the unit of the coordinates, usually [m].
        name: Argument name for the error message.

    Raises:
        MetricInputError: ``eps_m`` is negative, NaN or infinite.
    """
    eps = as_distance(name, eps_m)
    T = eps * eps
    while T > 0.0 and math.sqrt(T) > eps:
        T = math.nextafter(T, 0.0)
    while math.sqrt(math.nextafter(T, math.inf)) <= eps:
        T = math.nextafter(T, math.inf)
    return T


def pack_pair(P: ArrayLike, Q: ArrayLike) -> tuple[NDArray[np.float64], int, int]:
    """Check P and Q and pack the shorter one first: (coords (max(d,3), n+m), n_first, n_second).

    Args:
        P: (n, d) points of the first trajectory, n >= 1.
        Q: (m, d) points of the second trajectory, m >= 1, same d.

    Raises:
        MetricInputError: An empty trajectory, mismatched d, NaN/inf, a non-numeric dtype.
    """
    P_arr = as_points("P", P)
    Q_arr = as_points("Q", Q)
    same_dimension("P", P_arr, "Q", Q_arr)
    if P_arr.shape[0] > Q_arr.shape[0]:
        P_arr, Q_arr = Q_arr, P_arr
    return pack_columns((P_arr, Q_arr), P_arr.shape[1]), P_arr.shape[0], Q_arr.shape[0]


def frechet(P: ArrayLike, Q: ArrayLike) -> float:
    """Discrete Fréchet distance between two trajectories.

    Args:
        P: (n, d) points of the first trajectory, n >= 1, e.g. needle-tip positions in base_link [m].
        Q: (m, d) points of the second trajectory, m >= 1, same d and frame.

    Returns:
        The distance in the unit of the coordinates. O(n m) time, O(min(n, m)) memory.

    Raises:
        MetricInputError: See the module docstring.
    """
    X, n, m = pack_pair(P, Q)
    return math.sqrt(frechet_sq(X, 0, n, X, n, m))


def within(P: ArrayLike, Q: ArrayLike, eps_m: float) -> bool:
    """Whether ``frechet(P, Q) <= eps_m``, usually much faster than computing the distance.

    Decides by the endpoint lower bound, a greedy-coupling upper bound, and otherwise the dynamic
    programme restricted to cells reachable within eps_m, abandoned as soon as no coupling can stay within.
    The answer always equals ``frechet(P, Q) <= eps_m``.

    Args:
        P: (n, d) first trajectory.
        Q: (m, d) second trajectory, same d.
        eps_m: Threshold >= 0 in the unit of the coordinates.
    """
    T = squared_threshold(eps_m)
    X, n, m = pack_pair(P, Q)
    return bool(within_sq(X, 0, n, X, n, m, T))
