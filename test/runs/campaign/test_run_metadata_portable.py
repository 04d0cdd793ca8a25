"""A run keeps no absolute path of the machine: the same configuration in two folders gives the same metadata.

Two copies of the shipped configuration (with the URDF and meshes it names) in two temporary folders, a
campaign of one case beside each: the meta table of ``results.sqlite``, ``inputs.json`` and the ``run`` part of
``summary.json`` are equal, hold neither folder, and name the configuration relative to the run directory, where
``cosim report`` finds it again.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root
from cosim_validation.runs.run_inputs import kept_path

_TIMES = ("started", "finished", "wall_s", "command", "created")  # meta of when and how, not of what


def _copy_of_the_project(folder: Path) -> Path:
    for name in ("config", "urdf", "meshes"):
        shutil.copytree(package_root() / name, folder / name)
    return folder / "config" / "needle_insertion.yaml"


def _metadata(run: Path) -> dict[str, object]:
    with sqlite3.connect(run / "results.sqlite") as db:
        meta = {k: json.loads(v) for k, v in db.execute("SELECT key, value FROM meta") if k not in _TIMES}
    summary = json.loads((run / "summary.json").read_text())
    return {"meta": meta, "inputs": json.loads((run / "inputs.json").read_text()), "run": summary["run"]}


@pytest.mark.slow
def test_two_copies_of_a_configuration_give_equal_metadata(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    suite = tmp_path / "suite.parquet"
    shipped = package_root() / "config" / "needle_insertion.yaml"
    argv = ["testgen", "--config", str(shipped), "--method", "random", "--count", "1", "--granularity-mm", "60"]
    assert main([*argv, "-o", str(suite)]) == 0
    found = {}
    for name in ("a", "b"):
        config = _copy_of_the_project(tmp_path / name)
        run = tmp_path / name / "run"
        argv = ["campaign", "--config", str(config), "--suite", str(suite), "--backends", "virtual"]
        assert main([*argv, "--workers", "1", "--out", str(run)]) == 0, capfd.readouterr().err
        found[name] = _metadata(run)
        text = json.dumps(found[name])
        assert str(tmp_path) not in text  # no absolute path of this machine
        assert kept_path(run, found[name]["meta"]["config_path"]) == config.resolve()
    assert found["a"] == found["b"]
    assert found["a"]["meta"]["config_path"] == "../config/needle_insertion.yaml"
    assert main(["report", str(tmp_path / "b" / "run")]) == 0  # the report finds the run's configuration


@pytest.mark.slow
def test_a_run_moved_deeper_resumes_with_its_own_copy_of_the_properties(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The copied configuration names its properties relative to the original's folder, which the manifest keeps
    relative to the run directory: moved deeper, that folder is not found, and a resume failed with 'property file not
    found' although the run holds its copy (the sixth hostile trial)."""
    suite = tmp_path / "suite.parquet"
    config = _copy_of_the_project(tmp_path / "project")
    argv = ["testgen", "--config", str(config), "--method", "random", "--count", "2", "--granularity-mm", "60"]
    assert main([*argv, "-o", str(suite)]) == 0
    run = tmp_path / "run"
    campaign = ["campaign", "--config", str(config), "--suite", str(suite), "--backends", "virtual", "--workers", "1"]
    assert main([*campaign, "--out", str(run)]) == 0, capfd.readouterr().err
    moved = tmp_path / "moved" / "deeper" / "run"
    moved.parent.mkdir(parents=True)
    shutil.move(run, moved)
    with sqlite3.connect(moved / "results.sqlite") as db:  # the last case to run again
        (last,) = db.execute("SELECT test_id FROM cases ORDER BY case_index DESC LIMIT 1").fetchone()
        for table in ("verdicts", "kpis", "trajectories", "events", "timings", "cases"):
            db.execute(f"DELETE FROM {table} WHERE test_id = ?", (last,))
    db.close()
    capfd.readouterr()
    assert main([*campaign, "--out", str(moved), "--resume"]) == 0, capfd.readouterr().err
    with sqlite3.connect(moved / "results.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM cases").fetchone() == (2,)
    db.close()
