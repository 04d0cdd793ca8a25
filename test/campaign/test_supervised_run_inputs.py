"""A supervised campaign keeps copies of the supervisor's files (issue 20): its configuration, machine, needle force
model and scenario, in RUN/inputs/ and the manifest; a resume with an edited machine is refused like one with an
edited property file, and runs once the machine is put back."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from test.campaign.run_fixtures import CONFIG

SUPERVISOR_ROLES = {"supervisor", "supervisor_machine", "needle_force", "supervisor_scenario"}


def test_a_supervised_run_keeps_its_supervisor_files(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    from cosim_validation.campaign.db_salvage import CASE_TABLES

    folder = tmp_path / "supervisor"
    shutil.copytree(CONFIG.parent / "supervisor", folder)
    machine = folder / "needle_insertion.yaml"
    scenario = tmp_path / "abort.yaml"  # every case stopped early: short cases
    scenario.write_text("scenario:\n  actions:\n    - {when: {state: MoveToSource, after_s: 0.3}, request: abort}\n")
    suite, run = tmp_path / "suite.parquet", tmp_path / "run"
    argv = ["testgen", "--config", str(CONFIG), "--method", "random", "--granularity-mm", "90", "--count", "2"]
    assert main([*argv, "--region", "heart_side_7pct", "-o", str(suite)]) == 0
    campaign = ["campaign", "--config", str(CONFIG), "--suite", str(suite), "--backends", "virtual", "--workers", "1"]
    campaign += ["--supervisor", str(folder / "supervisor.yaml"), "--supervisor-scenario", str(scenario)]
    campaign += ["--out", str(run)]
    assert main(campaign) == 0

    manifest = json.loads((run / "inputs.json").read_text())
    assert set(manifest) >= SUPERVISOR_ROLES
    assert Path(manifest["supervisor_machine"]["original"]) == machine.resolve()
    assert Path(manifest["supervisor_scenario"]["original"]) == scenario.resolve()
    for role in SUPERVISOR_ROLES:
        entry = manifest[role]
        assert (run / entry["copy"]).read_bytes() == Path(entry["original"]).read_bytes(), role

    with sqlite3.connect(run / "results.sqlite") as db:
        (dropped,) = db.execute("SELECT test_id FROM cases ORDER BY test_id DESC LIMIT 1").fetchone()
        for table in CASE_TABLES:
            db.execute(f"DELETE FROM {table} WHERE test_id = ?", (dropped,))
    shipped = machine.read_text()
    machine.write_text(shipped.replace("priority: outer_first", "priority: inner_first"))
    assert machine.read_text() != shipped
    capfd.readouterr()
    assert main([*campaign, "--resume"]) == 1
    err = capfd.readouterr().err
    assert err.count("error:") == 1
    assert "cannot resume, it was made with another config" in err
    machine.write_text(shipped)
    assert main([*campaign, "--resume"]) == 0
    assert "1 cases run" in capfd.readouterr().out
