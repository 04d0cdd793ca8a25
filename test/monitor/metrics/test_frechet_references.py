"""frechet against the published implementations (test-only dependencies) on random input."""

from __future__ import annotations

import numpy as np
import pytest
import similaritymeasures
from tslearn.metrics import frechet as tslearn_frechet

from cosim_validation.monitor.metrics import frechet

RNG = np.random.default_rng(99)


@pytest.mark.parametrize("dim", [2, 3])
def test_matches_tslearn_and_similaritymeasures(dim: int) -> None:
    for _ in range(25):
        n, m = (int(v) for v in RNG.integers(1, 120, size=2))
        P = np.cumsum(RNG.normal(size=(n, dim)), axis=0)
        Q = np.cumsum(RNG.normal(size=(m, dim)), axis=0)
        ours = frechet(P, Q)
        assert ours == pytest.approx(tslearn_frechet(P, Q), rel=1e-12)
        assert ours == pytest.approx(similaritymeasures.frechet_dist(P, Q), rel=1e-12)
