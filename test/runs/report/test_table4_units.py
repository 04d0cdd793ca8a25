"""Table 4 gives each joint's deviation in its own unit (issue 17): revolute joints in degrees, a prismatic joint
(the PSM's insertion) in millimetres, never a length converted to degrees."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from cosim_validation.runs.report.run_data import load_run
from cosim_validation.runs.report.sections import virtual_vs_physical
from cosim_validation.runs.report.trajectory_stats import deviations, record_deviation

pytestmark = pytest.mark.slow


def test_the_psm_insertion_deviates_in_mm_and_its_angles_in_deg(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = package_root() / "config" / "dvrk_psm_insertion.yaml"
    suite, out = tmp_path / "suite.parquet", tmp_path / "run"
    testgen = ["testgen", "--config", str(config), "--method", "random", "--granularity-mm", "40", "--count", "2"]
    assert main([*testgen, "--seed", "1", "-o", str(suite)]) == 0
    campaign = ["campaign", "--config", str(config), "--suite", str(suite), "--backends", "virtual,physical"]
    assert main([*campaign, "--workers", "1", "--out", str(out)]) == 0
    capsys.readouterr()
    run = load_run(out)
    try:
        ids = [str(t) for t in run.completed().index]
        assert ids
        (physical,) = deviations(run, ids, robots=("physical",))
        pooled = np.concatenate(
            [record_deviation(run.trajectory(t, "physical"), run.trajectory(t, "expected"))[0] for t in ids]
        )
        names = run.kinematics.joint_names if run.kinematics is not None else ()
        insertion = names.index("insertion")
        angles = np.delete(pooled, insertion, axis=1)
        assert physical.prismatic_mm is not None
        assert physical.prismatic_mm["max"] == pytest.approx(1e3 * pooled[:, insertion].max(), rel=1e-12)
        assert physical.prismatic_mm["mean"] == pytest.approx(1e3 * pooled[:, insertion].mean(), rel=1e-12)
        assert physical.joint_deg["max"] == pytest.approx(np.degrees(angles.max()), rel=1e-12)
        assert physical.joint_deg["mean"] == pytest.approx(np.degrees(angles.mean()), rel=1e-12)
        section = virtual_vs_physical(run, max_cases=10)
        rows = {(d["robot"], d["prismatic_mm"] is not None) for d in section.data["table_4"]}
        assert rows == {("virtual", True), ("physical", True)}
    finally:
        run.close()


def test_an_arm_of_revolute_joints_has_no_prismatic_row(reference: CampaignOutcome) -> None:
    run = load_run(reference.out_dir)
    try:
        ids = [str(t) for t in run.completed().index][:3]
        stats = deviations(run, ids)
        assert stats
        assert all(d.prismatic_mm is None for d in stats)
        assert all(np.isfinite(d.joint_deg["max"]) for d in stats)
    finally:
        run.close()
