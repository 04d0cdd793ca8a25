"""The cable transmission of the emulated cable-driven arms: ratio errors and the unknown wrist coupling."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.config import parse_config
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.robots.emulated.cable_transmission import CableTransmission, CableTransmissionConfig


def _config(tmp_path: Path, text: str) -> CableTransmissionConfig:
    root = parse_config(f"transmission: {text}\n", tmp_path / "c.yaml")
    return CableTransmissionConfig.from_config(root["transmission"], 6)


def test_drawn_errors_have_the_configured_spread(tmp_path: Path) -> None:
    config = _config(tmp_path, "{scale_error_std: 0.01, coupling_std: 0.02, coupled: [[4, 5]]}")
    rng = np.random.default_rng(0)
    matrices = np.stack([CableTransmission.draw(config, 6, rng).matrix for _ in range(2000)])
    scale = matrices[:, np.arange(4), np.arange(4)] - 1.0  # joints 0-3: their ratio alone
    assert np.std(scale) == pytest.approx(0.01, rel=0.2)
    assert np.std(matrices[:, 5, 4] / matrices[:, 4, 4]) == pytest.approx(0.02, rel=0.2)  # wrist 4 drives 5
    off = matrices.copy()
    off[:, np.arange(6), np.arange(6)] = 0.0
    off[:, 5, 4] = 0.0
    assert np.abs(off).max() == 0.0  # nothing else is coupled


def test_the_links_move_by_the_drawn_ratio_and_coupling(tmp_path: Path) -> None:
    config = _config(tmp_path, "{scale_error_std: 0.01, coupling_std: 0.02, coupled: [[4, 5]]}")
    transmission = CableTransmission.draw(config, 6, np.random.default_rng(3))
    q = np.array([0.1, -0.2, 0.1, 0.5, 0.3, 0.0])
    link = transmission.link(q)
    m = transmission.matrix
    assert link[0] == pytest.approx(m[0, 0] * 0.1)
    assert link[5] == pytest.approx(m[5, 4] * 0.3)  # the wrist's second joint moves though its own value is 0
    assert CableTransmission.draw(None, 6, np.random.default_rng(3)).link(q) == pytest.approx(q)


def test_a_coupled_pair_outside_the_arm_is_named(tmp_path: Path) -> None:
    expected = r"transmission\.coupled\[0\]: expected two different joint indices in 0\.\.5"
    with pytest.raises(ConfigError, match=expected):
        _config(tmp_path, "{scale_error_std: 0.01, coupling_std: 0.02, coupled: [[4, 6]]}")
