"""numba kernels of the temporal operators on whole traces (offline evaluation).

Robustness arrays are float64 and may hold +-inf. Time windows select, for sample k, the samples
k' >= k with ``t[k'] >= t[k] + a`` and ``t[k'] <= t[k] + b``; the online operators use exactly
these comparisons, so both evaluations select the same samples.
"""

from __future__ import annotations

import numpy as np
from numba import njit

INF = np.inf


@njit(cache=True)
def window_bounds(t_s: np.ndarray, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """Index range [lo[k], hi[k]) of the samples in the window [t[k] + a, t[k] + b] (k' >= k).

    Args:
        t_s: (n,) non-decreasing sample times [s].
        a: Window start after each sample in [s], 0 <= a <= b.
        b: Window end after each sample in [s].
    """
    n = t_s.shape[0]
    lo = np.empty(n, dtype=np.int64)
    hi = np.empty(n, dtype=np.int64)
    i = 0
    j = 0
    for k in range(n):
        if i < k:
            i = k
        while i < n and t_s[i] < t_s[k] + a:
            i += 1
        if j < i:
            j = i
        while j < n and t_s[j] <= t_s[k] + b:
            j += 1
        lo[k] = i
        hi[k] = j
    return lo, hi


@njit(cache=True)
def sliding_extreme(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, is_min: bool) -> np.ndarray:  # pragma: no cover
    """Min (or max) of ``values[lo[k]:hi[k]]`` for every k; +inf (min) / -inf (max) for an empty window.

    ``lo`` and ``hi`` must be non-decreasing (they are for time windows); O(n) with a monotone deque.

    Args:
        values: (n,) float64 robustness values.
        lo: (n,) int64 first index of each sample's window.
        hi: (n,) int64 end (exclusive) of each sample's window, <= n.
        is_min: True: the min (always); False: the max (eventually).
    """
    n = values.shape[0]
    out = np.empty(n)
    dq = np.empty(n, dtype=np.int64)
    head = 0
    tail = 0
    right = 0
    empty = INF if is_min else -INF
    for k in range(n):
        while right < hi[k]:
            v = values[right]
            if is_min:
                while tail > head and values[dq[tail - 1]] >= v:
                    tail -= 1
            else:
                while tail > head and values[dq[tail - 1]] <= v:
                    tail -= 1
            dq[tail] = right
            tail += 1
            right += 1
        while tail > head and dq[head] < lo[k]:
            head += 1
        out[k] = values[dq[head]] if tail > head else empty
    return out


@njit(cache=True)
def suffix_extreme(values: np.ndarray, is_min: bool) -> np.ndarray:  # pragma: no cover
    """Min (or max) of ``values[k:]`` for every k (unbounded always / eventually).

    Args:
        values: (n,) float64 robustness values.
        is_min: True: the min (always); False: the max (eventually).
    """
    n = values.shape[0]
    out = np.empty(n)
    acc = INF if is_min else -INF
    for k in range(n - 1, -1, -1):
        v = values[k]
        acc = min(acc, v) if is_min else max(acc, v)
        out[k] = acc
    return out


@njit(cache=True)
def until_unbounded(left: np.ndarray, right: np.ndarray) -> np.ndarray:  # pragma: no cover
    """U[k] = max over k' >= k of min(right[k'], min(left[k:k'])) by the backward recursion.

    Args:
        left: (n,) float64 robustness of the left operand.
        right: (n,) float64 robustness of the right operand.
    """
    n = left.shape[0]
    out = np.empty(n)
    acc = -INF
    for k in range(n - 1, -1, -1):
        acc = max(right[k], min(left[k], acc))
        out[k] = acc
    return out


@njit(cache=True)
def until_window(
    left: np.ndarray, right: np.ndarray, t_s: np.ndarray, a: float, b: float
) -> np.ndarray:  # pragma: no cover
    """Bounded until: max over k' in the window of k of min(right[k'], min(left[k:k'])); O(n * window).

    Args:
        left: (n,) float64 robustness of the left operand.
        right: (n,) float64 robustness of the right operand.
        t_s: (n,) non-decreasing sample times [s].
        a: Window start after each sample in [s], 0 <= a <= b.
        b: Window end after each sample in [s].
    """
    n = left.shape[0]
    out = np.empty(n)
    for k in range(n):
        out[k] = until_at(left, right, t_s, k, n, a, b)
    return out


@njit(cache=True)
def until_at(
    left: np.ndarray, right: np.ndarray, t_s: np.ndarray, k: int, n: int, a: float, b: float
) -> float:  # pragma: no cover
    """Bounded until at sample k, looking at samples k..n-1 only.

    Args:
        left: (>= n,) float64 robustness of the left operand.
        right: (>= n,) float64 robustness of the right operand.
        t_s: (>= n,) non-decreasing sample times [s].
        k: 0-based index of the sample the value is computed for.
        n: End (exclusive) of the samples looked at.
        a: Window start after sample k in [s], 0 <= a <= b.
        b: Window end after sample k in [s].
    """
    best = -INF
    prefix = INF
    i = k
    while i < n and t_s[i] <= t_s[k] + b:
        if t_s[i] >= t_s[k] + a:
            best = max(best, min(right[i], prefix))
        prefix = min(prefix, left[i])
        i += 1
    return best


@njit(cache=True)
def first_at_or_below(values: np.ndarray, start: int, stop: int, level: float) -> int:  # pragma: no cover
    """First index in [start, stop) with values[i] <= level, or -1.

    Args:
        values: (n,) float64 values.
        start: First index looked at.
        stop: End (exclusive) of the indices looked at, <= n.
        level: The threshold, in the values' unit.
    """
    for i in range(start, stop):
        if values[i] <= level:
            return i
    return -1
