"""A closed-loop controller under the task supervisor, in the one assembly with the MuJoCo robot: the supervisor
steps first each period and tells the controller its mode; the controller's setpoints are streamed only where the
machine allows motion in its stage; an abort stops them, teleoperation moves the arm and the controller goes on
from where it was held."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.assembly import AssemblySpec, BatchCase, CaseAssembly
from cosim_validation.common.record import Stage, SupervisorMode
from cosim_validation.testgen import TestCase
from test.assembly.test_plugin_campaigns import SAMPLES, write_config
from test.supervisor.exception_cases import TARGET
from test.supervisor.test_lockstep import assembly_limit

SCENARIO = """scenario:
  teleoperation: {teleop}
  actions:
    - {{cases: [abort], when: {{state: Inject, after_s: 1.0}}, request: abort}}
    - {{cases: [teleoperation], when: {{state: Inject, after_s: 1.0}}, request: teleoperation}}
    - {{cases: [teleoperation], when: {{state: TeleoperationMode, after_s: 3.0}}, request: auto}}
    - {{cases: [teleoperation], when: {{state: TaskStopped, after_s: 0.3}}, request: recover}}
"""


@pytest.fixture(scope="module")
def assembly(tmp_path_factory: pytest.TempPathFactory) -> CaseAssembly:
    folder = tmp_path_factory.mktemp("follower")
    config = write_config(folder, f"{SAMPLES}:make_follower")
    scenario = folder / "scenario.yaml"
    scenario.write_text(SCENARIO.format(teleop=Path("config/supervisor/teleoperation_example.yaml").resolve()))
    supervisor = str(Path("config/supervisor/supervisor.yaml").resolve())
    spec = AssemblySpec(str(config), engines=("mujoco",), supervisor=supervisor, supervisor_scenario=str(scenario))
    return CaseAssembly(spec)


@pytest.fixture(scope="module")
def runs(assembly: CaseAssembly) -> dict[str, tuple[BatchCase, Any]]:
    """Each case's batch run and what the controller kept of it (it is the same object for every case)."""
    out = {}
    follower = assembly.controller().inner  # type: ignore[union-attr]
    for test_id in ("nominal", "abort", "teleoperation"):
        source = assembly.setup.planning.default_source_m
        case = TestCase(test_id, "s", "base_link", source, TARGET, np.full(3, -1), 0.0, "manual", 7, 0.0)
        batch = assembly.run_batch(case)
        out[test_id] = (batch, (list(follower.modes), follower.finished))
    return out


def test_every_setpoint_of_the_plan_once_and_the_modes_the_controller_was_told(runs: dict[str, Any]) -> None:
    batch, (modes, finished) = runs["nominal"]
    run = batch.run
    assert run.outcome == "completed", run.message
    assert run.message == "the controller is done: plan followed; every stage executed under the supervisor"
    assert finished == ("completed", "plan followed")
    assert run.plan is not None
    assert run.plan.meta.get("closed_loop") is None  # the declared reference stays the plan
    moved = [i for i, d in enumerate(run.supervision) if d.plan_index >= 0]
    assert [run.supervision[i].plan_index for i in moved] == list(range(1, run.plan.n_samples))
    np.testing.assert_array_equal(run.q_sent[[i + 1 for i in moved]], run.plan.q[1:])
    # held: configuring, waiting at the target, the end, and one period at each stage the controller finished (by
    # a setpoint of the next stage, or done)
    held = [d.status.state.rsplit(".", 1)[-1] for d in run.supervision if d.plan_index < 0]
    changes = int(np.count_nonzero(np.diff(run.plan.stage.astype(int))))
    motion = [s for s in held if s not in ("Configure", "WaitAtTarget", "Completed")]
    assert motion == ["MoveToSource", "Approach", "Inject", "Extract", "Reset"]
    assert len(motion) == changes + 1
    assert run.supervision[-1].status.finished
    assert set(modes) == {"holding", "autonomous"}
    assert len(modes) == len(run.supervision) - 1  # asked every period until done, not after
    assert SupervisorMode.AUTONOMOUS in run.supervisor_sent
    expected = batch.records[0]
    np.testing.assert_array_equal(expected.q_setpoint[[i + 1 for i in moved]], run.plan.q[1:])


def test_an_abort_holds_the_controller_back_and_ends_the_case(runs: dict[str, Any]) -> None:
    batch, (modes, finished) = runs["abort"]
    run = batch.run
    assert run.outcome == "aborted"
    assert run.stopped_by == "supervisor"
    assert "the supervisor stopped the task" in run.message
    assert finished is not None
    assert finished[0] == "aborted"
    stop = next(i for i, d in enumerate(run.supervision) if d.status.state.endswith("TaskStopped"))
    assert all(d.plan_index < 0 for d in run.supervision[stop:])  # nothing of the controller's from the stop on
    assert np.all(run.q_sent[stop + 1 :] == run.q_sent[stop])
    assert "stopped" in modes
    assert Stage(int(run.stage_sent[stop])) is Stage.INJECTION


def test_teleoperation_then_the_controller_goes_on_where_it_was_held(runs: dict[str, Any]) -> None:
    batch, (modes, _) = runs["teleoperation"]
    run = batch.run
    assert run.outcome == "completed", run.message
    assert run.plan is not None
    teleop = [i for i, d in enumerate(run.supervision) if d.status.teleoperation]
    assert len(teleop) >= 25  # 3 s at 10 Hz
    q = run.q_sent[[i + 1 for i in teleop]]
    assert np.abs(q[-1] - q[0]).max() > 1e-3  # the script moved the arm
    assert "teleoperation" in modes
    assert [d.plan_index for d in run.supervision if d.plan_index >= 0] == list(range(1, run.plan.n_samples))
    steps = np.abs(np.diff(run.q_sent, axis=0))
    assert np.all(steps <= assembly_limit(run) * 0.1 + 1e-9)  # teleoperation and the rejoin within the limits
