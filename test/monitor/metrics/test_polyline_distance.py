"""p2t against a numpy projection reference, on the polyline, degenerate and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.monitor.metrics import MetricInputError, p2t, polyline_distance
from cosim_validation.monitor.metrics.polyline_distance import BLOCK
from test.monitor.metrics.reference import point_polyline

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("parallel_work", [0, 1 << 62])  # the parallel and the serial kernel
@pytest.mark.parametrize("dim", [1, 2, 3, 5])
@pytest.mark.parametrize(("n_points", "n_line"), [(1, 1), (7, 2), (100, 30), (BLOCK + 3, 5), (1500, 200)])
def test_matches_projection_on_every_segment(
    monkeypatch: pytest.MonkeyPatch, parallel_work: int, dim: int, n_points: int, n_line: int
) -> None:
    monkeypatch.setattr(polyline_distance, "PARALLEL_WORK", parallel_work)
    line = np.cumsum(RNG.normal(size=(n_line, dim)), axis=0)
    points = RNG.normal(scale=3.0, size=(n_points, dim))
    np.testing.assert_allclose(p2t(points, line), point_polyline(points, line), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_points_on_the_polyline_are_at_zero_including_between_samples(seed: int) -> None:
    rng = np.random.default_rng(seed)  # its own generator: the shared one's state depends on which tests ran first
    line = np.cumsum(rng.normal(size=(20, 3)), axis=0)
    t = rng.uniform(size=19)[:, None]
    between = line[:-1] + t * (line[1:] - line[:-1])
    assert np.all(p2t(between, line) < 1e-12)
    # a vertex starts a segment (projection 0: exactly zero); the last one only ends one, where the projection
    # |d|^2 * (1 / |d|^2) may round to just below 1 (distance ~1e-16: the test asked for 0 there and failed
    # for about one line in eight)
    assert np.all(p2t(line[:-1], line) == 0.0)
    assert p2t(line[-1], line) < 1e-12


def test_repeated_samples_and_single_point() -> None:
    line = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert p2t([0.5, 2.0, 0.0], line) == pytest.approx(2.0)
    assert p2t([3.0, 4.0, 0.0], [[0.0, 0.0, 0.0]]) == pytest.approx(5.0)
    assert isinstance(p2t([3.0, 4.0, 0.0], line), float)


@pytest.mark.parametrize(
    ("points", "line", "match"),
    [
        (np.zeros(3), np.zeros((0, 3)), r"polyline: expected at least 1 point"),
        (np.zeros((2, 3)), np.zeros((4, 2)), r"same dimension"),
        (np.array([np.nan, 0.0, 0.0]), np.zeros((4, 3)), r"points: coordinates must be finite"),
        (np.zeros(3), np.full((2, 3), -np.inf), r"polyline: coordinates must be finite, got -inf"),
        (np.zeros((2, 2, 3)), np.zeros((4, 3)), r"points: expected shape \(n, d\)"),
    ],
)
def test_bad_input(points: np.ndarray, line: np.ndarray, match: str) -> None:
    with pytest.raises(MetricInputError, match=match):
        p2t(points, line)


def test_integer_and_non_contiguous_input_are_converted() -> None:
    line = RNG.integers(-5, 5, size=(12, 3))
    points = RNG.integers(-9, 9, size=(40, 3))
    expected = p2t(points.astype(np.float64), line.astype(np.float64))
    np.testing.assert_array_equal(p2t(points, line), expected)
    strided = np.asfortranarray(np.repeat(points.astype(np.float64), 2, axis=0)[::2])
    np.testing.assert_array_equal(p2t(strided, line[:, :].T.copy().T), expected)
