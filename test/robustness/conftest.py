"""The corpus's workspace: valid inputs made once per session from the shipped files (see harness.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.config import package_root
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from test.robustness.harness import Workspace


@pytest.fixture(scope="session")
def workspace(
    tmp_path_factory: pytest.TempPathFactory, suites: tuple[Path, Path], reference: CampaignOutcome
) -> Workspace:
    from cosim_validation.common.config import load_config
    from cosim_validation.robots.model import RobotConfig
    from cosim_validation.runs.campaign.results_db import ResultsDB
    from test.live.ros.test_replay import foreign_bag

    folder = tmp_path_factory.mktemp("workspace")
    config_dir = folder / "config"
    config_dir.mkdir()
    for name in ("needle_insertion.yaml", "properties.yaml", "digital_twin.yaml"):
        shutil.copyfile(package_root() / "config" / name, config_dir / name)
    kinematics = RobotConfig.from_config(load_config(config_dir / "needle_insertion.yaml")["robot"]).kinematics
    records = {}
    with ResultsDB.open(reference.out_dir / "results.sqlite") as db:  # as `cosim export` writes them
        test_id = next(c.test_id for c in db.cases() if c.outcome == "completed")
        (folder / "records" / test_id).mkdir(parents=True)
        for robot in ("expected", "virtual", "physical"):
            records[robot] = folder / "records" / test_id / f"{robot}.npz"
            db.trajectory(test_id, robot, kinematics).save(records[robot])
    bag = folder / "theirs.mcap"
    home = np.array([0.0, -0.4, 0.0, 1.46, 0.0, 1.3, 0.0])
    foreign_bag(bag, home + np.sin(np.linspace(0, np.pi, 20))[:, None] * 0.1)
    return Workspace(
        config=config_dir / "needle_insertion.yaml",
        properties=config_dir / "properties.yaml",
        graph=config_dir / "digital_twin.yaml",
        suite=suites[0],
        run_dir=reference.out_dir,
        records=records,
        bag=bag,
    )
