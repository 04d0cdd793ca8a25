"""Bad hazard inputs (issue 19): scenario libraries, hazard filters, ``cosim hazards`` command lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from cosim_validation.common.config import package_root
from test.robustness.harness import Case, Workspace, run_case

HazardCase = Callable[[Path, Workspace], Case]
SHIPPED = package_root() / "config" / "hazards.yaml"
_RUN_CASE = ["run-case", "--backend", "emulated", "--target", "0.45", "0.0", "0.05"]


def _library(folder: Path, old: str, new: str) -> Path:
    text = SHIPPED.read_text()
    assert old in text, old
    path = folder / "bad_hazards.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def _run(folder: Path, ws: Workspace, *extra: str) -> Case:
    out = folder / "hz"
    argv = ["hazards", "run", "--config", str(ws.config), "--suite", str(ws.suite), "--out", str(out), *extra]
    return Case(argv, (), (out,))


def _library_case(old: str, new: str, *names: str) -> HazardCase:
    def build(folder: Path, ws: Workspace) -> Case:
        library = _library(folder, old, new)
        case = _run(folder, ws, "--library", str(library))
        return Case(case.argv, (str(library), *names), case.absent)

    return build


def _filter_case(old: str, new: str, scenario: str, *names: str) -> HazardCase:
    def build(folder: Path, ws: Workspace) -> Case:
        library = _library(folder, old, new)
        argv = [*_RUN_CASE, "--config", str(ws.config), "--filter", f"physical=hazards:{scenario}@{library}"]
        return Case(argv, names)

    return build


def _campaign(folder: Path, ws: Workspace, *extra: str) -> list[str]:
    base = ["campaign", "--config", str(ws.config), "--suite", str(ws.suite), "--backends", "virtual,physical"]
    return [*base, "--out", str(folder / "run"), *extra]


def _session(folder: Path, ws: Workspace, *extra: str) -> list[str]:
    return ["session", "--suite", str(ws.suite), "--out", str(folder / "session"), *extra]


_DROPOUT = "variables: all\n    fault: {model: drop}\n    trigger: {kind: time, at_s: 5.0}"

CASES: dict[str, HazardCase] = {
    "library:unknown_strike": _library_case(
        "strike: encoder", "strike: motor", "scenarios.permanently_unavailable.strike"
    ),
    "library:unknown_model": _library_case("{model: stuck}", "{model: melt}", "permanently_unavailable.fault.model"),
    "library:overlapping_windows": _library_case(
        "duration_s: 0.3", "duration_s: 9.0", "sudden_jump.duration_s", "overlap"
    ),
    "library:no_trigger_time": _library_case(
        "{kind: time, at_s: 5.0}", "{kind: time}", "temporarily_unavailable.trigger", "at_s"
    ),
    "library:unknown_field": _library_case(
        _DROPOUT, _DROPOUT.replace("all", "[colour]"), "tracker_dropout.variables", "'colour'"
    ),
    "library:unknown_stage": _library_case(
        "{kind: stage, stage: injection}",
        "{kind: stage, stage: insertion}",
        "encoder_offset_during_injection.trigger.stage",
        "'insertion'",
    ),
    "library:stage_trigger_without_stage": _library_case(
        "{kind: stage, stage: injection}", "{kind: stage}", "encoder_offset_during_injection.trigger", "needs stage"
    ),
    "library:negative_duration": _library_case("duration_s: 1.5", "duration_s: -1.5", "duration_s", "-1.5"),
    "filter:unknown_joint": _filter_case(
        "variables: [joint1]",
        "variables: [shoulder]",
        "sudden_jump",
        "bad_hazards.yaml",
        "scenarios.sudden_jump.variables[0]",
        "'shoulder'",
    ),
    "filter:unknown_scenario": lambda f, ws: Case(
        [*_RUN_CASE, "--config", str(ws.config), "--filter", "physical=hazards:nope"], ("'nope'", "sudden_jump")
    ),
    "hazards:unknown_scenario": lambda f, ws: Case(
        _run(f, ws, "--scenarios", "nope").argv, ("--scenarios", "'nope'"), (f / "hz",)
    ),
    "hazards:threshold_negative": lambda f, ws: Case(
        _run(f, ws, "--threshold-mm", "-3").argv, ("--threshold-mm", "-3"), (f / "hz",)
    ),
    "hazards:no_suite": lambda f, ws: Case(["hazards", "run", "--out", str(f / "hz")], ("--suite",), (f / "hz",)),
    # a supervisor without --mitigate was ignored, exit 0 (even one that does not exist)
    "hazards:supervisor_without_mitigate": lambda f, ws: Case(
        _run(f, ws, "--supervisor", str(f / "x.yaml")).argv, ("--supervisor: only with --mitigate",), (f / "hz",)
    ),
    "hazards:mitigate_without_thresholds": lambda f, ws: Case(
        _run(f, ws, "--scenarios", "sudden_jump", "--mitigate").argv, ("--mitigate", "--threshold-mm"), (f / "hz",)
    ),
    "detector:unknown_key": lambda f, ws: Case(
        _campaign(f, ws, "--detector", "tip_mm=3,elbow=1"), ("--detector", "'elbow'"), (f / "run",)
    ),
    "detector:not_a_number": lambda f, ws: Case(
        _campaign(f, ws, "--detector", "tip_mm=three"), ("--detector", "tip_mm", "'three'"), (f / "run",)
    ),
    "detector:tip_1e300": lambda f, ws: Case(
        _campaign(f, ws, "--detector", "tip_mm=1e300"), ("--detector", "tip_mm", "never raise an alarm"), (f / "run",)
    ),
    "detector:joint_two_turns": lambda f, ws: Case(
        _campaign(f, ws, "--detector", "joint=12.6"), ("--detector", "joint", "at most 6.28319"), (f / "run",)
    ),
    "detector:stop_without_supervisor": lambda f, ws: Case(
        _campaign(f, ws, "--detector", "tip_mm=3", "--stop-on-alarm"), ("stop on alarm", "--supervisor"), (f / "run",)
    ),
    "detector:session_no_detector": lambda f, ws: Case(
        _session(f, ws, "--detector", ","), ("--detector", "no detector chosen"), (f / "session",)
    ),
    "detector:session_negative_progress": lambda f, ws: Case(
        _session(f, ws, "--detector", "progress=-1"), ("--detector", "progress", "'-1'"), (f / "session",)
    ),
    "hazards:table_of_nothing": lambda f, ws: Case(["hazards", "table", "--out", str(f)], ("hazards.sqlite",)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_hazard_inputs(name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]) -> None:
    run_case(CASES[name](tmp_path, workspace), sorted(CASES).index(name) % 2 == 1, capfd)
