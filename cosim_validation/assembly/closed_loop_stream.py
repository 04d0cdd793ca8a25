"""The setpoints of a closed-loop controller: one ``step`` per control period decides each one.

Before the case: ``reference(case)`` (optional) is the expected trajectory; the robots are reset at its first
setpoint (else at the home pose) and ``start(case)`` is called. Period 0 streams that pose. Period p >= 1, at
case time p * dt: the controller observes what the robots answered to setpoint p - 1 (:class:`Observation`) and
returns a command; a setpoint or a hold is the period's setpoint, announced with the expected state (the reference
at p, held at its last sample, else the command). The lockstep loop streams it as it streams every source's
(:mod:`~cosim_validation.assembly.setpoint_source`). The case ends when the controller says ``done``; it is
aborted, with the reason, when the controller misbehaves
(:class:`~cosim_validation.controllers.plugin_controllers.ControllerFaultError`) or runs past its time limit.

Under the task supervisor the supervisor observes the feeding robot and steps first each period; the controller is
then asked with the step's mode in its observation (``supervisor_mode``), and its command is streamed only where
the machine allows motion in the controller's stage (:meth:`~.supervision.SupervisedCase.decide`): otherwise the
supervisor holds, teleoperates or rejoins. The controller leads the stages (a setpoint of a later stage finishes
the machine's stage and is held back for the period the machine needs to enter the next one); after ``done`` the
case goes on, held, until the machine reaches its final state, and ends as the supervised stream of a plan does.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cosim_validation.assembly.case_run import CaseAbortedError, CaseRun, StoppedBy
from cosim_validation.assembly.robot_port import Measurement, RobotPort
from cosim_validation.assembly.setpoint_source import Period
from cosim_validation.assembly.supervision import Decision, Proposal, SupervisedCase, Supervision, feeding_robot
from cosim_validation.common.record import RobotRole, Stage, SupervisorMode
from cosim_validation.controllers.planning.plan import InsertionLine, Plan
from cosim_validation.controllers.plugin_api import CaseStart, CommandKind, Observation
from cosim_validation.controllers.plugin_controllers import ClosedLoopPlugin, ControllerFaultError, NeedleForceSensor
from cosim_validation.robots.model import Kinematics
from cosim_validation.supervisor.supervisor import SupervisorStatus


def case_start(
    run: CaseRun, source_m: np.ndarray, target_m: np.ndarray, q0: np.ndarray, plugin: ClosedLoopPlugin
) -> CaseStart:
    """The case as the controller sees it, starting at ``q0``.

    Args:
        run: The case (its test id and seed).
        source_m: The case's source point in base_link, shape (3,), in [m].
        target_m: The case's target point in base_link, shape (3,), in [m].
        q0: The start pose, shape (J,), in [rad], or [m] for a prismatic joint.
        plugin: The controller (its control period and time limit).
    """
    return CaseStart(
        test_id=run.test_id,
        source_m=np.array(source_m, dtype=float),
        target_m=np.array(target_m, dtype=float),
        seed=run.seed,
        q0=np.array(q0, dtype=float),
        dt_s=plugin.dt_s,
        time_limit_s=plugin.spec.time_limit_s,
    )


def commands_plan(run: CaseRun, case: CaseStart, name: str) -> Plan:
    """What was streamed as a :class:`Plan` (the case's plan when the controller declared no reference).

    Args:
        run: The case: its ``q_sent`` and ``stage_sent`` become the plan's samples (none streamed yet: the start
            pose alone, at INITIALIZATION).
        case: The case as the controller sees it: start pose, source and target in base_link [m], control period
            (the plan's sample period [s]).
        name: The controller's name, stored as the plan's controller.
    """
    n = max(len(run.q_sent), 1)
    q = run.q_sent if len(run.q_sent) else case.q0[None, :]
    stage = run.stage_sent if len(run.stage_sent) else np.array([int(Stage.INITIALIZATION)], dtype=np.uint8)
    span = case.target_m - case.source_m
    norm = float(np.linalg.norm(span))
    axis = span / norm if norm > 0 else np.array([0.0, 0.0, 1.0])
    line = InsertionLine(case.target_m, axis, np.full(3, np.nan))
    return Plan(np.arange(n) * case.dt_s, stage, q, case.source_m, line, name, {"closed_loop": True})


class ClosedLoopSource:
    """The setpoints of a closed-loop controller (see the module docstring).

    Under ``supervision`` the task supervisor steps first each period and decides what is streamed.

    Args:
        run: The case (``run.plan`` the reference, or the start pose; ``run.stamps_ns[0]`` its start). When the
            controller declared no reference, ``run.plan`` holds the commands streamed once the case ended.
        plugin: The controller.
        case: The case as the controller sees it (its start pose ``case.q0``).
        reference: The controller's reference, or None.
        robots: The robots, by role, and the nominal arm (the observations).
        supervision: The task supervisor, or None.
    """

    def __init__(
        self,
        run: CaseRun,
        plugin: ClosedLoopPlugin,
        case: CaseStart,
        reference: Plan | None,
        robots: tuple[Mapping[RobotRole, RobotPort], Kinematics],
        supervision: Supervision | None = None,
    ) -> None:
        self._run, self._plugin, self._case, self._reference = run, plugin, case, reference
        self._robots, self._supervision = robots, supervision
        self._feed = feeding_robot(run.robots)
        self._start_ns, self.period_ns = int(run.stamps_ns[0]), round(plugin.dt_s * 1e9)
        self.planned = run.plan.n_samples if run.plan is not None else 1
        self._asker: _Asker | None = None
        self._supervised: SupervisedCase | None = None
        self._q, self._stage = case.q0, Stage.NONE
        self._mode = SupervisorMode.UNSUPERVISED if supervision is None else SupervisorMode.HOLDING

    def open(self) -> None:
        """Give the supervisor the case (if supervised) and start the controller.

        Raises:
            ControllerFaultError: Its ``start`` failed.
        """
        run, plugin = self._run, self._plugin
        assert run.plan is not None
        self._stage = run.last_stage
        self._asker = _Asker(plugin, (self._robots[1], run, self._feed), self._q, self._stage)
        if self._supervision is not None:
            self._supervised = self._supervision.for_case(run.test_id, run.plan, plugin.dt_s)
            self._supervised.robot = self._feed
        plugin.start(self._case)

    def decide(self, p: int, last_stamp_ns: int | None) -> Period | None:
        """Period ``p``: the start pose, then what the controller asks for.

        Under the supervisor, what it lets through. None once the controller said done (unsupervised).

        Args:
            p: The period's index in the case (0: the start pose), at case time ``p * dt``.
            last_stamp_ns: The stamp of the setpoint every robot answered last, in [ns]; None at period 0.
        """
        asker = self._asker
        assert asker is not None
        t_s = p * self._plugin.dt_s
        decision: Decision | None = None
        index = 0
        if last_stamp_ns is not None:
            # what every robot answered to the last setpoint, read once (a live robot link hands each answer once)
            ports = self._robots[0]
            seen = {role: ports[role].measurement(last_stamp_ns) for role in self._run.robots}
            if self._supervised is not None:
                self._supervised.observe(t_s, seen[self._feed])
                asker.period = (t_s, seen, self._q)
                decision = self._supervised.decide(t_s, asker.propose)
                self._run.supervision.append(decision)
                self._q, self._stage, self._mode = decision.q, decision.stage, decision.status.mode
                index = decision.plan_index
            else:
                asker.ask(t_s, seen, self._q, None)
                if asker.done:
                    return None
                self._q, self._stage, index = asker.q, asker.stage, p
        reference = self._reference
        expected = self._q if reference is None or index < 0 else reference.q[min(index, reference.n_samples - 1)]
        return Period(
            self._start_ns + p * self.period_ns,
            t_s,
            self._q,
            self._stage,
            self._mode,
            expected=expected,
            decision=decision,
            end=decision.end if decision is not None else "",
        )

    def close(self, outcome: str, reason: str) -> None:
        """Tell the controller how the case ended; a fault there is noted in the case's message.

        Without a reference, the commands streamed become the case's plan.

        Args:
            outcome: ``completed`` or ``aborted``.
            reason: Why: the abort reason, or the completed case's message (the controller's reason for done).
        """
        if self._supervision is not None:
            self._supervision.current = None
        _tell_finished(self._plugin, self._run, outcome, reason)
        if self._reference is None:
            self._run.plan = commands_plan(self._run, self._case, self._plugin.name)

    def completed(self, run: CaseRun) -> str:
        """The controller is done (its reason), under the supervisor if supervised.

        Args:
            run: The completed case (``run.message`` holds the reason the controller gave with done).
        """
        done = run.message
        message = f"the controller is done{': ' + done if done else ''}"
        if self._supervised is not None:
            message += "; every stage executed under the supervisor"
        return message


class _Asker:
    """Asks the controller for each period's command and keeps what it asked for (its setpoint and stage).

    ``where``: the nominal arm, the run and the robot the controller observes first.
    """

    def __init__(
        self, plugin: ClosedLoopPlugin, where: tuple[Kinematics, CaseRun, RobotRole], q0: np.ndarray, stage: Stage
    ) -> None:
        self.plugin, self.where = plugin, where
        self.q, self.stage, self.done = q0, stage, False
        self.moved_s: float | None = None  # case time of the last setpoint that differed from the one before [s]
        #: This period's case time, the robots' answers and the setpoint they answered (set before each step)
        self.period: tuple[float, Mapping[RobotRole, Measurement], np.ndarray] = (0.0, {}, q0)
        self.forces = plugin.needle_force() if plugin.needle_force is not None else None

    def ask(
        self, t_s: float, seen: Mapping[RobotRole, Measurement], q_last: np.ndarray, mode: SupervisorMode | None
    ) -> None:
        """Ask for this period's command.

        :attr:`q` and :attr:`stage` follow it; :attr:`done` once the controller said done (``run.message`` then holds
        its reason). ``seen``: what every robot answered to ``q_last``.

        Raises:
            ControllerFaultError: It misbehaved or is past its time limit.
            CaseAbortedError: It said ``done`` with ``aborted``.
        """
        plugin = self.plugin
        if t_s > plugin.spec.time_limit_s + 1e-9:
            last = "never changed" if self.moved_s is None else f"last changed at t = {self.moved_s:.3f} s"
            raise ControllerFaultError(
                f"time limit: the controller was not done after {plugin.spec.time_limit_s:g} s (its setpoint {last})"
            )
        kinematics, run, feed = self.where
        command = plugin.step(_observe(kinematics, seen, (feed, self.forces), t_s, q_last, mode))
        if command.kind is CommandKind.DONE:
            if command.outcome == "aborted":
                raise CaseAbortedError(
                    f"the controller aborted: {command.reason or 'no reason given'}", StoppedBy.CONTROLLER
                )
            run.message, self.done = command.reason, True
            return
        if command.kind is CommandKind.SETPOINT and not np.array_equal(command.q, self.q):
            self.q, self.moved_s = command.q, t_s
        self.stage = command.stage if command.stage is not None else self.stage

    def propose(self, status: SupervisorStatus) -> Proposal:
        """What the controller asks for in :attr:`period` under the supervisor's step ``status``.

        It is no longer asked once done.
        """
        if not self.done:
            self.ask(*self.period, status.mode)
        return Proposal(self.q, self.stage, self.done)


def _tell_finished(plugin: ClosedLoopPlugin, run: CaseRun, outcome: str, reason: str) -> None:
    """``finish`` of the controller; a fault there is noted in the case's message, the outcome stands."""
    try:
        plugin.finish(outcome, reason)
    except ControllerFaultError as fault:
        run.message = f"{run.message}; {fault}" if run.message else str(fault)


