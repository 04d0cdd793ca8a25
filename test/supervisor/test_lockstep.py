"""The supervisor in the real lockstep loop (assembly/lockstep.py) with the MuJoCo robot: a nominal case runs
every setpoint of every stage once; every exception injected in every motion state stops the setpoint stream at
the step that saw it (zero motion commands after it) and the arm comes to rest on the last setpoint it was sent;
teleoperation in and out; without a supervisor the loop streams the plan as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.assembly import AssemblySpec, CaseAssembly
from cosim_validation.assembly.lockstep import CaseRun
from cosim_validation.common.record import Stage
from cosim_validation.common.record.stage import CASE_STAGES
from test.supervisor.exception_cases import EXCEPTIONS, STATE_OF_STAGE, Runs, case_id, run_cases, write_scenario

NOMINAL = "nominal"
TELEOPERATION = "teleoperation"


@pytest.fixture(scope="module")
def assembly() -> CaseAssembly:
    return CaseAssembly(AssemblySpec("config/needle_insertion.yaml", engines=("mujoco",)))


@pytest.fixture(scope="module")
def runs(assembly: CaseAssembly, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """Every injected case, a nominal one and a teleoperated one, in one loop."""
    from test.supervisor.exception_cases import TARGET

    plan = assembly.controller("straight").plan_case(assembly.setup.planning.default_source_m, TARGET)
    path = tmp_path_factory.mktemp("scenario") / "scenario.yaml"
    write_scenario(path, plan)
    teleop = Path("config/supervisor/teleoperation_example.yaml").resolve()
    text = path.read_text().replace("scenario:\n", f"scenario:\n  teleoperation: {teleop}\n")
    text += (
        f"    - {{cases: [{TELEOPERATION}], when: {{state: Inject, after_s: 1.0}}, request: teleoperation}}\n"
        f"    - {{cases: [{TELEOPERATION}], when: {{state: TeleoperationMode, after_s: 3.0}}, request: auto}}\n"
        f"    - {{cases: [{TELEOPERATION}], when: {{state: TaskStopped, after_s: 0.3}}, request: recover}}\n"
    )
    path.write_text(text)
    ids = [NOMINAL, TELEOPERATION] + [case_id(s, e) for s in CASE_STAGES for e in EXCEPTIONS]
    return run_cases(assembly, path, ids)


def test_a_nominal_case_runs_every_setpoint_of_every_stage(runs: Runs) -> None:
    run, samples = runs[NOMINAL]
    assert run.outcome == "completed"
    assert run.plan is not None
    sent = [d.plan_index for d in run.supervision if d.plan_index >= 0]
    assert sent == list(range(1, run.plan.n_samples))  # every setpoint once, in order
    held = {d.status.state.rsplit(".", 1)[-1] for d in run.supervision if d.plan_index < 0}
    assert held <= {"Configure", "WaitAtTarget", "Completed"}
    assert run.supervision[-1].status.finished
    assert len(samples) == run.executed == len(run.q_sent) == len(run.supervision) + 1
    np.testing.assert_array_equal(
        run.q_sent[[0, *[i + 1 for i, d in enumerate(run.supervision) if d.plan_index >= 0]]], run.plan.q
    )


@pytest.mark.parametrize("stage", CASE_STAGES)
@pytest.mark.parametrize("exception", sorted(EXCEPTIONS))
def test_an_exception_stops_the_stream_at_the_step_that_sees_it(runs: Runs, stage: Stage, exception: str) -> None:
    run, samples = runs[case_id(stage, exception)]
    assert run.outcome == "aborted"
    assert run.stopped_by == "supervisor"
    assert "the supervisor stopped the task" in run.message
    decisions = run.supervision
    dt = float(run.plan.t_s[1] - run.plan.t_s[0]) if run.plan is not None else 0.1
    entered = next(d.status.t_s for d in decisions if d.status.state.endswith(STATE_OF_STAGE[stage]))
    stop = next(i for i, d in enumerate(decisions) if d.status.state.endswith("TaskStopped"))
    assert decisions[stop].status.transition  # the step that saw the exception left the motion state
    fired_s = entered + max(1, int(np.sum(run.plan.stage == stage)) // 2) * dt if run.plan is not None else 0.0
    latency = decisions[stop].status.t_s - fired_s
    allowed = dt + (0.5 + dt if exception == "tracking" else 0.0)  # a lost tip: once the 0.5 s timeout passed
    assert 0.0 < latency <= allowed + 1e-9
    motion = [i for i, d in enumerate(decisions) if d.plan_index >= 0]
    assert all(i < stop for i in motion)  # zero motion commands from the step that saw the exception
    last = decisions[motion[-1]].plan_index
    assert Stage(int(run.plan.stage[last])) is stage
    held = run.q_sent[stop + 1 :]  # the setpoints of the steps from the exception on (q_sent[0]: period 0)
    assert np.all(held == run.plan.q[last])
    q = np.array([s.q_measured for s in samples])
    np.testing.assert_allclose(q[-1], run.plan.q[last], atol=2e-3)  # at rest on the last setpoint sent
    assert np.abs(q[-1] - q[-2]).max() < 1e-5  # no motion left in the last period


def test_teleoperation_moves_the_arm_and_the_case_resumes_where_it_left(runs: Runs, assembly: CaseAssembly) -> None:
    run, _ = runs[TELEOPERATION]
    assert run.outcome == "completed", run.message
    assert run.plan is not None
    teleop = [i for i, d in enumerate(run.supervision) if d.status.teleoperation]
    assert len(teleop) >= 25  # 3 s at 10 Hz
    q = run.q_sent[[i + 1 for i in teleop]]
    assert all(run.supervision[i].plan_index < 0 for i in teleop)  # no plan setpoint while teleoperated
    assert np.abs(q[-1] - q[0]).max() > 1e-3  # the script moved the arm
    sent = [d.plan_index for d in run.supervision if d.plan_index >= 0]
    assert sent == list(range(1, run.plan.n_samples))  # the plan resumed at the setpoint it had reached
    steps = np.abs(np.diff(run.q_sent, axis=0))
    assert np.all(steps <= assembly_limit(run) * 0.1 + 1e-9)  # teleoperation and rejoin within the velocity limits


def assembly_limit(run: CaseRun) -> np.ndarray:
    """The largest joint step per period of the plan itself, or of the velocity limit (whichever is larger)."""
    from cosim_validation.common.config import load_config
    from cosim_validation.robots.model import RobotConfig

    limits = RobotConfig.from_config(load_config("config/needle_insertion.yaml")["robot"]).limits.velocity
    assert run.plan is not None
    return np.maximum(limits, np.abs(np.diff(run.plan.q, axis=0)).max(axis=0) / 0.1)


def test_without_a_supervisor_the_plan_is_streamed_as_planned(assembly: CaseAssembly) -> None:
    from cosim_validation.testgen import TestCase
    from test.supervisor.exception_cases import TARGET

    case = TestCase(
        "plain",
        "s",
        "base_link",
        assembly.setup.planning.default_source_m,
        TARGET,
        np.full(3, -1),
        0.0,
        "manual",
        7,
        0.0,
    )
    batch = assembly.run_batch(case)
    assert batch.run.plan is not None
    assert batch.run.supervision == []
    np.testing.assert_array_equal(batch.run.q_sent, batch.run.plan.q)
    np.testing.assert_array_equal(batch.run.stage_sent, batch.run.plan.stage)
    assert not batch.run.supervisor_sent.any()  # every sample UNSUPERVISED
    np.testing.assert_array_equal(batch.records[0].q_setpoint, batch.run.plan.q)


def test_an_assembly_reads_the_supervisor_machine_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from cosim_validation.assembly import supervision

    loaded: list[object] = []
    real = supervision.load_machine

    def counting(path: str) -> object:
        loaded.append(real(path))
        return loaded[-1]

    monkeypatch.setattr(supervision, "load_machine", counting)
    spec = AssemblySpec(
        "config/needle_insertion.yaml", engines=("mujoco",), supervisor="config/supervisor/supervisor.yaml"
    )
    built = CaseAssembly(spec)
    assert built.supervision is not None
    assert len(loaded) == 1  # checked and built from the one reading (it was read a second time to build)
    assert built.supervision.machine is loaded[0]
