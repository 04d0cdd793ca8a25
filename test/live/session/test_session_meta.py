"""A session's results database keeps no path of the machine: its configuration is named relative to the run
directory, as a campaign names it, and read back from there (``cosim report``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.common.config import package_root
from cosim_validation.live.nodes.test_generator import session_meta
from cosim_validation.live.session.node_parameters import TestGeneratorParams
from cosim_validation.runs.run_inputs import kept_path
from cosim_validation.testgen.suite import Suite


@pytest.mark.parametrize("depth", [1, 3])
def test_the_configuration_is_kept_relative_to_the_run(tmp_path: Path, depth: int) -> None:
    import numpy as np

    config = package_root() / "config" / "needle_insertion.yaml"
    run = tmp_path.joinpath(*(f"d{i}" for i in range(depth)))
    meta_of = {"generator": "random", "granularity_m": 0.09, "seed": 0, "frame_id": "base_link"}
    suite = Suite.build(np.zeros((1, 3)), np.ones((1, 3)) * 0.4, -np.ones((1, 3), int), np.zeros(1), meta_of)
    params = TestGeneratorParams(config=str(config), results=str(run / "results.sqlite"))
    meta = session_meta(suite, tmp_path / "suite.parquet", params, 1)
    assert not Path(meta["config_path"]).is_absolute()
    assert kept_path(run, meta["config_path"]) == config.resolve()
