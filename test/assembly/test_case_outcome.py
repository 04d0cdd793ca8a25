"""What a case stopped early means for its behaviour tests (issue 15, item 11): a machine decided by the end of
the run (it entered red on the last sample, where the end-of-run signal is on, or ended outside green) is unknown
when the case was aborted, and violated when the case ran to its end; a machine that entered red before the end
stays violated either way. The YAML machines and the Python reference machines give the same reasons."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from cosim_validation.assembly.case_outcome import conclude_verdicts
from cosim_validation.common.config import load_config
from cosim_validation.common.record import Stage, TrajectoryRecord
from cosim_validation.controllers import InsertionSetup
from cosim_validation.monitor.properties import Status
from cosim_validation.monitor.properties.machines.behaviours import run_named
from test.monitor.properties.lt4r_reference import run_machine, shipped

TARGET = np.array([0.45, -0.05, 0.05])


@pytest.fixture(scope="module")
def plan_record() -> tuple[TrajectoryRecord, np.ndarray]:
    insertion_setup = InsertionSetup.from_config(load_config("config/needle_insertion.yaml"))
    plan = insertion_setup.controller("straight").plan_case(insertion_setup.planning.default_source_m, TARGET)
    return plan.to_record(insertion_setup.robot.kinematics, "case"), plan.line.target_m


def test_a_case_stopped_in_injection(plan_record: tuple[TrajectoryRecord, np.ndarray]) -> None:
    record, target = plan_record
    injection = np.flatnonzero(record.stage == Stage.INJECTION)
    cut = record.head(int(injection[len(injection) // 2]))  # the validator stopped it mid-injection
    result = run_named("stage_order", cut, target)
    assert result.status is Status.VIOLATED  # the end-of-run signal in injection: "the case ended early"
    assert result.reason.endswith(", at the end of the run")
    python = run_machine(shipped("stage_order"), cut, target)  # the reference machine says the same
    assert (python.status, python.reason, python.time_s) == (result.status, result.reason, result.time_s)

    (aborted,) = conclude_verdicts([result.to_verdict()], "aborted", "the state validator refused setpoint 58")
    assert aborted.status is Status.UNKNOWN
    assert math.isnan(aborted.margin)
    assert "aborted before the behaviour could complete: the state validator refused" in aborted.reason
    (completed,) = conclude_verdicts([result.to_verdict()], "completed", "")
    assert completed.status is Status.VIOLATED  # a run that really ended there did end early


def test_red_before_the_end_stays_violated(plan_record: tuple[TrajectoryRecord, np.ndarray]) -> None:
    record, target = plan_record
    stage = record.stage.copy()
    stage[stage == Stage.APPROACH] = Stage.INITIALIZATION  # the approach is skipped: out of order
    injection = np.flatnonzero(stage == Stage.INJECTION)
    skipped = dataclasses.replace(record, stage=stage).head(int(injection[-1]))
    result = run_named("stage_order", skipped, target)
    assert result.status is Status.VIOLATED
    assert not result.reason.endswith(", at the end of the run")
    (aborted,) = conclude_verdicts([result.to_verdict()], "aborted", "stopped")
    assert aborted.status is Status.VIOLATED
    assert aborted.first_violation_stage == Stage.INJECTION
