"""The supervisor in a lockstep loop with the MuJoCo robot: a nominal case runs every stage to the end; every
exception injected in every motion state stops the setpoint stream at once (zero motion commands after it)
and the arm comes to rest on the last setpoint it was sent."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.backends import make_backend
from cosim_validation.config import load_config
from cosim_validation.controllers import InsertionSetup
from cosim_validation.planning.plan import Plan
from cosim_validation.record import Stage
from cosim_validation.record.stage import CASE_STAGES
from cosim_validation.supervisor.needle_force import NeedleForceModel
from cosim_validation.supervisor.needle_force_config import load_needle_force
from cosim_validation.supervisor.supervisor import Supervisor, SupervisorStatus
from test.supervisor.lockstep import LoopRun, run_supervised

TARGET = np.array([0.45, -0.05, 0.05])  # in the left lung, off the heart's path
EXCEPTIONS = {
    "clearance": {"clearance": 0.001},
    "force": {"force": 5.0},
    "tracking": {"tracked": False},
    "abort": {"abort": True},
}


@pytest.fixture(scope="module")
def plan(insertion_setup: InsertionSetup) -> Plan:
    return insertion_setup.controller("straight").plan_case(insertion_setup.planning.default_source_m, TARGET)


@pytest.fixture(scope="module")
def forces(insertion_setup: InsertionSetup) -> NeedleForceModel:
    return load_needle_force("config/supervisor/needle_force.yaml", insertion_setup.scene)


def loop(setup: InsertionSetup, plan: Plan, forces: NeedleForceModel, inject) -> LoopRun:  # type: ignore[no-untyped-def]
    backend = make_backend("mujoco", load_config("config/needle_insertion.yaml"), setup.robot.kinematics)
    try:
        return run_supervised(plan, backend, setup.robot.kinematics, setup.world, forces,
                              Supervisor.from_file(), inject)  # fmt: skip
    finally:
        backend.close()


def test_a_nominal_case_runs_every_setpoint_of_every_stage(
    insertion_setup: InsertionSetup, plan: Plan, forces: NeedleForceModel
) -> None:
    run = loop(insertion_setup, plan, forces, lambda period, status: {})
    sent = [i for i in run.sent_index if i >= 0]
    assert sent == list(range(1, plan.n_samples))  # every setpoint once, in order
    assert run.status[-1].finished
    held = [s.state.rsplit(".", 1)[-1] for s, i in zip(run.status, run.sent_index, strict=True) if i < 0]
    assert set(held) <= {"Configure", "WaitAtTarget", "Completed"}


@pytest.mark.parametrize("stage", CASE_STAGES)
@pytest.mark.parametrize("exception", sorted(EXCEPTIONS))
def test_an_exception_stops_the_stream_within_one_period(
    insertion_setup: InsertionSetup, plan: Plan, forces: NeedleForceModel, stage: Stage, exception: str
) -> None:
    stage_length = int(np.sum(plan.stage == stage))
    seen: list[int] = []
    fired: list[int] = []

    def inject(period: int, status: SupervisorStatus) -> dict[str, object]:
        """The exception halfway through the stage (``status`` is the decision of the previous step); a lost
        tip stays lost."""
        if fired and exception == "tracking":
            return dict(EXCEPTIONS[exception])
        if fired or status.stage != stage:
            return {}
        seen.append(period)
        if len(seen) < max(1, stage_length // 2):
            return {}
        fired.append(period)
        return dict(EXCEPTIONS[exception])

    run = loop(insertion_setup, plan, forces, inject)
    (period,) = fired
    dt = float(plan.t_s[1] - plan.t_s[0])
    if exception == "tracking":  # detectable once no tip pose came for longer than the timeout (0.5 s)
        period += int(np.floor(0.5 / dt + 1e-9))
    k = period - 1  # periods start at 1
    assert run.status[k].state.endswith("TaskStopped")
    assert not run.status[k].motion_allowed
    assert all(i < 0 for i in run.sent_index[k:])  # zero motion commands from the step that saw the exception
    last = max(i for i in run.sent_index[:k] if i >= 0)
    assert plan.stage[last] == stage
    q_rest = np.asarray(run.q_measured[-1])
    np.testing.assert_allclose(q_rest, plan.q[last], atol=2e-3)  # at rest on the last setpoint sent
    step = np.abs(np.asarray(run.q_measured[-1]) - np.asarray(run.q_measured[-2]))
    assert step.max() < 1e-5  # no motion left in the last period
