"""Thinning long series for display, documented so a plot's content can be checked against its data.

- Time series (deviation over time): :func:`minmax_decimate`. Up to ``max_points`` samples are shown as
  they are; a longer series is cut into ``max_points // 2`` buckets of consecutive samples and each bucket
  keeps its smallest and its largest value (in time order), so every peak of the deviation stays visible.
- Paths (tip positions in a plane): :func:`stride_decimate` keeps every k-th sample and the last one, the
  smallest k that leaves at most ``max_points`` samples.

Both return indices into the input, vectorised with numpy (no Python loop over samples).
"""

from __future__ import annotations

import numpy as np

DEFAULT_MAX_POINTS = 2000  # per series: far above a case at 10 Hz (~300 samples), so plots usually show all


def minmax_decimate(y: np.ndarray, max_points: int = DEFAULT_MAX_POINTS) -> np.ndarray:
    """Indices of the samples of ``y`` to draw: all of them, or the min and max of each bucket.

    Args:
        y: (n,) values; NaN samples are never chosen over a finite one in their bucket.
        max_points: Largest number of indices returned (>= 2).

    Returns:
        (m,) increasing int64 indices, m <= max_points; m == n when n <= max_points.
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    if max_points < 2:
        raise ValueError(f"max_points must be >= 2, got {max_points}")
    if n <= max_points:
        return np.arange(n, dtype=np.int64)
    size = -(-n // (max_points // 2))  # samples per bucket
    buckets = -(-n // size)
    low = np.full(buckets * size, np.inf)
    high = np.full(buckets * size, -np.inf)
    finite = np.isfinite(y)
    low[:n][finite], high[:n][finite] = y[finite], y[finite]
    base = np.arange(buckets, dtype=np.int64) * size
    i_min = base + np.argmin(low.reshape(buckets, size), axis=1)
    i_max = base + np.argmax(high.reshape(buckets, size), axis=1)
    chosen = np.sort(np.stack([i_min, i_max], axis=1), axis=1).ravel()
    chosen = np.minimum(chosen, n - 1)  # an all-NaN last bucket points at its first (padded) slot
    keep = np.ones(chosen.shape[0], dtype=bool)
    keep[1:] = chosen[1:] != chosen[:-1]
    result: np.ndarray = chosen[keep]
    return result


def stride_decimate(n: int, max_points: int = DEFAULT_MAX_POINTS) -> np.ndarray:
    """Indices of every k-th of ``n`` samples plus the last, at most ``max_points`` of them (>= 2).

    Args:
        n: Number of samples in the series (e.g. the length of a tip track).
        max_points: Largest number of indices returned (>= 2).
    """
    if max_points < 2:
        raise ValueError(f"max_points must be >= 2, got {max_points}")
    if n <= max_points:
        return np.arange(n, dtype=np.int64)
    stride = -(-(n - 1) // (max_points - 1))
    index = np.arange(0, n, stride, dtype=np.int64)
    return index if index[-1] == n - 1 else np.append(index, n - 1)
