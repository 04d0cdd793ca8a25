"""numba kernels of the discrete Fréchet distance over packed coordinates.

Layout: the kernels read trajectories from packed coordinate arrays of shape (D, N), one row per
coordinate (structure of arrays), C-contiguous float64 (see ``TrajectoryBatch``). A trajectory is a column
range: P is ``XP[:, p0:p0 + n]`` and Q is ``XQ[:, q0:q0 + m]`` (XP and XQ may be the same array). D <= 3 is
padded with zero rows to D = 3 by the callers (adding 0.0 to a sum of squares is exact), so the 3-D kernel
serves 1-, 2- and 3-D input.

Definition ([Actuators 2025]): a coupling of P (n points) and Q (m points) is a sequence of index pairs
(a_1, b_1), ..., (a_k, b_k) with (a_1, b_1) = (0, 0), (a_k, b_k) = (n-1, m-1) and each step advancing
a, b or both by one. The discrete Fréchet distance is the minimum over couplings of the maximum
Euclidean distance of the coupled points. The dynamic programme is
``C[i, j] = max(d2(i, j), min(C[i-1, j], C[i, j-1], C[i-1, j-1]))`` on squared distances d2; the distance is
``sqrt(C[n-1, m-1])``, one square root at the end. min and max are exact in floating point, so the result is
the correctly rounded square root of the largest squared distance on an optimal coupling.

Speed: the kernels walk the anti-diagonals i + j = k. Cells of one anti-diagonal are independent, so the
inner loop has no loop-carried dependency and LLVM vectorises it (AVX2/AVX-512), unlike the row loop whose
``C[i, j-1]`` dependency serialises it. Three buffers of length n + 1 (cell i of a diagonal at index
i + 1, index 0 a +inf sentinel) hold diagonals k-2, k-1 and k: O(n) memory with n the shorter trajectory
(callers pass the shorter one as P). Indices are cast to uint64 so numba emits no negative-index
wraparound select, which would otherwise stop the vectoriser.
"""

from __future__ import annotations

import numpy as np
from numba import njit

_INF = np.inf


@njit(cache=True, inline="always")
def sq_dist(XP: np.ndarray, i: int, XQ: np.ndarray, j: int) -> float:
    """Squared distance between column i of XP and column j of XQ, summed from the first row to the last.

    Args:
        XP: Packed coordinates, shape (D, N), float64, one row per coordinate.
        i: Column of XP.
        XQ: Packed coordinates, shape (D, M), same D as XP (may be XP itself).
        j: Column of XQ.
    """
    s = 0.0
    for r in range(XP.shape[0]):
        diff = XP[r, i] - XQ[r, j]
        s += diff * diff
    return s


@njit(cache=True, boundscheck=False)
def _diagonal(
    XP: np.ndarray, p0: int, XQ: np.ndarray, qk: int, s: int, e: int, a: np.ndarray, b: np.ndarray, c: np.ndarray
) -> None:
    """Cells s..e of one anti-diagonal: c[i+1] from b (diagonal k-1) and a (k-2), any number of rows.

    Cell i couples P[i] = XP[:, p0 + i] with Q[k - i] = XQ[:, qk - i]. Its squared distance is accumulated
    in c first, row by row (vectorised loops), then replaced by the cell's value.
    """
    for i in range(s, e + 1):
        diff = XP[0, np.uint64(p0 + i)] - XQ[0, np.uint64(qk - i)]
        c[np.uint64(i + 1)] = diff * diff
    for r in range(1, XP.shape[0]):
        for i in range(s, e + 1):
            diff = XP[r, np.uint64(p0 + i)] - XQ[r, np.uint64(qk - i)]
            c[np.uint64(i + 1)] += diff * diff
    for i in range(s, e + 1):
        bi = np.uint64(i)
        b1 = np.uint64(i + 1)
        d = c[b1]
        left = b[bi]
        up = b[b1]
        diag = a[bi]
        t = left if left < up else up
        best = t if t < diag else diag
        c[b1] = d if d > best else best


@njit(cache=True, boundscheck=False)
def _diagonal_3(
    XP: np.ndarray, p0: int, XQ: np.ndarray, qk: int, s: int, e: int, a: np.ndarray, b: np.ndarray, c: np.ndarray
) -> None:
    """:func:`_diagonal` for exactly three rows, in one fused loop."""
    for i in range(s, e + 1):
        ii = np.uint64(p0 + i)
        jj = np.uint64(qk - i)
        bi = np.uint64(i)
        b1 = np.uint64(i + 1)
        dx = XP[0, ii] - XQ[0, jj]
        dy = XP[1, ii] - XQ[1, jj]
        dz = XP[2, ii] - XQ[2, jj]
        d = dx * dx + dy * dy + dz * dz
        left = b[bi]
        up = b[b1]
        diag = a[bi]
        t = left if left < up else up
        best = t if t < diag else diag
        c[b1] = d if d > best else best


@njit(cache=True)
def frechet_sq(XP: np.ndarray, p0: int, n: int, XQ: np.ndarray, q0: int, m: int) -> float:
    """Squared discrete Fréchet distance of P = XP[:, p0:p0+n] and Q = XQ[:, q0:q0+m]; n, m >= 1.

    Memory is O(n): pass the shorter trajectory as P (the distance is symmetric).

    Args:
        XP: Packed coordinates holding P, shape (D, N), C-contiguous float64.
        p0: First column of P in XP.
        n: Number of points of P, n >= 1.
        XQ: Packed coordinates holding Q, shape (D, M), same D as XP (may be XP itself).
        q0: First column of Q in XQ.
        m: Number of points of Q, m >= 1.

    Returns:
        The squared distance, in the squared unit of the coordinates.
    """
    a = np.full(n + 1, _INF)
    b = np.full(n + 1, _INF)
    c = np.full(n + 1, _INF)
    b[1] = sq_dist(XP, p0, XQ, q0)
    three = XP.shape[0] == 3
    for k in range(1, n + m - 1):
        if three:
            _diagonal_3(XP, p0, XQ, q0 + k, max(0, k - m + 1), min(k, n - 1), a, b, c)
        else:
            _diagonal(XP, p0, XQ, q0 + k, max(0, k - m + 1), min(k, n - 1), a, b, c)
        a, b, c = b, c, a
    return float(b[n])


