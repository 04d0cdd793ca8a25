"""p2t: distance from points to a trajectory taken as a polyline ([Actuators 2025]), 0 on it.

The trajectory is the polyline through its samples: the distance is the minimum over its segments
(not only over its vertices), so a point between two samples of a straight insertion is at distance 0.
A one-point trajectory is a point. Kernels: numba, squared distances with one square root per query point,
segments outer and query points inner so the inner loop vectorises; parallel over blocks of query points
when the work is large.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from cosim_validation.monitor.metrics.arrays import as_point_or_points, as_points, same_dimension
from cosim_validation.monitor.metrics.trajectory_batch import pack_columns

#: Query points x segments above which the kernel runs in parallel over query points (about 1 ms of work:
#: waking the worker threads costs tens of microseconds, and milliseconds on an oversubscribed machine).
PARALLEL_WORK = 1 << 22


#: Query points handled together: the loop over them is the vectorised inner loop.
BLOCK = 512


@njit(cache=True, boundscheck=False)
def _p2t_block(X: np.ndarray, lo: int, hi: int, S: np.ndarray, D: np.ndarray, inv: np.ndarray, out: np.ndarray) -> None:
    """out[lo:hi] = distance from points X[:3, lo:hi] to the segments S + t D, t in [0, 1].

    Segments are the outer loop and points the inner one, so the inner loop is an element-wise update
    (vectorised) instead of a min-reduction (which LLVM does not vectorise without fast-math).
    """
    best = np.full(hi - lo, np.inf)
    x = X[0, lo:hi]
    y = X[1, lo:hi]
    z = X[2, lo:hi]
    for s in range(inv.shape[0]):
        sx, sy, sz = S[0, s], S[1, s], S[2, s]
        dx, dy, dz = D[0, s], D[1, s], D[2, s]
        iv = inv[s]
        for k in range(hi - lo):
            i = np.uint64(k)
            ax = x[i] - sx
            ay = y[i] - sy
            az = z[i] - sz
            t = min(max((ax * dx + ay * dy + az * dz) * iv, 0.0), 1.0)
            ex = ax - t * dx
            ey = ay - t * dy
            ez = az - t * dz
            d = ex * ex + ey * ey + ez * ez
            b = best[i]
            best[i] = d if d < b else b
    for k in range(hi - lo):
        out[lo + k] = np.sqrt(best[k])


@njit(cache=True)
def _p2t_serial(X: np.ndarray, S: np.ndarray, D: np.ndarray, inv: np.ndarray, out: np.ndarray) -> None:
    n = X.shape[1]
    for lo in range(0, n, BLOCK):
        _p2t_block(X, lo, min(lo + BLOCK, n), S, D, inv, out)


@njit(cache=True, parallel=True)
def _p2t_parallel(X: np.ndarray, S: np.ndarray, D: np.ndarray, inv: np.ndarray, out: np.ndarray) -> None:
    n = X.shape[1]
    for blk in prange((n + BLOCK - 1) // BLOCK):
        lo = blk * BLOCK
        _p2t_block(X, lo, min(lo + BLOCK, n), S, D, inv, out)


@njit(cache=True)
def _p2t_general(X: np.ndarray, S: np.ndarray, D: np.ndarray, inv: np.ndarray, out: np.ndarray) -> None:
    """Any number of rows (used for d > 3)."""
    rows = X.shape[0]
    for i in range(X.shape[1]):
        best = np.inf
        for s in range(inv.shape[0]):
            dot = 0.0
            for r in range(rows):
                dot += (X[r, i] - S[r, s]) * D[r, s]
            t = dot * inv[s]
            t = 0.0 if t < 0.0 else (1.0 if t > 1.0 else t)
            d = 0.0
            for r in range(rows):
                e = X[r, i] - S[r, s] - t * D[r, s]
                d += e * e
            best = d if d < best else best
        out[i] = np.sqrt(best)


def _segments(polyline: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Starts (rows, s), directions (rows, s) and 1/|direction|^2 (s,) (0 for a zero-length segment)."""
    pts = pack_columns((polyline,), polyline.shape[1])
    if pts.shape[1] == 1:
        pts = np.concatenate([pts, pts], axis=1)
    starts = np.ascontiguousarray(pts[:, :-1])
    dirs = np.ascontiguousarray(pts[:, 1:] - pts[:, :-1])
    len2 = np.einsum("ij,ij->j", dirs, dirs)
    inv = np.divide(1.0, len2, out=np.zeros_like(len2), where=len2 > 0.0)
    return starts, dirs, inv


def p2t(points: ArrayLike, polyline: ArrayLike) -> float | NDArray[np.float64]:
    """Distance from points to a trajectory (the polyline through its samples).

    Args:
        points: One point (d,) or n points (n, d), e.g. positions in base_link [m].
        polyline: (m, d) trajectory samples in order, m >= 1, same frame and d.

    Returns:
        A float for one point, else (n,) float64 distances (0 on the polyline). O(n m).

    Raises:
        MetricInputError: Empty polyline, mismatched d, NaN/inf, non-numeric dtype.
    """
    X_pts, single = as_point_or_points("points", points)
    line = as_points("polyline", polyline)
    same_dimension("points", X_pts, "polyline", line)
    starts, dirs, inv = _segments(line)
    X = pack_columns((X_pts,), X_pts.shape[1])
    out = np.empty(X.shape[1])
    if X.shape[0] > 3:
        _p2t_general(X, starts, dirs, inv, out)
    elif X.shape[1] * inv.shape[0] >= PARALLEL_WORK:
        _p2t_parallel(X, starts, dirs, inv, out)
    else:
        _p2t_serial(X, starts, dirs, inv, out)
    return float(out[0]) if single else out
