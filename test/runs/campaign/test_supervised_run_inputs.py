"""A supervised campaign keeps copies of the supervisor's files (issue 20): its configuration, machine and goals,
needle force model and scenario, in RUN/inputs/ and the manifest, and reads them back: its workers load the
supervisor from the copies, a resume checks that its options name the run's own files (kept relative to the run
directory, so from any working directory), refuses an edited machine like an edited property file, and resumes
from the copies once the originals are gone; ``cosim supervisor check|show RUN`` use the machine and goals the run
kept."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.runs.run_inputs import kept_path
from test.runs.campaign.run_fixtures import CONFIG

SUPERVISOR_ROLES = {"supervisor", "supervisor_machine", "supervisor_goals", "needle_force", "supervisor_scenario"}


def _drop_a_case(run: Path) -> None:
    from cosim_validation.runs.campaign.db_salvage import CASE_TABLES

    with sqlite3.connect(run / "results.sqlite") as db:
        (dropped,) = db.execute("SELECT test_id FROM cases ORDER BY test_id DESC LIMIT 1").fetchone()
        for table in CASE_TABLES:
            db.execute(f"DELETE FROM {table} WHERE test_id = ?", (dropped,))


def test_a_supervised_run_keeps_and_reads_its_supervisor_files(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the supervisor's files are given relative to here
    folder = tmp_path / "supervisor"
    shutil.copytree(CONFIG.parent / "supervisor", folder)
    machine = folder / "needle_insertion.yaml"
    scenario = tmp_path / "abort.yaml"  # every case stopped early: short cases
    scenario.write_text("scenario:\n  actions:\n    - {when: {state: MoveToSource, after_s: 0.3}, request: abort}\n")
    suite, run = tmp_path / "suite.parquet", tmp_path / "run"
    argv = ["testgen", "--config", str(CONFIG), "--method", "random", "--granularity-mm", "90", "--count", "2"]
    assert main([*argv, "--region", "heart_side_7pct", "-o", str(suite)]) == 0
    campaign = ["campaign", "--config", str(CONFIG), "--suite", str(suite), "--backends", "virtual", "--workers", "1"]
    relative = ["--supervisor", "supervisor/supervisor.yaml", "--supervisor-scenario", "abort.yaml", "--out", str(run)]
    assert main([*campaign, *relative]) == 0

    manifest = json.loads((run / "inputs.json").read_text())
    assert set(manifest) >= SUPERVISOR_ROLES
    assert kept_path(run, manifest["supervisor_machine"]["original"]) == machine.resolve()
    goals = folder / "needle_insertion.goals.yaml"
    assert kept_path(run, manifest["supervisor_goals"]["original"]) == goals.resolve()
    assert kept_path(run, manifest["supervisor_scenario"]["original"]) == scenario.resolve()
    for role in SUPERVISOR_ROLES:
        entry = manifest[role]
        assert (run / entry["copy"]).read_bytes() == kept_path(run, entry["original"]).read_bytes(), role

    _drop_a_case(run)
    shipped = machine.read_text()
    machine.write_text(shipped.replace("priority: outer_first", "priority: inner_first"))
    capfd.readouterr()
    assert main([*campaign, *relative, "--resume"]) == 1
    err = capfd.readouterr().err
    assert err.count("error:") == 1
    assert "cannot resume, it was made with another config" in err
    assert str(machine.resolve()) in err  # names the edited file
    machine.write_text(shipped)

    # from another directory the same relative paths name other files: refused, naming the run's; absolute ones
    # name the run's files and resume it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main([*campaign, *relative, "--resume"]) == 1
    err = capfd.readouterr().err
    assert err.count("error:") == 1
    assert f"cannot resume, it was made with another supervisor: {(folder / 'supervisor.yaml').resolve()}" in err
    absolute = ["--supervisor", str(folder / "supervisor.yaml"), "--supervisor-scenario", str(scenario)]
    assert main([*campaign, *absolute, "--out", str(run), "--resume"]) == 0
    assert "1 cases run" in capfd.readouterr().out

    # the originals gone: the resume reads the run's copies (a warning names each file)
    monkeypatch.chdir(tmp_path)
    _drop_a_case(run)
    folder.rename(tmp_path / "moved")
    scenario.rename(tmp_path / "moved.yaml")
    assert main([*campaign, *relative, "--resume"]) == 0
    out, err = capfd.readouterr()
    assert "1 cases run" in out
    assert "error:" not in err
    assert err.count("gone since the run started; the resume reads the run's copy") == len(SUPERVISOR_ROLES)

    # the run's machine and goals, model-checked and shown from the run directory (no original left)
    assert (
        main(
            [
                "supervisor",
                "check",
                str(run),
                "--goal",
                "motion_stops_on_exception",
                "--out",
                str(tmp_path / "mc"),
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capfd.readouterr().out)
    assert report["machine_file"] == str(run / manifest["supervisor_machine"]["copy"])
    assert report["goals_file"] == str(run / manifest["supervisor_goals"]["copy"])
    assert [g["goal"] for g in report["goals"]] == ["motion_stops_on_exception"]
    assert main(["supervisor", "show", str(run)]) == 0
    assert "TaskStopped" in capfd.readouterr().out
