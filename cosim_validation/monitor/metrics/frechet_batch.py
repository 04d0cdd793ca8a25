"""Discrete Fréchet over many trajectory pairs, in parallel over the cores (numba ``prange``).

Two shapes of question:

- pairs: ``first[i]`` against ``second[i]`` for i < k (e.g. the expected trajectory of every case against
  the one the virtual robot flew);
- all pairs within a group: every trajectory of one group against every other (e.g. all trajectories of
  one coverage cube, [Actuators 2025]'s trajectory-diversity figure), a symmetric (k, k) matrix.

Each has a value version (``frechet_*``) and a threshold version (``within_*``). The threshold version
prunes: a pair whose coupled endpoints are already farther apart than eps is answered in O(1), one whose
greedy coupling stays within eps in O(n + m), and only the rest run the band-restricted dynamic programme
(see :func:`cosim_validation.monitor.metrics.frechet_kernels.within_sq`). Pairs are handed to threads one at a time
(dynamic chunks of one), so trajectories of very different lengths do not leave a core idle.

Arguments are :class:`TrajectoryBatch` objects (pack once, query many times) or sequences of (n_i, d)
arrays; the same rules as :func:`cosim_validation.monitor.metrics.frechet` apply to every trajectory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numba
import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from cosim_validation.monitor.metrics.errors import MetricInputError
from cosim_validation.monitor.metrics.frechet import squared_threshold
from cosim_validation.monitor.metrics.frechet_kernels import frechet_sq, within_sq
from cosim_validation.monitor.metrics.trajectory_batch import TrajectoryBatch, as_batch

Trajectories = TrajectoryBatch | Sequence[ArrayLike] | NDArray[Any]


@njit(cache=True, parallel=True)
def _frechet_many(
    XA: np.ndarray, oa: np.ndarray, XB: np.ndarray, ob: np.ndarray, ia: np.ndarray, ib: np.ndarray
) -> np.ndarray:
    """sqrt(frechet_sq) of trajectory ia[t] of A against ib[t] of B, for every t, in parallel."""
    out = np.empty(ia.shape[0])
    for t in prange(ia.shape[0]):
        p0, n = oa[ia[t]], oa[ia[t] + 1] - oa[ia[t]]
        q0, m = ob[ib[t]], ob[ib[t] + 1] - ob[ib[t]]
        if n <= m:
            out[t] = np.sqrt(frechet_sq(XA, p0, n, XB, q0, m))
        else:
            out[t] = np.sqrt(frechet_sq(XB, q0, m, XA, p0, n))
    return out


@njit(cache=True, parallel=True)
def _within_many(
    XA: np.ndarray, oa: np.ndarray, XB: np.ndarray, ob: np.ndarray, ia: np.ndarray, ib: np.ndarray, T: float
) -> np.ndarray:
    """within_sq of trajectory ia[t] of A against ib[t] of B, for every t, in parallel."""
    out = np.empty(ia.shape[0], dtype=np.bool_)
    for t in prange(ia.shape[0]):
        p0, n = oa[ia[t]], oa[ia[t] + 1] - oa[ia[t]]
        q0, m = ob[ib[t]], ob[ib[t] + 1] - ob[ib[t]]
        if n <= m:
            out[t] = within_sq(XA, p0, n, XB, q0, m, T)
        else:
            out[t] = within_sq(XB, q0, m, XA, p0, n, T)
    return out


def _pair_batches(first: Trajectories, second: Trajectories) -> tuple[TrajectoryBatch, TrajectoryBatch]:
    a = as_batch(first, "first")
    b = as_batch(second, "second")
    if len(a) != len(b):
        raise MetricInputError(f"first and second must hold as many trajectories, got {len(a)} and {len(b)}")
    if a.dim != b.dim:
        raise MetricInputError(f"first and second must have the same dimension, got {a.dim} and {b.dim}")
    return a, b


#: DP cells below which a batch runs on one thread (about 1 ms of work; waking threads is not free).
PARALLEL_CELLS = 1 << 22


def _run(kernel: Any, cells: int, *args: Any) -> Any:
    """Call a parallel kernel with dynamic scheduling (chunks of one pair), on one thread for small work."""
    old_chunk = numba.set_parallel_chunksize(1)
    old_threads = numba.get_num_threads()
    if cells < PARALLEL_CELLS:
        numba.set_num_threads(1)
    try:
        return kernel(*args)
    finally:
        numba.set_num_threads(old_threads)
        numba.set_parallel_chunksize(old_chunk)


def _cells(a: TrajectoryBatch, ia: NDArray[np.int64], b: TrajectoryBatch, ib: NDArray[np.int64]) -> int:
    """Number of DP cells of the pairs (a[ia[t]], b[ib[t]])."""
    return int(np.dot(a.lengths()[ia].astype(np.float64), b.lengths()[ib].astype(np.float64)))


def frechet_pairs(first: Trajectories, second: Trajectories) -> NDArray[np.float64]:
    """Discrete Fréchet distance of ``first[i]`` and ``second[i]`` for every i.

    Args:
        first: k trajectories (n_i, d).
        second: k trajectories (m_i, d), same d.

    Returns:
        (k,) float64 distances, each equal to ``frechet(first[i], second[i])``.
    """
    a, b = _pair_batches(first, second)
    idx = np.arange(len(a), dtype=np.int64)
    result: NDArray[np.float64] = _run(
        _frechet_many, _cells(a, idx, b, idx), a.coords, a.offsets, b.coords, b.offsets, idx, idx
    )
    return result


def within_pairs(first: Trajectories, second: Trajectories, eps_m: float) -> NDArray[np.bool_]:
    """Whether ``frechet(first[i], second[i]) <= eps_m`` for every i, with pruning.

    Args:
        first: k trajectories (n_i, d).
        second: k trajectories (m_i, d), same d.
        eps_m: The distance compared with, in the trajectories' unit ([m] for positions), >= 0 and finite.

    Returns:
        (k,) bool.
    """
    T = squared_threshold(eps_m)
    a, b = _pair_batches(first, second)
    idx = np.arange(len(a), dtype=np.int64)
    result: NDArray[np.bool_] = _run(
        _within_many, _cells(a, idx, b, idx), a.coords, a.offsets, b.coords, b.offsets, idx, idx, T
    )
    return result


def _upper_pairs(k: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    i, j = np.triu_indices(k, 1)
    return i.astype(np.int64), j.astype(np.int64)


def frechet_all_pairs(group: Trajectories) -> NDArray[np.float64]:
    """Discrete Fréchet distance between every two trajectories of a group.

    Args:
        group: k trajectories (n_i, d).

    Returns:
        (k, k) float64 symmetric matrix with a zero diagonal; k (k - 1) / 2 distances are computed.
    """
    g = as_batch(group, "group")
    i, j = _upper_pairs(len(g))
    out = np.zeros((len(g), len(g)))
    values = _run(_frechet_many, _cells(g, i, g, j), g.coords, g.offsets, g.coords, g.offsets, i, j)
    out[i, j] = values
    out[j, i] = values
    return out


def within_all_pairs(group: Trajectories, eps_m: float) -> NDArray[np.bool_]:
    """Whether every two trajectories of a group are within ``eps_m`` (discrete Fréchet), with pruning.

    Args:
        group: k trajectories (n_i, d).
        eps_m: The distance compared with, in the trajectories' unit ([m] for positions), >= 0 and finite.

    Returns:
        (k, k) bool symmetric matrix, True on the diagonal.
    """
    T = squared_threshold(eps_m)
    g = as_batch(group, "group")
    i, j = _upper_pairs(len(g))
    out = np.eye(len(g), dtype=np.bool_)
    values = _run(_within_many, _cells(g, i, g, j), g.coords, g.offsets, g.coords, g.offsets, i, j, T)
    out[i, j] = values
    out[j, i] = values
    return out
