"""Batch Fréchet: every entry equals the single-pair functions; packing, pruning paths, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.monitor.metrics import MetricInputError, TrajectoryBatch, frechet, frechet_batch, within
from cosim_validation.monitor.metrics.frechet_batch import (
    frechet_all_pairs,
    frechet_pairs,
    within_all_pairs,
    within_pairs,
)

RNG = np.random.default_rng(17)


def _group(k: int, dim: int = 3) -> list[np.ndarray]:
    """Trajectories of varied lengths around a common path, some far away (pruned by the endpoints)."""
    base = np.cumsum(RNG.normal(size=(80, dim)), axis=0)
    group = []
    for i in range(k):
        n = int(RNG.integers(1, 80))
        t = base[np.sort(RNG.choice(80, size=n, replace=False))] + RNG.normal(scale=0.3, size=(n, dim))
        group.append(t + (50.0 if i % 5 == 4 else 0.0))
    return group


@pytest.fixture(params=[0, 1 << 62], ids=["threads", "one-thread"])
def parallel_cells(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run a test with every batch on all threads, then with every batch on one thread."""
    monkeypatch.setattr(frechet_batch, "PARALLEL_CELLS", request.param)
    return int(request.param)


@pytest.mark.usefixtures("parallel_cells")
@pytest.mark.parametrize("dim", [2, 3, 7])
def test_pairs_equal_single_calls(dim: int) -> None:
    first, second = _group(40, dim), _group(40, dim)
    expected = np.array([frechet(p, q) for p, q in zip(first, second, strict=True)])
    np.testing.assert_array_equal(frechet_pairs(first, second), expected)
    packed = frechet_pairs(TrajectoryBatch.from_trajectories(first), TrajectoryBatch.from_trajectories(second))
    np.testing.assert_array_equal(packed, expected)
    for eps in np.quantile(expected, [0.0, 0.3, 0.7, 1.0]):
        np.testing.assert_array_equal(within_pairs(first, second, eps), expected <= eps)


@pytest.mark.usefixtures("parallel_cells")
def test_all_pairs_equal_single_calls() -> None:
    group = _group(25)
    matrix = frechet_all_pairs(group)
    assert matrix.shape == (25, 25)
    np.testing.assert_array_equal(matrix, matrix.T)
    assert np.all(np.diag(matrix) == 0.0)
    for i, j in zip(*np.triu_indices(25, 1), strict=True):
        assert matrix[i, j] == frechet(group[i], group[j])
    eps = float(np.median(matrix))
    close = within_all_pairs(group, eps)
    np.testing.assert_array_equal(close, matrix <= eps)
    assert within(group[0], group[1], eps) == close[0, 1]


def test_equal_length_array_and_single_trajectory_groups() -> None:
    stack = RNG.normal(size=(6, 12, 3))
    np.testing.assert_array_equal(frechet_all_pairs(stack), frechet_all_pairs(list(stack)))
    assert frechet_all_pairs([stack[0]]).shape == (1, 1)
    batch = TrajectoryBatch.from_trajectories(stack)
    assert len(batch) == 6
    np.testing.assert_array_equal(batch.lengths(), [12] * 6)
    np.testing.assert_array_equal(batch.trajectory(-1), stack[-1])


@pytest.mark.parametrize(
    ("first", "second", "match"),
    [
        ([np.zeros((3, 3))], [np.zeros((3, 3))] * 2, r"as many trajectories, got 1 and 2"),
        ([np.zeros((3, 3))], [np.zeros((3, 2))], r"same dimension, got 3 and 2"),
        ([], [], r"first: expected at least one trajectory"),
        ([np.zeros((3, 3)), np.zeros((0, 3))], [np.zeros((3, 3))] * 2, r"first\[1\]: expected at least 1 point"),
        ([np.zeros((3, 3)), np.zeros((3, 2))], [np.zeros((3, 3))] * 2, r"first\[1\]: every trajectory must have"),
        (
            [np.zeros((3, 3)), np.full((3, 3), np.nan)],
            [np.zeros((3, 3))] * 2,
            r"first\[1\]: coordinates must be finite",
        ),
        (np.zeros((3, 3)), [np.zeros((3, 3))] * 3, r"first: expected \(n, d\) trajectories or one \(k, n, d\) array"),
    ],
)
def test_bad_batches(first: object, second: object, match: str) -> None:
    with pytest.raises(MetricInputError, match=match):
        frechet_pairs(first, second)  # type: ignore[arg-type]


def test_batch_index_out_of_range() -> None:
    with pytest.raises(MetricInputError, match="trajectory index 3 out of range for a batch of 2"):
        TrajectoryBatch.from_trajectories([np.zeros((1, 3))] * 2).trajectory(3)
