"""Encoders: readings on the resolution grid, spread as configured, seeded."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.robots.emulated.emulated_config import EncoderConfig
from cosim_validation.robots.emulated.joint_encoder import JointEncoder

N = 4000


@pytest.mark.parametrize(("noise", "resolution"), [(1e-5, 6e-6), (2e-5, 0.0), (0.0, 1e-4)])
def test_spread_matches_noise_and_quantisation(noise: float, resolution: float) -> None:
    encoder = JointEncoder(EncoderConfig(noise, resolution), np.random.default_rng(3))
    truth = np.linspace(-1.0, 1.0, 7) + 1.234e-5  # angles off the grid
    readings = np.array([encoder.read(truth) for _ in range(N)])
    expected_std = np.sqrt(noise**2 + resolution**2 / 12.0)
    # the spread over all joints and readings; chi-square: relative std of the estimate ~ 1/sqrt(2 N 7)
    spread = np.sqrt(np.mean((readings - truth) ** 2))
    assert spread == pytest.approx(expected_std, rel=0.05)
    if resolution > 0:
        counts = readings / resolution
        np.testing.assert_allclose(counts, np.round(counts), atol=1e-6)


def test_same_seed_same_readings() -> None:
    config = EncoderConfig(1e-5, 6e-6)
    a = JointEncoder(config, np.random.default_rng(11)).read(np.zeros(7))
    b = JointEncoder(config, np.random.default_rng(11)).read(np.zeros(7))
    np.testing.assert_array_equal(a, b)
