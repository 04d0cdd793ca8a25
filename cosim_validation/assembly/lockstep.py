"""One case in lockstep: plan it, check each setpoint, stream it to every robot, wait for every answer.

The same loop runs every case of every mode. In a campaign the robots are in-process backends
(:class:`~cosim_validation.assembly.robot_port.BackendPort`); in a live session the controller node runs it
with ROS driver links and publishes what the :class:`CaseListener` hears (expected states, /clock, the case
status, action feedback). So a case is planned, validated, streamed and stopped identically live and in
batch, and its samples carry the same stamps.

Time: the loop owns the session clock (:class:`SessionClock`). Sample k of a case is stamped
``case start + round(t_k * 1e9)`` ns; cases follow each other on it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from cosim_validation.assembly.case_run import (
    OUTCOME_OF_EVENT,
    CaseAbortedError,
    CaseEvent,
    CaseListener,
    CaseRun,
    SessionClock,
    StoppedBy,
    admit_setpoint,
)
from cosim_validation.assembly.case_seed import case_seed
from cosim_validation.assembly.closed_loop_stream import ClosedLoopSource, case_start, commands_plan
from cosim_validation.assembly.robot_port import Measurement, RobotLostError, RobotPort
from cosim_validation.assembly.setpoint_source import Period, PlanSource, SetpointSource
from cosim_validation.assembly.supervised_stream import SupervisedSource
from cosim_validation.assembly.supervision import Supervision
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.controllers import Controller
from cosim_validation.controllers.planning.state_validator import StateValidator
from cosim_validation.controllers.plugin_controllers import ClosedLoopPlugin, ControllerFaultError
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import StageAware
from cosim_validation.testgen import TestCase


@dataclass(frozen=True)
class LockstepSettings:
    """How the loop treats setpoints and robots.

    Attributes:
        validate: Check every setpoint with the state validator ([Preda et al. 2016]); a refusal aborts the case.
        drop_lost_robots: After a robot stopped answering, run later cases without it (else they abort).
    """

    validate: bool = False
    drop_lost_robots: bool = True


class CaseWatch(Protocol):
    """Judges the physical robot's answer against the virtual twin's at every setpoint both answered.

    See :class:`~cosim_validation.hazards.hazard_watch.HazardWatch`.
    """

    def start_case(self, test_id: str) -> None:
        """A new case starts streaming.

        Args:
            test_id: The case's test id.
        """
        ...

    def push(self, t_s: float, stamp_ns: int, robot: Measurement, model: Measurement, q_setpoint: np.ndarray) -> Any:
        """Both answers to the setpoint ``q_setpoint`` stamped ``stamp_ns`` (case time ``t_s`` [s]).

        Args:
            t_s: Case time of the setpoint, in [s].
            stamp_ns: Its stamp on the session clock, in [ns].
            robot: The physical robot's answer.
            model: The virtual twin's answer.
            q_setpoint: The setpoint both answered, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        ...


