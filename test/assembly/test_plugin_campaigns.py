"""A user's controller in campaigns of 20 cases on the virtual robot: the same rows as the built-in controller it
reimplements, and every run-time misbehaviour of a closed-loop controller stored as its case's outcome while the
next case still runs."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from cosim_validation.assembly import AssemblySpec, CaseAssembly
from cosim_validation.runs.campaign.campaign_runner import CampaignRequest, run_campaign
from cosim_validation.runs.campaign.result_rows import kpi_row
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.testgen import Suite
from test.runs.campaign.run_fixtures import CONFIG

SAMPLES = "test.controllers.plugin_samples"


def write_config(folder: Path, default: Any) -> Path:
    """The shipped case study with ``controllers.default`` replaced, written into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    tree = yaml.safe_load(CONFIG.read_text())
    tree["controllers"]["default"] = default
    tree["robot"]["urdf"] = str((CONFIG.parent / tree["robot"]["urdf"]).resolve())
    (folder / "properties.yaml").write_text((CONFIG.parent / "properties.yaml").read_text())
    path = folder / "case.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


def campaign(config: Path, suites: tuple[Path, ...], out: Path) -> dict[str, Any]:
    """Run the suites on the virtual robot in this process; every stored row."""
    request = CampaignRequest(config, tuple(suites), out, backends=("virtual",), workers=1)
    run_campaign(request, progress_stream=None)
    with ResultsDB.open(out / "results.sqlite") as db:
        return {"cases": db.cases(), "verdicts": db.verdicts(), "kpis": db.kpis()}


