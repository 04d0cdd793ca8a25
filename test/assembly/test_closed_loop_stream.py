"""The closed-loop stream of the lockstep loop on fake robots: what the controller observes, what is sent, when a
case ends and what is expected."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from cosim_validation.assembly import CaseEvent, Lockstep, LockstepSettings, SessionClock
from cosim_validation.assembly.robot_port import Measurement
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.controllers import CaseStart, ClosedLoopPlugin, Command, CommandKind, Observation, PluginSpec
from cosim_validation.controllers.planning import InsertionLine, Plan
from cosim_validation.robots.model import Kinematics
from test.assembly.test_lockstep import Heard, kinematics, make_case

__all__ = ["kinematics"]
OFFSET = 0.001  # the fake robots measure every joint this far from the setpoint [rad]


@dataclass
class MeasuringPort:
    """A robot that answers every setpoint at once, measuring it offset; the virtual one has no tracker."""

    role: RobotRole
    sent: list[tuple[int, np.ndarray]] = field(default_factory=list)
    resets: list[np.ndarray] = field(default_factory=list)

    def reset(self, test_id: str, q0: np.ndarray, case_seed: int) -> None:
        self.resets.append(q0.copy())
        self.sent.clear()

    def send(self, stamp_ns: int, q: np.ndarray) -> None:
        self.sent.append((stamp_ns, q.copy()))

    def wait(self, stamp_ns: int) -> None:
        pass

    def answered_since(self, monotonic_s: float) -> bool:
        return True

    def measurement(self, stamp_ns: int) -> Measurement:
        q = dict(self.sent)[stamp_ns] + OFFSET
        tip = np.full(3, np.nan) if self.role is RobotRole.VIRTUAL else np.array([0.1, 0.2, 0.3])
        return Measurement(q, tip, np.full(4, np.nan))


class Scripted:
    """Commands one setpoint, holds, then ends as told; keeps what it observed."""

    name = "scripted"

    def __init__(self, home: np.ndarray, end: Command, reference: Plan | None = None) -> None:
        self.home, self.end, self.plan = home, end, reference
        self.seen: list[Observation] = []
        self.cases: list[CaseStart] = []

    def reference(self, case: CaseStart) -> Plan | None:
        return self.plan

    def start(self, case: CaseStart) -> None:
        self.cases.append(case)

    def step(self, observation: Observation) -> Command:
        self.seen.append(observation)
        script = [Command.setpoint(self.home + 0.01, Stage.APPROACH), Command.hold(), self.end]
        return script[len(self.seen) - 1]


def plugin(kinematics: Kinematics, inner: Any) -> ClosedLoopPlugin:
    home = (kinematics.q_lower + kinematics.q_upper) / 2
    context = SimpleNamespace(kinematics=kinematics, dt_s=0.1, robot=SimpleNamespace(home_q=home))
    return ClosedLoopPlugin(inner, PluginSpec("scripted", "x:y", time_limit_s=5.0), context)  # type: ignore[arg-type]


def run_case(kinematics: Kinematics, inner: Scripted) -> tuple[Any, Heard, MeasuringPort, MeasuringPort]:
    virtual, physical = MeasuringPort(RobotRole.VIRTUAL), MeasuringPort(RobotRole.PHYSICAL)
    ports = {RobotRole.VIRTUAL: virtual, RobotRole.PHYSICAL: physical}
    lockstep = Lockstep(kinematics, ports, LockstepSettings(), clock=SessionClock())  # type: ignore[arg-type]
    heard = Heard()
    return lockstep.run(make_case(), plugin(kinematics, inner), heard), heard, virtual, physical


def test_observations_commands_and_holds(kinematics: Kinematics) -> None:
    home = (kinematics.q_lower + kinematics.q_upper) / 2
    inner = Scripted(home, Command.done("completed", "at the target"))
    run, heard, virtual, physical = run_case(kinematics, inner)
    assert (run.outcome, run.message, run.executed) == ("completed", "the controller is done: at the target", 3)
    assert (
        [s for s, _ in physical.sent]
        == [s for s, _ in virtual.sent]
        == [1_000_000_000 + k * 100_000_000 for k in range(3)]
    )
    np.testing.assert_array_equal(np.array([q for _, q in physical.sent]), [home, home + 0.01, home + 0.01])
    assert [o.t_s for o in inner.seen] == pytest.approx([0.1, 0.2, 0.3])
    first, second = inner.seen[0], inner.seen[1]
    assert first.robot == "physical"
    np.testing.assert_allclose(first.q_measured, home + OFFSET)
    np.testing.assert_array_equal(second.q_setpoint, home + 0.01)
    assert set(first.joints) == {"virtual", "physical"}
    assert np.isnan(first.tips["virtual"]).all()
    np.testing.assert_array_equal(first.tip_pos_m, [0.1, 0.2, 0.3])
    assert np.isnan(first.needle_force_n)
    assert first.supervisor_mode is None
    np.testing.assert_array_equal(inner.cases[0].q0, home)
    assert list(run.stage_sent) == [int(Stage.INITIALIZATION), int(Stage.APPROACH), int(Stage.APPROACH)]
    np.testing.assert_array_equal(run.q_expected, run.q_sent)  # no reference: the commands are expected
    assert run.plan is not None
    assert run.plan.n_samples == 3
    assert [e[0] for e in heard.events] == [CaseEvent.STARTED, CaseEvent.STAGE, CaseEvent.COMPLETED]


def test_done_aborted_and_a_reference(kinematics: Kinematics) -> None:
    home = (kinematics.q_lower + kinematics.q_upper) / 2
    q = home + np.linspace(0.0, 0.02, 2)[:, None]
    line = InsertionLine(np.zeros(3), np.array([0.0, 0.0, -1.0]), np.zeros(3))
    stages = np.array([int(Stage.INITIALIZATION), int(Stage.APPROACH)], dtype=np.uint8)
    reference = Plan(np.arange(2) * 0.1, stages, q, np.zeros(3), line, "scripted")
    inner = Scripted(home, Command.done("aborted", "lost sight of the marker"), reference)
    run, heard, _, physical = run_case(kinematics, inner)
    assert (run.outcome, run.message) == ("aborted", "the controller aborted: lost sight of the marker")
    assert heard.events[-1][0] is CaseEvent.ABORTED
    np.testing.assert_array_equal(physical.resets[0], q[0])  # the robots start at the reference
    np.testing.assert_array_equal(run.q_expected, [q[0], q[1], q[1]])  # the reference, held at its end
    assert run.plan is not None
    assert run.plan is not reference  # a copy: the controller's own arrays stay its own
    np.testing.assert_array_equal(run.plan.q, reference.q)
    np.testing.assert_array_equal(run.plan.t_s, reference.t_s)


class RefusesToFinish(Scripted):
    """Ends the case, then raises PlanningError when told it is over (a plugin's finish that plans again)."""

    def finish(self, outcome: str, reason: str) -> None:
        from cosim_validation.controllers.planning import PlanningError

        raise PlanningError("no plan for the way back", "unreachable")


def test_a_finish_that_raises_planning_error_is_noted_and_the_outcome_stands(kinematics: Kinematics) -> None:
    home = (kinematics.q_lower + kinematics.q_upper) / 2
    run, heard, _, _ = run_case(kinematics, RefusesToFinish(home, Command.done("completed", "at the target")))
    assert run.outcome == "completed"
    assert run.message == (
        "the controller is done: at the target; controller error: finish raised PlanningError: no plan for the way back"
    )
    assert heard.events[-1][0] is CaseEvent.COMPLETED


class Complex(Scripted):
    """Commands a setpoint of complex numbers (numpy's cast dropped the imaginary part with a warning)."""

    def step(self, observation: Observation) -> Command:
        self.seen.append(observation)
        return Command(CommandKind.SETPOINT, self.home + 1j, Stage.APPROACH)


def test_a_complex_setpoint_aborts_the_case_naming_it(kinematics: Kinematics) -> None:
    home = (kinematics.q_lower + kinematics.q_upper) / 2
    run, _, _, physical = run_case(kinematics, Complex(home, Command.hold()))
    assert run.outcome == "aborted"
    assert "setpoint at t = 0.100 s is not numbers (complex values (complex128); expected real numbers)" in run.message
    assert len(physical.sent) == 1  # the start only: nothing of the complex setpoint reached the robot


def test_a_plan_of_complex_numbers_is_refused(kinematics: Kinematics) -> None:
    from cosim_validation.controllers.plugin_controllers import plan_problem

    q = np.tile((kinematics.q_lower + kinematics.q_upper) / 2, (2, 1)) + 0j
    line = InsertionLine(np.zeros(3), np.array([0.0, 0.0, -1.0]), np.zeros(3))
    stages = np.array([int(Stage.INITIALIZATION), int(Stage.APPROACH)], dtype=np.uint8)
    plan = Plan(np.arange(2) * 0.1, stages, q, np.zeros(3), line, "complex")
    assert plan_problem(plan, kinematics) == (
        "the plan's arrays are not numbers (complex values (complex128); expected real numbers)"
    )