class Lockstep:
    """Runs cases one after another on a fixed set of robots.

    Args:
        kinematics: The nominal arm and needle (the planned tip of each setpoint).
        ports: The robots, by role.
        settings: Validation and lost-robot policy.
        validator: Makes a fresh state validator (required when ``settings.validate``).
        clock: The session clock (a new one by default).
        supervision: The task supervisor (one step per control period, it decides every setpoint); None: the
            plan is streamed as planned.
        watch: Judges robot vs twin after every exchange of a case that drives both (a hazard detector).
    """

    def __init__(
        self,
        kinematics: Kinematics,
        ports: Mapping[RobotRole, RobotPort],
        settings: LockstepSettings,
        validator: Callable[[], StateValidator] | None = None,
        clock: SessionClock | None = None,
        supervision: Supervision | None = None,
        watch: CaseWatch | None = None,
    ) -> None:
        if settings.validate and validator is None:
            raise InputError("validation asked for but no state validator given")
        self.kinematics = kinematics
        self.ports = dict(ports)
        self.settings = settings
        self._validator = validator
        self.clock = clock or SessionClock()
        self.supervision = supervision
        self.watch = watch
        self.lost: dict[RobotRole, float] = {}  # robot -> when it was lost (time.monotonic())

    def robots_for(self, wanted: Sequence[RobotRole]) -> tuple[RobotRole, ...]:
        """The robots a case drives: ``wanted`` (all ports when empty) without the lost ones.

        A lost robot that answered again since it was lost (a driver that was frozen) is back.

        Args:
            wanted: The robots the case asks for; empty: every robot with a port.

        Raises:
            InputError: A robot no port drives.
            CaseAbortedError: Every wanted robot is lost.
        """
        chosen = list(wanted) or list(self.ports)
        unknown = [r.label for r in chosen if r not in self.ports]
        if unknown:
            raise InputError(f"robots {unknown} are not driven here (robots: {[r.label for r in self.ports]})")
        for role, lost_at in list(self.lost.items()):
            if self.ports[role].answered_since(lost_at):
                del self.lost[role]
        alive = tuple(r for r in chosen if r not in self.lost)
        if not alive:
            names = ", ".join(r.label for r in sorted(self.lost))
            raise CaseAbortedError(f"no robot left: {names} stopped answering", StoppedBy.ROBOT)
        return alive

    def run(
        self,
        case: TestCase,
        controller: Controller | ClosedLoopPlugin,
        listener: CaseListener | None = None,
        robots: Sequence[RobotRole] = (),
    ) -> CaseRun:
        """Plan and run ``case``; every ending is a :class:`CaseRun` (errors of the robots abort the case).

        A closed-loop controller decides every setpoint instead (:mod:`.closed_loop_stream`), under the task supervisor
        too.

        Args:
            case: The test case (its source and target in base_link [m], its seed).
            controller: The controller under test: a planning controller, or a closed-loop plugin.
            listener: Hears the case's events and is asked whether the client canceled; None: nobody listens.
            robots: The robots to drive; empty: every robot with a port (lost ones left out in both cases).

        Raises:
            InputError: Bad robots for this loop (before anything moved).
            CosimError: Planning failed for a reason other than a refusal (bad input).
        """
        listener = listener or CaseListener()
        run = CaseRun(case.test_id, seed=case_seed(int(case.seed), case.test_id))
        try:
            run.robots = self.robots_for(robots)
            run.left_out = tuple(r for r in (robots or self.ports) if r not in run.robots)
            if isinstance(controller, ClosedLoopPlugin):
                self._closed_loop(run, case, controller, listener)
                return run
            self._plan(run, case, controller, listener)
            if run.plan is not None:
                source: SetpointSource = (
                    PlanSource(run, self.kinematics)
                    if self.supervision is None
                    else SupervisedSource(run, self.supervision, self.ports)
                )
                self.stream(run, source, listener)
        except CaseAbortedError as exc:
            self._abort(run, exc, listener)
        return run

    # ------------------------------------------------------------------ steps
    def _closed_loop(self, run: CaseRun, case: TestCase, controller: ClosedLoopPlugin, listener: CaseListener) -> None:
        """Ask for the reference (a bad one refuses the case), then stream with the controller in the loop."""
        start = case_start(run, case.source_m, case.target_m, controller.home_q, controller)
        from cosim_validation.controllers.planning import PlanningError

        try:
            reference = controller.reference(start)
        except (PlanningError, ControllerFaultError) as exc:
            reason = f"{exc.reason}: {exc}" if isinstance(exc, PlanningError) else str(exc)
            run.outcome, run.message = "refused", reason
            listener.status(CaseEvent.REFUSED, Stage.NONE, run.message, run)
            return
        if reference is not None:
            start = case_start(run, case.source_m, case.target_m, reference.q[0], controller)
        run.plan = reference if reference is not None else commands_plan(run, start, controller.name)
        run.stamps_ns = np.array([self.clock.now_ns], dtype=np.int64)
        robots = (self.ports, self.kinematics)
        self.stream(run, ClosedLoopSource(run, controller, start, reference, robots, self.supervision), listener)

    def _plan(self, run: CaseRun, case: TestCase, controller: Controller, listener: CaseListener) -> None:
        from cosim_validation.controllers.planning import PlanningError

        try:
            run.plan = controller.plan_case(case.source_m, case.target_m, seed=run.seed)
        except PlanningError as exc:
            run.outcome, run.message = "refused", f"{exc.reason}: {exc}"
            listener.status(CaseEvent.REFUSED, Stage.NONE, run.message, run)
            return
        run.stamps_ns = self.clock.now_ns + np.round(run.plan.t_s * 1e9).astype(np.int64)

    def stream(self, run: CaseRun, source: SetpointSource, listener: CaseListener) -> None:
        """Stream ``run`` from ``source`` until the source's last period (or its None), then complete the case.

        Every robot is reset first; then each period's setpoint is admitted (the client's cancel, the state validator),
        recorded in ``run``, announced, sent to every robot and waited for. Once the case is completed, the clock moves
        past it.

        Args:
            run: The case, planned (``run.plan`` and ``run.stamps_ns[0]``, its start, set); its arrays grow as it
                streams.
            source: Decides each period's setpoint.
            listener: Hears the case's events and is asked whether the client canceled.

        Raises:
            CaseAbortedError: The source stopped the case (the supervisor, the controller), a robot was lost, the
                validator refused a setpoint or the client canceled (``run`` says how far it got).
        """
        sent = _Streamed(run, source.planned)
        validator = self.start_streaming(run, listener)
        staged = tuple(port for role in run.robots if isinstance(port := self.ports[role], StageAware))
        ending = ("aborted", "")
        try:
            source.open()
            period = source.decide(0, None)
            while period is not None:
                p = sent.count
                admit_setpoint(listener, validator, p, period.q, period.stage)
                sent.add(period)
                if period.decision is not None:
                    listener.supervisor_step(period.stamp_ns, period.decision)
                self._announce_and_exchange(run, p, period, staged, listener, source.planned)
                listener.pace(p, period.t_s)
                if period.end:
                    if period.end != "completed":
                        raise CaseAbortedError(period.end, StoppedBy.SUPERVISOR)
                    break
                period = source.decide(p + 1, period.stamp_ns)
            ending = ("completed", run.message)
        except ControllerFaultError as fault:
            ending = ("aborted", str(fault))
            raise CaseAbortedError(str(fault), StoppedBy.CONTROLLER) from None
        except CaseAbortedError as stop:
            ending = ("aborted", str(stop))
            raise
        finally:
            source.close(*ending)
        self.clock.now_ns = int(run.stamps_ns[-1]) + source.period_ns
        run.outcome, run.message = "completed", source.completed(run)
        if run.left_out:
            names = " and ".join(r.label for r in run.left_out)
            run.message += f" without the {names} robot (it stopped answering in an earlier case)"
        listener.status(CaseEvent.COMPLETED, run.last_stage, run.message, run)

    def start_streaming(self, run: CaseRun, listener: CaseListener) -> StateValidator | None:
        """Reset every robot to the plan's first setpoint, announce STARTED; the case's validator (or None).

        Args:
            run: The case, planned (its robots, test id, seed and ``run.plan``).
            listener: Told :meth:`~CaseListener.before_streaming`, then STARTED.

        Raises:
            CaseAbortedError: A robot did not answer its reset.
        """
        plan = run.plan
        assert plan is not None
        for role in run.robots:
            try:
                self.ports[role].reset(run.test_id, plan.q[0], run.seed)
            except RobotLostError as exc:
                self.lose(role)
                raise CaseAbortedError(str(exc), StoppedBy.ROBOT) from None
        validator = self._validator() if self.settings.validate and self._validator is not None else None
        if validator is not None:
            validator.reset(plan.q[0])
        if self.watch is not None:
            self.watch.start_case(run.test_id)
        listener.before_streaming(run.robots)
        run.last_stage = Stage(int(plan.stage[0]))
        run.started = True
        listener.status(CaseEvent.STARTED, run.last_stage, "", run)
        return validator

    def _announce_and_exchange(
        self,
        run: CaseRun,
        p: int,
        period: Period,
        staged: Sequence[StageAware],
        listener: CaseListener,
        planned: int,
    ) -> None:
        """Announce setpoint ``p``, send it to every robot and wait for every answer.

        The announcement carries its expected state and planned tip; the ``staged`` robots are told its stage first.
        Then the watch, if any, judges the physical robot's answer against the virtual twin's. The listener also hears
        of the case's progress and stage changes.

        Raises:
            CaseAbortedError: A robot did not answer (it is dropped from later cases when so configured).
        """
        expected = period.expected_q
        tip, quat = period.tip, period.quat
        if tip is None or quat is None:
            fk = self.kinematics.record_arrays(expected[None, :])
            tip, quat = fk.tip_pos_m[0], fk.tip_quat_wxyz[0]
        stage, stamp = period.stage, period.stamp_ns
        listener.setpoint(p, stamp, stage, expected, tip, quat, period.mode)
        for port in staged:
            port.stage(int(stage))
        for role in run.robots:
            self.ports[role].send(stamp, period.q)
        for role in run.robots:
            try:
                self.ports[role].wait(stamp)
            except RobotLostError as exc:
                self.lose(role)
                raise CaseAbortedError(str(exc), StoppedBy.ROBOT) from None
        if self.watch is not None and RobotRole.PHYSICAL in run.robots and RobotRole.VIRTUAL in run.robots:
            robot, model = (self.ports[r].measurement(stamp) for r in (RobotRole.PHYSICAL, RobotRole.VIRTUAL))
            self.watch.push((stamp - int(run.stamps_ns[0])) / 1e9, stamp, robot, model, period.q)
        run.executed = p + 1
        changed = stage is not run.last_stage
        if changed and p > 0:
            listener.status(CaseEvent.STAGE, stage, "", run)
        run.last_stage = stage
        if changed or p % 10 == 0 or period.end:
            listener.progress(p, stage, max(p + 1, planned))

    def _abort(self, run: CaseRun, stop: CaseAbortedError, listener: CaseListener) -> None:
        """The robots hold their last setpoint; the clock moves past the whole planned case."""
        reason = str(stop)
        run.outcome, run.message, run.stopped_by = "aborted", reason, stop.by
        if run.started and run.plan is not None:
            listener.status(CaseEvent.ABORTED, run.last_stage, reason, run)
            streamed_ns = int(run.stamps_ns[-1] - run.stamps_ns[0]) if len(run.stamps_ns) else 0
            self.clock.now_ns += max(round(float(run.plan.t_s[-1]) * 1e9), streamed_ns) + 100_000_000

    def lose(self, role: RobotRole) -> None:
        """Robot ``role`` stopped answering: later cases run without it (when so configured).

        Args:
            role: The robot that stopped answering.
        """
        if self.settings.drop_lost_robots:
            self.lost[role] = time.monotonic()