@pytest.fixture(scope="module")
def straight(suites: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The built-in straight controller over the 20 cases."""
    folder = tmp_path_factory.mktemp("straight")
    return campaign(write_config(folder, "straight"), suites, folder / "run")


def _without_controller(rows: dict[str, Any]) -> list[Any]:
    return [replace(c, controller="", message="") for c in rows["cases"]]


@pytest.mark.parametrize(
    "default",
    [
        f"{SAMPLES}:make_planning",  # planning contract
        {"plugin": f"{SAMPLES}:make_replay", "options": {"declare": True}},  # closed loop with a reference
        {"plugin": f"{SAMPLES}:make_replay", "options": {"declare": False}},  # closed loop, commands expected
    ],
    ids=["planning", "closed_loop_reference", "closed_loop_commands"],
)
def test_a_plugin_campaign_equals_the_builtin_one(
    default: Any, straight: dict[str, Any], suites: tuple[Path, Path], tmp_path: Path
) -> None:
    """The same plan through the plugin gives the same outcomes, verdicts and KPIs as ``straight`` (the variant
    without a reference on the grid suite alone, to keep the test short)."""
    declared = not isinstance(default, dict) or default["options"]["declare"]
    chosen = suites if declared else suites[:1]
    rows = campaign(write_config(tmp_path, default), chosen, tmp_path / "run")
    assert len(rows["cases"]) == (20 if declared else 8)
    if not declared:
        ids = {c.test_id for c in rows["cases"]}
        straight = {k: [r for r in v if r.test_id in ids] for k, v in straight.items()}
    assert {c.outcome for c in rows["cases"]} >= {"completed"}
    assert _without_controller(rows) == _without_controller(straight)
    assert rows["verdicts"] == straight["verdicts"]
    assert rows["kpis"] == straight["kpis"]
    name = default if isinstance(default, str) else default["plugin"]
    assert {c.controller for c in rows["cases"]} == {name}


def test_run_case_path_equals_the_campaign(straight: dict[str, Any], suites: tuple[Path, Path], tmp_path: Path) -> None:
    """What ``cosim run-case``/``check`` do for one case (``run_batch`` then ``check``) gives the campaign's KPIs."""
    config = write_config(tmp_path, {"plugin": f"{SAMPLES}:make_replay"})
    assembly = CaseAssembly(AssemblySpec(str(config), ("mujoco",)))
    try:
        case = Suite.read(suites[0]).case(0)
        batch = assembly.run_batch(case)
        reports = assembly.check(batch, case.target_m)
    finally:
        assembly.close()
    virtual = next(r for r in reports if r.robot == "virtual")
    stored = {
        (k.name, k.stage): k.value for k in straight["kpis"] if k.test_id == case.test_id and k.robot == "virtual"
    }
    mine = {(r.name, r.stage): r.value for r in (kpi_row(case.test_id, k) for k in virtual.kpis)}
    assert mine.keys() == stored.keys()
    for key, value in mine.items():
        unknown = value is None or math.isnan(value)
        assert (stored[key] is None) if unknown else value == stored[key], key


FAULTS = ["raise", "none", "nan", "none", "length", "none", "limits", "none", "slow", "none", "never", "none"]
FAULTS += ["bad_command", "none"]
REASONS = {
    "raise": "controller error: step raised RuntimeError: the servo lost its marker",
    "nan": "NaN setpoint",
    "length": "wrong joint count: setpoint of shape (6,)",
    "limits": "setpoint outside the joint limits: joint1",
    "slow": "step budget exceeded",
    "never": "time limit: the controller was not done after 30 s (its setpoint last changed at t = 0.200 s)",
    "bad_command": "bad command: step returned a str, not a Command",
}


def test_closed_loop_misbehaviour_ends_its_case_only(suites: tuple[Path, Path], tmp_path: Path) -> None:
    """Each fault aborts its case with the reason stored; the case after it completes."""
    options = {"faults": FAULTS, "after_s": 0.3}
    default = {"plugin": f"{SAMPLES}:make_faulty", "options": options, "step_budget_s": 1.0, "time_limit_s": 30}
    rows = campaign(write_config(tmp_path, default), suites, tmp_path / "run")
    cases = sorted(rows["cases"], key=lambda c: c.case_index)
    assert len(cases) == 20
    started = [c for c in cases if c.outcome != "refused"]
    for case, fault in zip(started, FAULTS * 2, strict=False):
        if fault == "none":
            assert case.outcome == "completed", (case.test_id, case.message)
        else:
            assert case.outcome == "aborted", (fault, case.message)
            assert REASONS[fault] in case.message, (fault, case.message)
    seen = {fault for case, fault in zip(started, FAULTS * 2, strict=False)}
    assert seen >= set(REASONS), f"only {len(started)} cases started: not every fault was tried"
    # the report says why each started case did not complete, as stored (summary.json: the first 10 of them)
    from cosim_validation.runs.report.report_builder import build_report

    report = build_report(tmp_path / "run")
    aborted = [c for c in cases if c.outcome == "aborted"]
    listed = report.summary["report"]["run"]["stopped"]
    assert [(c["test_id"], c["message"]) for c in listed] == [(c.test_id, c.message) for c in aborted][:20]
    assert report.summary["aborted"] == [{"test_id": c.test_id, "message": c.message} for c in aborted][:10]
    page = report.html_path.read_text()
    assert f"Why {len(aborted)} started cases did not complete" in page
    # the property table counts the completed cases' verdicts; the aborted cases' are counted apart
    outcome_of = {c.test_id: c.outcome for c in cases}
    table = report.summary["report"]["properties"]["verdicts"]
    for row in table:
        mine = [v for v in rows["verdicts"] if (v.property, v.robot) == (row["property"], row["robot"])]
        whole = sum(outcome_of[v.test_id] == "completed" for v in mine)
        assert row["holds"] + row["violated"] + row["unknown"] == whole, row
        assert row["stopped"] == len(mine) - whole, row
    assert sum(row["stopped"] for row in table) > 0
    assert "counted apart, in the last column" in page
    assert "controller error: step raised RuntimeError: the servo lost its marker" in page


#: commands a controller's step may return or raise that ended in tracebacks or "failed" cases: each aborts its case
MORE_FAULTS = {
    "stage_text": "bad command: stage 'injection' at t = 0.300 s is not a Stage (Stage.NONE",
    "stage_42": "bad command: stage 42 at t = 0.300 s is not a Stage",
    "reason_dict": "bad command: done with a reason of type dict, not text",
    "base_exception": "controller error: step raised ControllerExitError: raise _Weird(outside Exception)",
    "kind_text": "bad command: kind 'setpoint' is not a CommandKind (CommandKind.SETPOINT",
    "list_nan": "NaN setpoint: [nan, nan",
    "unprintable": "step raised _UnprintableError: (its message could not be shown: its __str__ raised)",
}


def test_a_step_with_a_stage_or_reason_of_the_wrong_kind_ends_its_case_only(
    suites: tuple[Path, Path], tmp_path: Path
) -> None:
    faults = [f for fault in MORE_FAULTS for f in (fault, "none")]
    options = {"faults": faults, "after_s": 0.3}
    default = {"plugin": f"{SAMPLES}:make_faulty", "options": options, "step_budget_s": 1.0, "time_limit_s": 30}
    rows = campaign(write_config(tmp_path, default), suites, tmp_path / "run")
    started = [c for c in sorted(rows["cases"], key=lambda c: c.case_index) if c.outcome != "refused"]
    seen = set()
    for case, fault in zip(started, faults, strict=False):
        if fault == "none":
            assert case.outcome == "completed", (case.test_id, case.message)
        else:
            assert case.outcome == "aborted", (fault, case.message)
            assert MORE_FAULTS[fault] in case.message, (fault, case.message)
            seen.add(fault)
    assert seen == set(MORE_FAULTS), f"only {len(started)} cases started"


@pytest.mark.parametrize("kind", ["step", "plan_case"])
def test_a_call_that_never_returns_ends_its_case_and_the_controller_is_made_again(
    kind: str, suites: tuple[Path, Path], tmp_path: Path
) -> None:
    """The first case's ``step`` (closed loop) or ``plan_case`` (planning) blocks for good: that case ends with the
    reason once the limit is past, the factory makes the controller again, and every later case runs as the
    straight controller's does; the campaign ends (the hung call stays on its own daemon thread)."""
    from test.controllers import plugin_samples

    plugin_samples.HANGS.update(hung=False, made_after=0)
    if kind == "step":
        default = {"plugin": f"{SAMPLES}:make_hanging_servo", "step_budget_s": 0.2}
        reason = "step budget exceeded: step had not returned after 2.2 s at t = 0.300 s (budget 200.0 ms)"
    else:
        default = {"plugin": f"{SAMPLES}:make_hanging_planner", "call_limit_s": 1.0}
        reason = "controller_error: plan_case had not returned after 1 s; the controller is made again"
    rows = campaign(write_config(tmp_path, default), (suites[0],), tmp_path / "run")
    cases = sorted(rows["cases"], key=lambda c: c.case_index)
    assert plugin_samples.HANGS == {"hung": True, "made_after": 1}  # made again once, for the second case
    first = cases[0]
    assert first.outcome == ("aborted" if kind == "step" else "refused"), first.message
    assert first.message.startswith(reason), first.message
    assert all(c.outcome == "completed" for c in cases[1:] if c.outcome != "refused"), [c.message for c in cases]
    assert sum(c.outcome == "completed" for c in cases[1:]) >= len(cases) // 2


def test_a_factory_that_raises_stops_the_campaign_before_its_run_directory(
    suites: tuple[Path, Path], tmp_path: Path
) -> None:
    from cosim_validation.common.exceptions import ConfigError

    config = write_config(tmp_path, {"plugin": f"{SAMPLES}:make_raising"})
    with pytest.raises(ConfigError, match=r"case\.yaml: controllers\.default\.plugin: .* raised ValueError"):
        campaign(config, suites, tmp_path / "run")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("interrupt", "called"), [(False, "sys.exit(0)"), (True, "raise KeyboardInterrupt")], ids=["sys_exit", "interrupt"]
)
def test_a_plugin_that_ends_the_process_ends_its_case_only(
    interrupt: bool, called: str, suites: tuple[Path, Path], tmp_path: Path
) -> None:
    """The first ``plan_case`` calls ``sys.exit(0)`` (or raises KeyboardInterrupt): that case is refused naming what
    the controller did, the campaign goes on and stores every case (it ended silently with exit 0 before)."""
    from test.controllers import plugin_samples

    plugin_samples.EXITS["exited"] = 0
    default = {"plugin": f"{SAMPLES}:make_exiting_planner", "options": {"interrupt": interrupt}}
    rows = campaign(write_config(tmp_path, default), (suites[0],), tmp_path / "run")
    cases = sorted(rows["cases"], key=lambda c: c.case_index)
    assert len(cases) == len(Suite.read(suites[0]))
    assert plugin_samples.EXITS["exited"] == 1
    assert cases[0].outcome == "refused"
    assert cases[0].message == (
        f"controller_error: plan_case raised ControllerExitError: {called} "
        "(a controller may not end or interrupt the process)"
    )
    assert sum(c.outcome == "completed" for c in cases[1:]) >= len(cases) // 2


