"""The Supervisor runtime on the shipped machine: the stages in order, every exception in every motion state
stops the robot in the same step, recovery only once the condition is gone, teleoperation, bad configuration."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.common.record import Stage
from cosim_validation.common.record.stage import CASE_STAGES
from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.supervisor.supervisor import Supervisor, SupervisorStatus
from cosim_validation.supervisor.supervisor_config import SupervisorConfig

CONFIG = "config/supervisor/supervisor.yaml"
TASK = "AutonomousMode.InsertionTask"


def fresh() -> tuple[Supervisor, SupervisorStatus]:
    sup = Supervisor.from_file(CONFIG)
    return sup, sup.start(0.0)


def advance_to(sup: Supervisor, stage: Stage, t_s: float = 0.0) -> tuple[SupervisorStatus, float]:
    """Configure, then finish stages until ``stage`` may run; (status, time of the last step)."""
    sup.task_configured()
    t_s += 0.1
    status = sup.step(t_s)
    for done in CASE_STAGES[: CASE_STAGES.index(stage)]:
        sup.stage_finished(done)
        t_s += 0.1
        status = sup.step(t_s)
        if status.state.endswith("WaitAtTarget"):
            t_s += 0.1
            status = sup.step(t_s)  # dwell_s = 0: the dwell ends at the next step
    assert status.stage == stage, status
    assert status.motion_allowed, status
    return status, t_s


def test_a_nominal_task_runs_the_stages_in_order() -> None:
    sup, first = fresh()
    assert first.state == f"{TASK}.Configure"
    assert not first.motion_allowed
    assert first.stage is None
    assert first.commands == ("configure_case",)
    sup.task_configured()
    stages = []
    t = 0.0
    while True:
        t += 0.1
        status = sup.step(t)
        if status.finished:
            break
        if status.stage is not None and (not stages or stages[-1] != status.stage):
            stages.append(status.stage)
        if status.stage is not None:
            sup.stage_finished(status.stage)
    assert stages == list(CASE_STAGES)
    assert status.state == "Completed"
    assert status.hold
    assert status.commands == ("report_completed",)


@pytest.mark.parametrize("stage", CASE_STAGES)
@pytest.mark.parametrize("exception", ["clearance", "force", "tracking", "abort"])
def test_every_exception_in_every_motion_state_stops_in_the_same_step(stage: Stage, exception: str) -> None:
    sup, _ = fresh()
    _, t = advance_to(sup, stage)
    sup.observe_tip(t + 0.1, True)
    if exception == "clearance":
        sup.observe_clearance(0.001)
    elif exception == "force":
        sup.observe_force(5.0)
    elif exception == "tracking":
        sup.observe_tip(t + 0.7, False)  # 0.6 s without a tip pose > 0.5 s
    else:
        sup.request("abort")
    sup.stage_finished(stage)  # the stage's own end in the same step loses against the exception
    status = sup.step(t + 0.7)
    assert status.state == "AutonomousMode.TaskStopped"
    assert not status.motion_allowed
    assert status.hold
    assert status.stage is None
    assert status.commands == ("stop_and_hold",)


def test_recovery_resumes_the_interrupted_stage_only_once_the_condition_is_gone() -> None:
    sup, _ = fresh()
    _, t = advance_to(sup, Stage.INJECTION)
    sup.observe_force(4.2)
    assert sup.step(t + 0.1).state.endswith("TaskStopped")
    sup.request("recover")  # the force is still above the limit: exception_cleared is false
    assert sup.step(t + 0.2).state.endswith("TaskStopped")
    sup.observe_force(1.0)
    sup.request("recover")
    status = sup.step(t + 0.3)
    assert status.state == f"{TASK}.Inject"
    assert status.stage is Stage.INJECTION
    assert status.motion_allowed
    assert status.commands == ("run_injection",)


def test_teleoperation_and_back() -> None:
    sup, _ = fresh()
    _, t = advance_to(sup, Stage.APPROACH)
    sup.request("teleoperation")
    status = sup.step(t + 0.1)
    assert status.teleoperation
    assert not status.motion_allowed
    assert status.commands == ("stop_and_hold", "teleoperation_on")
    sup.observe_clearance(0.0)  # ignored in teleoperation: the surgeon is in control
    assert sup.step(t + 0.2).teleoperation
    sup.request("auto")
    back = sup.step(t + 0.3)
    assert back.state.endswith("TaskStopped")
    assert back.commands == ("teleoperation_off", "stop_and_hold")


def test_exceptions_beat_a_teleoperation_request_of_the_same_step() -> None:
    sup, _ = fresh()
    _, t = advance_to(sup, Stage.INITIALIZATION)
    sup.request("teleoperation")
    sup.observe_clearance(0.0)
    assert sup.step(t + 0.1).state.endswith("TaskStopped")


def test_the_dwell_holds_at_the_target(tmp_path: Path) -> None:
    config = SupervisorConfig.load(CONFIG)
    config = replace(config, sources=replace(config.sources, dwell_s=1.0))
    sup = Supervisor(load_machine(config.machine_path), config)
    sup.start(0.0)
    _, t = advance_to(sup, Stage.INJECTION)
    sup.stage_finished(Stage.INJECTION)
    wait = sup.step(t + 0.1)
    assert wait.state.endswith("WaitAtTarget")
    assert wait.hold
    assert not wait.motion_allowed
    assert sup.step(t + 1.0).state.endswith("WaitAtTarget")
    assert sup.step(t + 1.1).stage is Stage.EXTRACTION


def test_bad_use_and_bad_configuration(tmp_path: Path) -> None:
    sup = Supervisor.from_file(CONFIG)
    with pytest.raises(InputError, match="start"):
        sup.step(0.1)
    with pytest.raises(InputError, match="unknown request 'pause'"):
        sup.request("pause")
    text = Path(CONFIG).read_text().replace("tracking: e_NeedleLost", "tracking: e_NeedleGone")
    text = text.replace(
        "machine: needle_insertion.yaml", f"machine: {Path('config/supervisor/needle_insertion.yaml').resolve()}"
    )
    bad = tmp_path / "supervisor.yaml"
    bad.write_text(text.replace("needle_force: needle_force.yaml", "needle_force: x.yaml"))
    with pytest.raises(ConfigError, match=r"supervisor\.events: machine 'needle_insertion' has no event 'e_NeedleGone"):
        Supervisor.from_file(bad)
    bad.write_text(Path(CONFIG).read_text().replace("force_limit_n: 3.5", "force_limit_n: -1"))
    with pytest.raises(ConfigError, match=r"supervisor\.sources\.force_limit_n: expected a number > 0"):
        Supervisor.from_file(bad)
