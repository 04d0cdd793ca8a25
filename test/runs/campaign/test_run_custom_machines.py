"""A property file may name its own behaviour machine files (relative to its folder). A campaign's run keeps a copy
of the property file in RUN/inputs/; the machine files it names are copied beside it and the copy names those, so
the run's workers, a resume and ``cosim report`` find them. (Before, ``cosim check`` accepted such a property file
and ``cosim campaign`` failed: its workers looked for the machine next to the copy.)"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.runs.run_inputs import kept_path
from test.runs.campaign.run_fixtures import CONFIG


def test_a_runs_property_copy_reads_its_own_machine_files(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    studies = tmp_path / "study"
    shutil.copytree(CONFIG.parent, studies, ignore=shutil.ignore_patterns("*.sqlite"))
    machines = studies / "mine"
    machines.mkdir()
    shipped = (studies / "behaviours" / "stage_order.yaml").read_text()
    order = shipped.replace("machine: stage_order", "machine: my_order")
    (machines / "my_order.yaml").write_text(order)
    properties = studies / "properties.yaml"
    shipped_machines = "machines: [stage_order, no_retraction_during_injection, settles_at_target]"
    assert shipped_machines in properties.read_text()
    mine = "machines: [mine/my_order.yaml, settles_at_target]"
    properties.write_text(properties.read_text().replace(shipped_machines, mine))
    config = studies / CONFIG.name
    suite, run = tmp_path / "suite.parquet", tmp_path / "run"
    testgen = ["testgen", "--config", str(config), "--method", "random", "--granularity-mm", "90", "--count", "2"]
    assert main([*testgen, "--region", "heart_side_7pct", "-o", str(suite)]) == 0
    campaign = ["campaign", "--config", str(config), "--suite", str(suite), "--backends", "virtual", "--workers", "1"]
    assert main([*campaign, "--out", str(run)]) == 0

    manifest = json.loads((run / "inputs.json").read_text())
    copy = run / manifest["properties"]["copy"]
    assert kept_path(run, manifest["properties"]["original"]) == properties.resolve()
    kept_machine = copy.with_name(f"{copy.stem}-machine-0-my_order.yaml")
    assert kept_machine.read_text() == order
    with sqlite3.connect(run / "results.sqlite") as db:
        names = {name for (name,) in db.execute("SELECT DISTINCT property FROM verdicts")}
    assert {"machine:my_order", "machine:settles_at_target"} <= names  # the run judged with the user's machine

    (machines / "my_order.yaml").unlink()  # the run reads its own copies from now on
    capfd.readouterr()
    assert main(["report", str(run)]) == 0
    assert "error:" not in capfd.readouterr().err