def test_a_factory_that_ends_the_process_is_a_configuration_error(suites: tuple[Path, Path], tmp_path: Path) -> None:
    from cosim_validation.common.exceptions import ConfigError

    config = write_config(tmp_path, {"plugin": f"{SAMPLES}:make_exiting_factory"})
    with pytest.raises(ConfigError, match=r"controllers\.default\.plugin: .* called sys\.exit\(2\) \(a controller"):
        campaign(config, suites, tmp_path / "run")
    assert not (tmp_path / "run").exists()


FORCE_MODEL = CONFIG.parent / "supervisor" / "needle_force.yaml"


def test_a_closed_loop_plugin_senses_the_modelled_needle_force(suites: tuple[Path, Path], tmp_path: Path) -> None:
    """With ``needle_force`` the observation carries the force at the needle holder of the tissue model (Okamura
    et al. 2004) on the measured joints, period by period: the same numbers as the model run over the stored
    record afterwards; without it the force is NaN."""
    from cosim_validation.common.record import RobotRole
    from cosim_validation.supervisor.needle_force_config import load_needle_force

    sensed = {"plugin": f"{SAMPLES}:make_replay", "needle_force": str(FORCE_MODEL)}
    case = Suite.read(suites[0]).case(0)
    forces = {}
    for name, default in (("sensed", sensed), ("blind", {"plugin": f"{SAMPLES}:make_replay"})):
        assembly = CaseAssembly(AssemblySpec(str(write_config(tmp_path / name, default)), ("mujoco",)))
        try:
            batch = assembly.run_batch(case)
            forces[name] = np.array(assembly.controller().inner.forces)
            scene, kinematics = assembly.setup.scene, assembly.kinematics
        finally:
            assembly.close()
        assert batch.run.outcome == "completed", batch.run.message
    assert np.isnan(forces["blind"]).all()
    live = forces["sensed"]
    # observation p (p >= 1, at case time p dt) is what the robot answered to setpoint p - 1
    virtual = next(r for r in batch.records if r.robot is RobotRole.VIRTUAL)
    answered = virtual.q_measured[: len(live)]
    holder, tip = kinematics.needle_segments(answered)
    model = load_needle_force(FORCE_MODEL, scene)
    offline, _ = model.forces(np.arange(1, len(live) + 1) * float(virtual.t_s[1]), holder, tip)
    np.testing.assert_allclose(live, offline.holder_force_n, rtol=1e-12, atol=1e-12)
    assert live[0] == 0.0  # the needle starts outside the body
    assert live.max() > 1.0  # the chest wall's puncture, then cutting and friction inside
    punctured = offline.punctured[-1]
    assert punctured.any()