@njit(cache=True)
def greedy_sq(XP: np.ndarray, p0: int, n: int, XQ: np.ndarray, q0: int, m: int) -> float:
    """Squared maximum distance along one coupling chosen greedily: an upper bound of ``frechet_sq``.

    From (i, j) the walk steps to the admissible successor with the smallest squared distance. O(n + m).

    Args:
        XP: Packed coordinates holding P, shape (D, N), float64.
        p0: First column of P in XP.
        n: Number of points of P, n >= 1.
        XQ: Packed coordinates holding Q, shape (D, M), same D as XP (may be XP itself).
        q0: First column of Q in XQ.
        m: Number of points of Q, m >= 1.
    """
    i = 0
    j = 0
    worst = sq_dist(XP, p0, XQ, q0)
    while i < n - 1 or j < m - 1:
        if i == n - 1:
            j += 1
        elif j == m - 1:
            i += 1
        else:
            dd = sq_dist(XP, p0 + i + 1, XQ, q0 + j + 1)
            di = sq_dist(XP, p0 + i + 1, XQ, q0 + j)
            dj = sq_dist(XP, p0 + i, XQ, q0 + j + 1)
            if dd <= di and dd <= dj:
                i += 1
                j += 1
            elif di <= dj:
                i += 1
            else:
                j += 1
        d = sq_dist(XP, p0 + i, XQ, q0 + j)
        if d > worst:
            worst = d
    return worst


@njit(cache=True)
def _first_reachable(c: np.ndarray, s: int, e: int, T: float) -> int:
    """Smallest cell index i in [s, e] with c[i + 1] <= T, or e + 1 if none."""
    for i in range(s, e + 1):
        if c[i + 1] <= T:
            return i
    return e + 1


@njit(cache=True)
def _last_reachable(c: np.ndarray, s: int, e: int, T: float) -> int:
    """Largest cell index i in [s, e] with c[i + 1] <= T, or s - 1 if none."""
    for i in range(e, s - 1, -1):
        if c[i + 1] <= T:
            return i
    return s - 1


@njit(cache=True, boundscheck=False)
def within_sq(XP: np.ndarray, p0: int, n: int, XQ: np.ndarray, q0: int, m: int, T: float) -> bool:
    """Whether ``frechet_sq(XP, p0, n, XQ, q0, m) <= T``, deciding as early as possible.

    1. Lower bound: the coupled endpoints (0, 0) and (n-1, m-1) are on every coupling.
    2. Upper bound: the greedy coupling (O(n + m)).
    3. The dynamic programme restricted to the band of cells reachable with value <= T: a cell can only be
       reachable if a predecessor is, so diagonal k is computed only over the index range spanned by the
       reachable cells of diagonals k-1 and k-2; when both are empty no coupling stays within T (every
       coupling visits diagonal k or k+1) and the answer is False.

    Args:
        XP: Packed coordinates holding P, shape (D, N), C-contiguous float64.
        p0: First column of P in XP.
        n: Number of points of P, n >= 1.
        XQ: Packed coordinates holding Q, shape (D, M), same D as XP (may be XP itself).
        q0: First column of Q in XQ.
        m: Number of points of Q, m >= 1.
        T: Threshold on the squared distance, in the squared unit of the coordinates (see
            :func:`~cosim_validation.monitor.metrics.frechet.squared_threshold`).
    """
    if sq_dist(XP, p0, XQ, q0) > T or sq_dist(XP, p0 + n - 1, XQ, q0 + m - 1) > T:
        return False
    if greedy_sq(XP, p0, n, XQ, q0, m) <= T:
        return True
    a = np.full(n + 1, _INF)
    b = np.full(n + 1, _INF)
    c = np.full(n + 1, _INF)
    b[1] = sq_dist(XP, p0, XQ, q0)
    three = XP.shape[0] == 3
    r1s, r1e, r2s, r2e = 0, 0, 1, 0  # reachable cell ranges of diagonals k-1 (b) and k-2 (a)
    cbs, cbe, cas, cae, ccs, cce = 0, 0, 1, 0, 1, 0  # computed ranges of the buffers b, a, c
    for k in range(1, n + m - 1):
        s = n
        e = -1
        if r1s <= r1e:
            s, e = r1s, r1e + 1
        if r2s <= r2e:
            s, e = min(s, r2s + 1), max(e, r2e + 1)
        if e < 0:
            return False
        s = max(s, k - m + 1, 0)
        e = min(e, k, n - 1)
        for i in range(ccs, cce + 1):  # forget diagonal k-3: cells outside the computed range read +inf
            c[i + 1] = _INF
        if three:
            _diagonal_3(XP, p0, XQ, q0 + k, s, e, a, b, c)
        else:
            _diagonal(XP, p0, XQ, q0 + k, s, e, a, b, c)
        rs = _first_reachable(c, s, e, T)
        re = _last_reachable(c, s, e, T) if rs <= e else rs - 1
        a, b, c = b, c, a
        cas, cae, cbs, cbe, ccs, cce = cbs, cbe, s, e, cas, cae
        r2s, r2e, r1s, r1e = r1s, r1e, rs, re
    return bool(b[n] <= T)
