"""Discrete Fréchet distance and its decision version against brute force, laws and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim_validation.monitor.metrics import MetricInputError, frechet, within
from cosim_validation.monitor.metrics.frechet import squared_threshold
from test.monitor.metrics.reference import frechet_by_couplings, frechet_by_matrix

RNG = np.random.default_rng(20240501)


def _walk(n: int, dim: int = 3, scale: float = 1.0) -> np.ndarray:
    return np.cumsum(RNG.normal(scale=scale, size=(n, dim)), axis=0)


@pytest.mark.parametrize(("n", "m"), [(1, 1), (1, 4), (4, 1), (2, 3), (3, 3), (4, 5), (6, 4)])
@pytest.mark.parametrize("dim", [1, 2, 3])
def test_equals_minimum_over_all_couplings(n: int, m: int, dim: int) -> None:
    for _ in range(5):
        P, Q = _walk(n, dim), _walk(m, dim)
        assert frechet(P, Q) == pytest.approx(frechet_by_couplings(P, Q), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("dim", [1, 2, 3, 4, 7])
def test_equals_full_matrix_recursion_on_random_lengths(dim: int) -> None:
    for _ in range(20):
        n, m = RNG.integers(1, 40, size=2)
        P, Q = _walk(int(n), dim), _walk(int(m), dim)
        assert frechet(P, Q) == pytest.approx(frechet_by_matrix(P, Q), rel=1e-12, abs=1e-12)


def test_uses_segment_lengths_not_sampling() -> None:
    """Two samplings of one straight line that never coincide: the distance is half a step."""
    P = np.stack([np.arange(0.0, 10.0, 1.0), np.zeros(10), np.zeros(10)], axis=1)
    Q = P + np.array([0.5, 0.0, 0.0])
    assert frechet(P, Q) == pytest.approx(0.5)


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    """Euclidean distance with the kernel's arithmetic: squares summed from the first coordinate, one sqrt.

    np.linalg.norm rounds differently on some CPUs (its BLAS dot may fuse multiply and add), so a law that
    holds exactly for the kernel's distances would fail by one ulp against it.
    """
    total = 0.0
    for x, y in zip(a.tolist(), b.tolist(), strict=True):
        total += (x - y) * (x - y)
    return math.sqrt(total)


def test_laws_on_random_walks() -> None:
    for _ in range(30):
        P, Q, R = _walk(int(RNG.integers(1, 60))), _walk(int(RNG.integers(1, 60))), _walk(int(RNG.integers(1, 60)))
        d_pq = frechet(P, Q)
        assert d_pq == frechet(Q, P)
        assert d_pq >= max(_distance(P[0], Q[0]), _distance(P[-1], Q[-1]))
        assert frechet(P, P) == 0.0
        assert frechet(P, Q) <= frechet(P, R) + frechet(R, Q) + 1e-12
        k = int(RNG.integers(0, len(P)))
        assert frechet(np.insert(P, k, P[k], axis=0), Q) == d_pq


def test_one_point_trajectory_is_coupled_with_every_point() -> None:
    Q = _walk(50)
    p = RNG.normal(size=3)
    assert frechet(p[None], Q) == pytest.approx(np.linalg.norm(Q - p, axis=1).max(), rel=1e-15)


def test_integer_and_non_contiguous_input_give_the_same_result() -> None:
    P = RNG.integers(-5, 5, size=(30, 3))
    Q = RNG.integers(-5, 5, size=(20, 3))
    expected = frechet(P.astype(np.float64), Q.astype(np.float64))
    assert frechet(P, Q) == expected
    wide = np.asfortranarray(np.repeat(P.astype(np.float64), 2, axis=0)[::2])
    assert frechet(wide, Q[:, :]) == expected
    assert frechet(P.tolist(), Q.tolist()) == expected


@pytest.mark.parametrize(
    ("P", "Q", "match"),
    [
        (np.zeros((0, 3)), np.zeros((2, 3)), r"P: expected at least 1 point\(s\), got shape \(0, 3\)"),
        (np.zeros((2, 3)), np.zeros((0, 3)), r"Q: expected at least 1 point"),
        (np.zeros((2, 3)), np.zeros((2, 2)), r"same dimension, got shapes \(2, 3\) and \(2, 2\)"),
        (np.zeros(3), np.zeros((2, 3)), r"P: expected shape \(n, d\)"),
        (np.array([[0.0, np.nan, 0.0]]), np.zeros((2, 3)), r"P: coordinates must be finite, got nan at index \(0, 1\)"),
        (np.zeros((2, 3)), np.array([[0.0, 0.0, np.inf]]), r"Q: coordinates must be finite, got inf"),
        (np.zeros((2, 3), dtype=bool), np.zeros((2, 3)), r"P: expected an integer or floating array, got dtype 'bool'"),
        (np.zeros((2, 3), dtype=complex), np.zeros((2, 3)), r"dtype 'complex128'"),
        ([[0.0, 1.0], [2.0]], np.zeros((2, 2)), r"P: expected a numeric array"),
        (np.zeros((2, 0)), np.zeros((2, 0)), r"at least one coordinate"),
    ],
)
def test_bad_input_is_rejected_with_a_clear_error(P: object, Q: object, match: str) -> None:
    with pytest.raises(MetricInputError, match=match):
        frechet(P, Q)  # type: ignore[arg-type]
    with pytest.raises(MetricInputError, match=match):
        within(P, Q, 1.0)  # type: ignore[arg-type]


def test_within_agrees_with_the_distance_at_and_around_it() -> None:
    for _ in range(40):
        P, Q = _walk(int(RNG.integers(1, 80))), _walk(int(RNG.integers(1, 80)))
        d = frechet(P, Q)
        assert within(P, Q, d)
        assert not within(P, Q, math.nextafter(d, 0.0)) or d == 0.0
        for eps in RNG.uniform(0.0, 2.0 * d + 1e-9, size=5):
            assert within(P, Q, eps) == (d <= eps)


def test_within_on_near_identical_trajectories_takes_the_greedy_shortcut_correctly() -> None:
    P = _walk(500)
    Q = P + RNG.normal(scale=1e-3, size=P.shape)
    d = frechet(P, Q)
    assert within(P, Q, d)
    assert not within(P, Q, 0.999 * d)


@pytest.mark.parametrize("eps", [-1.0, math.nan, math.inf, "1", None, True])
def test_within_rejects_bad_thresholds(eps: object) -> None:
    with pytest.raises(MetricInputError, match="eps_m: expected a"):
        within(np.zeros((2, 3)), np.zeros((2, 3)), eps)  # type: ignore[arg-type]


def test_squared_threshold_is_the_exact_boundary() -> None:
    for eps in [0.0, 1e-300, 0.1, 1.0, 3.0, 1e150, *RNG.uniform(0, 10, size=200)]:
        T = squared_threshold(float(eps))
        assert math.sqrt(T) <= eps
        assert math.sqrt(math.nextafter(T, math.inf)) > eps
