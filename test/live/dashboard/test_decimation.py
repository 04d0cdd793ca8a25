"""Decimation keeps what a plot must show: every sample when few, every bucket's extremes when many."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.live.dashboard.decimation import minmax_decimate, stride_decimate


def test_short_series_are_kept_whole() -> None:
    assert np.array_equal(minmax_decimate(np.arange(10.0), 10), np.arange(10))
    assert np.array_equal(stride_decimate(7, 10), np.arange(7))


@pytest.mark.parametrize(("n", "max_points"), [(10_001, 100), (5000, 2000), (2001, 2000), (333, 4)])
def test_minmax_keeps_every_bucket_extreme(n: int, max_points: int) -> None:
    rng = np.random.default_rng(n)
    y = rng.normal(size=n).cumsum()
    y[n // 3] = 1e6  # a spike: must survive
    y[n // 2] = -1e6
    keep = minmax_decimate(y, max_points)
    assert len(keep) <= max_points
    assert np.all(np.diff(keep) > 0)
    assert {n // 3, n // 2} <= set(keep.tolist())
    assert y[keep].max() == y.max()
    assert y[keep].min() == y.min()
    size = -(-n // (max_points // 2))
    for start in range(0, n, size):  # each bucket's min and max are among the kept samples
        bucket = y[start : start + size]
        assert start + int(np.argmax(bucket)) in keep
        assert start + int(np.argmin(bucket)) in keep


def test_minmax_prefers_finite_samples() -> None:
    y = np.full(1000, np.nan)
    y[::7] = np.arange(0, 1000, 7, dtype=float)
    keep = minmax_decimate(y, 10)
    assert np.isfinite(y[keep]).all()


def test_stride_keeps_first_and_last() -> None:
    for n in (11, 1000, 4097):
        keep = stride_decimate(n, 100)
        assert keep[0] == 0
        assert keep[-1] == n - 1
        assert len(keep) <= 100


def test_bad_max_points() -> None:
    with pytest.raises(ValueError, match="max_points"):
        minmax_decimate(np.zeros(5), 1)