def test_needle_force_is_checked_at_load(tmp_path: Path) -> None:
    """A missing force model names its key; a planning plugin cannot take one."""
    from cosim_validation.common.exceptions import ConfigError, CosimError

    missing = write_config(tmp_path / "a", {"plugin": f"{SAMPLES}:make_replay", "needle_force": "nowhere.yaml"})
    with pytest.raises(ConfigError, match=r"controllers\.default\.needle_force: needle force model not found"):
        CaseAssembly(AssemblySpec(str(missing), ("mujoco",)))
    planning = write_config(tmp_path / "b", {"plugin": f"{SAMPLES}:make_planning", "needle_force": str(FORCE_MODEL)})
    with pytest.raises(CosimError, match="needle_force is for a closed-loop controller"):
        CaseAssembly(AssemblySpec(str(planning), ("mujoco",))).controller()


@pytest.mark.parametrize(("factory", "workers"), [("make_chatty", 2), ("make_chatty_servo", 1)])
def test_a_printing_plugin_leaves_a_campaigns_json_document_alone(
    factory: str, workers: int, suites: tuple[Path, Path], tmp_path: Path
) -> None:
    """Under ``--json`` stdout is one JSON document although the plugin prints: in the worker processes of
    ``--workers 2`` (their prints came before the document) and in ``close()`` when the process ends (after it)."""
    import json
    import subprocess
    import sys

    config = write_config(tmp_path, {"plugin": f"{SAMPLES}:{factory}"})
    argv = ["campaign", "--config", str(config), "--suite", str(suites[0]), "--backends", "virtual"]
    argv += ["--workers", str(workers), "--out", str(tmp_path / "run"), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "cosim_validation.cli.main", *argv], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-2000:]
    document = json.loads(done.stdout)  # one document, nothing before or after it
    assert document["cases"]
    said = "planning a case" if factory == "make_chatty" else "closing the servo"
    assert said in done.stderr