def _observe(
    kinematics: Kinematics,
    seen: Mapping[RobotRole, Measurement],
    sensing: tuple[RobotRole, NeedleForceSensor | None],
    t_s: float,
    q_last: np.ndarray,
    mode: SupervisorMode | None = None,
) -> Observation:
    """The observation of what every robot answered (``seen``) to ``q_last``.

    ``sensing``: the robot the controller observes first and the case's needle force sensor, if it has one (the force at
    the holder of that robot's needle, from its measured joints); ``mode``: the supervisor's mode of this period, if
    supervised.
    """
    feed, forces = sensing
    main = seen[feed]
    force_n = float("nan")
    if forces is not None:
        holder, tip = kinematics.needle_segments(main.q_measured)
        force_n = forces.update(t_s, holder[0], tip[0])[1]
    return Observation(
        t_s=t_s,
        robot=feed.label,
        q_measured=np.array(main.q_measured, dtype=float),
        tip_pos_m=np.array(main.tip_pos_m, dtype=float),
        tip_quat_wxyz=np.array(main.tip_quat_wxyz, dtype=float),
        joints={role.label: np.array(m.q_measured, dtype=float) for role, m in seen.items()},
        tips={role.label: np.array(m.tip_pos_m, dtype=float) for role, m in seen.items()},
        q_setpoint=np.array(q_last, dtype=float),
        needle_force_n=force_n,
        supervisor_mode=mode.label if mode is not None else None,
    )
