"""Same case, same verdict on the dVRK PSM and the Raven-II: ``cosim session`` over DDS (config/<robot>_twin.yaml:
MuJoCo and the emulated cable-driven arm behind the driver nodes) and ``cosim campaign`` (config/<robot>_insertion.yaml)
give a case the same outcome, verdicts and KPIs on every robot (issue 17; see test_live_equals_batch.py)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cosim_validation.campaign.results_db import ResultsDB
from cosim_validation.cli.main import main

pytestmark = [pytest.mark.ros, pytest.mark.slow]

TOLERANCE = 1e-9  # m, rad or s


def _rows(db_path: Path) -> tuple[dict, dict, dict]:  # type: ignore[type-arg]
    with ResultsDB.open(db_path) as db:
        cases = {c.test_id: (c.outcome, c.message) for c in db.cases()}
        verdicts = {(v.test_id, v.property, v.robot): (v.status, v.margin) for v in db.verdicts()}
        kpis = {(k.test_id, k.name, k.robot, k.stage): k.value for k in db.kpis()}
    return cases, verdicts, kpis


def _same(a: float | None, b: float | None) -> bool:
    a, b = (math.nan if v is None else float(v) for v in (a, b))
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b if math.isinf(a) or math.isinf(b) else abs(a - b) <= TOLERANCE


@pytest.mark.parametrize("robot", ["dvrk_psm", "raven2"])
def test_a_surgical_arm_case_is_the_same_live_and_in_batch(
    robot: str, tmp_path: Path, repo_root: Path, node_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    config = repo_root / "config" / f"{robot}_insertion.yaml"
    suite = tmp_path / "suite.parquet"
    testgen = ["testgen", "--config", str(config), "--method", "random", "--granularity-mm", "40", "--count", "2"]
    assert main([*testgen, "--seed", "1", "-o", str(suite)]) == 0
    graph = repo_root / "config" / f"{robot}_twin.yaml"
    live_dir, batch_dir = tmp_path / "session", tmp_path / "campaign"
    assert main(["session", "--config", str(graph), "--suite", str(suite), "--cases", "1", "--out", str(live_dir)]) == 0
    campaign = ["campaign", "--config", str(config), "--suite", str(suite), "--backends", "virtual,physical"]
    assert main([*campaign, "--workers", "1", "--out", str(batch_dir)]) == 0
    capsys.readouterr()
    (live_cases, live_verdicts, live_kpis) = _rows(live_dir / "results.sqlite")
    (batch_cases, batch_verdicts, batch_kpis) = _rows(batch_dir / "results.sqlite")

    assert len(live_cases) == 1
    test_id = next(iter(live_cases))
    assert live_cases[test_id] == batch_cases[test_id]
    assert live_cases[test_id][0] == "completed"
    assert {r for _, _, r in live_verdicts} == {"expected", "virtual", "physical"}
    for key, (status, margin) in live_verdicts.items():
        assert status == batch_verdicts[key][0], key
        assert _same(margin, batch_verdicts[key][1]), (key, margin, batch_verdicts[key][1])
    assert live_kpis.keys() <= batch_kpis.keys()
    assert any(k[1] == "insertion_deviation_max" and k[2] == "physical" for k in live_kpis)
    for key, value in live_kpis.items():
        assert _same(value, batch_kpis[key]), (key, value, batch_kpis[key])
