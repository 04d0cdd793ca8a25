"""The optimal coupling: a valid coupling of seed 000's definition whose bottleneck is the distance."""

from __future__ import annotations

import numpy as np
import pytest
import similaritymeasures

from cosim_validation.monitor.metrics import MetricInputError, frechet
from cosim_validation.monitor.metrics.frechet_coupling import frechet_coupling

RNG = np.random.default_rng(5)


@pytest.mark.parametrize(("n", "m"), [(1, 1), (1, 9), (9, 1), (17, 40), (60, 23)])
def test_coupling_is_valid_and_optimal(n: int, m: int) -> None:
    P = np.cumsum(RNG.normal(size=(n, 3)), axis=0)
    Q = np.cumsum(RNG.normal(size=(m, 3)), axis=0)
    result = frechet_coupling(P, Q)
    pairs = result.index_pairs
    assert tuple(pairs[0]) == (0, 0)
    assert tuple(pairs[-1]) == (n - 1, m - 1)
    steps = np.diff(pairs, axis=0)
    assert np.all((steps >= 0) & (steps <= 1))
    assert np.all(steps.sum(axis=1) >= 1)
    assert max(n, m) <= len(pairs) <= n + m - 1
    gaps = np.linalg.norm(P[pairs[:, 0]] - Q[pairs[:, 1]], axis=1)
    assert result.distance == frechet(P, Q)
    assert gaps.max() == pytest.approx(result.distance, rel=1e-15)
    assert gaps[result.argmax] == gaps.max()
    # an independent implementation (tslearn's frechet_path gave the same, but its first call compiled for 12 CPU-s)
    assert similaritymeasures.frechet_dist(P, Q) == pytest.approx(result.distance, rel=1e-12)


def test_coupling_rejects_bad_input() -> None:
    with pytest.raises(MetricInputError, match="Q: expected at least 1 point"):
        frechet_coupling(np.zeros((2, 3)), np.zeros((0, 3)))
    with pytest.raises(MetricInputError, match="same dimension"):
        frechet_coupling(np.zeros((2, 3)), np.zeros((2, 4)))
