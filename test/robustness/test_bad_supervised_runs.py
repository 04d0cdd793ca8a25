"""A run directory where ``cosim supervisor check|replay|show`` expect a supervised run: not one, or one whose
copies of the supervisor's files are damaged (a copy missing or edited since, no goals kept). The runs are made by
the function a campaign uses (``capture_inputs`` of the shipped supervisor's files), then damaged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from test.robustness.harness import Case, Workspace, run_case


def _run(folder: Path, drop: str = "") -> Path:
    """A supervised run's inputs (the shipped supervisor, no scenario), without the role ``drop``."""
    from cosim_validation.runs.run_inputs import capture_inputs, supervision_files

    run = folder / "run"
    files = supervision_files("config/supervisor/supervisor.yaml", None)
    capture_inputs(run, {role: path for role, path in files.items() if role != drop})
    return run


def _copy(run: Path, role: str) -> Path:
    return run / json.loads((run / "inputs.json").read_text())[role]["copy"]


def _machine_missing(folder: Path, ws: Workspace) -> Case:
    run = _run(folder)
    copy = _copy(run, "supervisor_machine")
    copy.unlink()
    return Case(
        ["supervisor", "check", str(run), "--out", str(folder / "mc")], (str(copy), "missing"), (folder / "mc",)
    )


def _machine_edited(folder: Path, ws: Workspace) -> Case:
    run = _run(folder)
    copy = _copy(run, "supervisor_machine")
    copy.write_text(copy.read_text() + "\n# edited\n")
    return Case(["supervisor", "show", str(run)], (str(copy), "changed since the run was made"))


def _no_goals(folder: Path, ws: Workspace) -> Case:
    run = _run(folder, drop="supervisor_goals")
    copy = _copy(run, "supervisor_machine")
    return Case(
        ["supervisor", "check", str(run), "--out", str(folder / "mc")], (str(copy), "--goals"), (folder / "mc",)
    )


def _trace(folder: Path) -> Path:
    path = folder / "trace.yaml"
    path.write_text("trace:\n  - {events: [e_TaskConfigured]}\n")
    return path


RUNS: dict[str, Callable[[Path, Workspace], Case]] = {
    "show:not_a_supervised_run": lambda f, ws: Case(
        ["supervisor", "show", str(ws.run_dir)], (str(ws.run_dir), "not a supervised run", "inputs.json")
    ),
    "replay:empty_folder": lambda f, ws: Case(
        ["supervisor", "replay", str(f), str(_trace(f))], (str(f), "not a supervised run")
    ),
    "check:machine_copy_missing": _machine_missing,
    "show:machine_copy_edited": _machine_edited,
    "check:no_goals_kept": _no_goals,
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_bad_supervised_runs(
    name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    run_case(RUNS[name](tmp_path, workspace), sorted(RUNS).index(name) % 2 == 1, capfd)