class _Streamed:
    """What a case streamed so far, in ``run``'s arrays.

    The arrays (``stamps_ns``, ``q_sent``, ``stage_sent``, ``supervisor_sent``, ``q_expected``) are views of buffers
    that grow by doubling, so that adding a period costs the same at any length. Before the first setpoint
    ``run.stamps_ns`` holds the case start alone.
    """

    def __init__(self, run: CaseRun, capacity: int) -> None:
        self.run, self.count = run, 0
        self._start = run.stamps_ns[:1].copy()
        n_joints = run.plan.q.shape[1] if run.plan is not None else 0
        self._stamps, self._q, self._stage, self._mode, self._expected = _buffers(max(capacity, 16), n_joints)
        self._publish()

    def add(self, period: Period) -> None:
        """Period ``count`` is streamed."""
        n = self.count
        if n == len(self._stamps):
            grown = _buffers(2 * n, self._q.shape[1])
            for new, old in zip(grown, (self._stamps, self._q, self._stage, self._mode, self._expected), strict=True):
                new[:n] = old
            self._stamps, self._q, self._stage, self._mode, self._expected = grown
        self._stamps[n] = period.stamp_ns
        self._q[n] = period.q
        self._stage[n] = int(period.stage)
        self._mode[n] = int(period.mode)
        self._expected[n] = period.expected_q
        self.count = n + 1
        self._publish()

    def _publish(self) -> None:
        run, n = self.run, self.count
        run.stamps_ns = self._stamps[:n] if n else self._start
        run.q_sent, run.stage_sent, run.supervisor_sent = self._q[:n], self._stage[:n], self._mode[:n]
        run.q_expected = self._expected[:n]


def _buffers(capacity: int, n_joints: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Empty stamps, setpoints, stages, modes and expected states for ``capacity`` periods."""
    return (
        np.zeros(capacity, dtype=np.int64),
        np.zeros((capacity, n_joints)),
        np.zeros(capacity, dtype=np.uint8),
        np.zeros(capacity, dtype=np.uint8),
        np.zeros((capacity, n_joints)),
    )


__all__ = [
    "OUTCOME_OF_EVENT",
    "CaseAbortedError",
    "CaseEvent",
    "CaseListener",
    "CaseRun",
    "CaseWatch",
    "Lockstep",
    "LockstepSettings",
    "SessionClock",
    "StoppedBy",
]
