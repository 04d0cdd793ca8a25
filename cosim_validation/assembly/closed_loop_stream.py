"""The lockstep stream of a closed-loop controller: one ``step`` per control period decides each setpoint.

Before the case: ``reference(case)`` (optional) is the expected trajectory; the robots are reset at its first
setpoint (else at the home pose) and ``start(case)`` is called. Period 0 streams that pose. Period p >= 1, at
case time p * dt: the controller observes what the robots answered to setpoint p - 1 (:class:`Observation`) and
returns a command; a setpoint or a hold is validated, announced (the expected state: the reference at p, held at
its last sample, else the command), sent to every robot and waited for, with the same calls as the open-loop and
the supervised streams. The case ends when the controller says ``done``; it is aborted, with the reason, when the
controller misbehaves (:class:`~cosim_validation.controllers.plugin_controllers.ControllerFaultError`) or runs past its
time limit.

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

from cosim_validation.assembly.case_run import (
    CaseAbortedError,
    CaseEvent,
    CaseListener,
    CaseRun,
    StoppedBy,
    admit_setpoint,
)
from cosim_validation.assembly.robot_port import Measurement
from cosim_validation.assembly.supervised_stream import Lockstep, exchange_setpoint, sync_streamed
from cosim_validation.assembly.supervision import Decision, Proposal, Supervision, feeding_robot
from cosim_validation.common.record import RobotRole, Stage, SupervisorMode
from cosim_validation.controllers.planning.plan import InsertionLine, Plan
from cosim_validation.controllers.plugin_api import CaseStart, CommandKind, Observation
from cosim_validation.controllers.plugin_controllers import ClosedLoopPlugin, ControllerFaultError, NeedleForceSensor
from cosim_validation.supervisor.supervisor import SupervisorStatus


def case_start(
    run: CaseRun, source_m: np.ndarray, target_m: np.ndarray, q0: np.ndarray, plugin: ClosedLoopPlugin
) -> CaseStart:
    """The case as the controller sees it, starting at ``q0``."""
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
    """What was streamed as a :class:`Plan` (the case's plan when the controller declared no reference)."""
    n = max(len(run.q_sent), 1)
    q = run.q_sent if len(run.q_sent) else case.q0[None, :]
    stage = run.stage_sent if len(run.stage_sent) else np.array([int(Stage.INITIALIZATION)], dtype=np.uint8)
    span = case.target_m - case.source_m
    norm = float(np.linalg.norm(span))
    axis = span / norm if norm > 0 else np.array([0.0, 0.0, 1.0])
    line = InsertionLine(case.target_m, axis, np.full(3, np.nan))
    return Plan(np.arange(n) * case.dt_s, stage, q, case.source_m, line, name, {"closed_loop": True})


def stream_closed_loop(
    loop: Lockstep,
    run: CaseRun,
    plugin: ClosedLoopPlugin,
    listener: CaseListener,
    case: CaseStart,
    reference: Plan | None,
    supervision: Supervision | None = None,
) -> None:
    """Stream ``run`` with ``plugin`` deciding every setpoint on ``loop``'s robots (see the module docstring);
    under ``supervision`` the task supervisor steps first each period and decides what is streamed.

    ``run.plan`` holds the reference (or the start pose) on entry and ``run.stamps_ns`` the case start; on return
    it holds the reference or the commands streamed.

    Raises:
        CaseAbortedError: The controller misbehaved, said ``done`` with ``aborted``, ran past its time limit; the
            supervisor stopped the case; a robot was lost, the validator refused a setpoint or the client canceled.
    """
    feed = feeding_robot(run.robots)
    start_ns, period_ns = int(run.stamps_ns[0]), round(plugin.dt_s * 1e9)
    stamps: list[int] = []
    q_sent: list[np.ndarray] = []
    stages: list[int] = []
    modes: list[int] = []
    expected: list[np.ndarray] = []
    validator = loop.start_streaming(run, listener)
    assert run.plan is not None
    asker = _Asker(plugin, (loop, run, feed), case.q0, run.last_stage)
    supervised = supervision.for_case(run.test_id, run.plan, plugin.dt_s) if supervision is not None else None
    if supervised is not None:
        supervised.robot = feed
    mode = SupervisorMode.UNSUPERVISED if supervised is None else SupervisorMode.HOLDING
    q, stage, index = case.q0, run.last_stage, 0
    ending = ("aborted", "")
    try:
        plugin.start(case)
        while True:
            p = len(stamps)
            t_s = p * plugin.dt_s
            decision: Decision | None = None
            # what every robot answered to the last setpoint, read once (a live robot link hands each answer once)
            seen = {role: loop.ports[role].measurement(stamps[-1]) for role in run.robots} if p > 0 else {}
            if p > 0 and supervised is not None:
                supervised.observe(t_s, seen[feed])
                asker.period = (t_s, seen, q)
                decision = supervised.decide(t_s, asker.propose)
                run.supervision.append(decision)
                q, stage, mode, index = decision.q, decision.stage, decision.status.mode, decision.plan_index
            elif p > 0:
                asker.ask(t_s, seen, q, None)
                if asker.done:
                    break
                q, stage, index = asker.q, asker.stage, p
            admit_setpoint(listener, validator, p, q, stage)
            want = q if reference is None or index < 0 else reference.q[min(index, reference.n_samples - 1)]
            stamps.append(start_ns + p * period_ns)
            q_sent.append(q)
            stages.append(int(stage))
            modes.append(int(mode))
            expected.append(want)
            sync_streamed(run, stamps, q_sent, stages, modes)
            if decision is not None:
                listener.supervisor_step(stamps[-1], decision)
            exchange_setpoint(loop, run, p, stamps[-1], (stage, mode), q, listener, want)
            listener.pace(p, t_s)
            if decision is not None and decision.end:
                if decision.end != "completed":
                    raise CaseAbortedError(decision.end, StoppedBy.SUPERVISOR)
                break
        ending = ("completed", run.message)
    except ControllerFaultError as fault:
        ending = ("aborted", str(fault))
        raise CaseAbortedError(str(fault), StoppedBy.CONTROLLER) from None
    except CaseAbortedError as stop:
        ending = ("aborted", str(stop))
        raise
    finally:
        if supervision is not None:
            supervision.current = None
        _tell_finished(plugin, run, *ending)
        sync_streamed(run, stamps, q_sent, stages, modes)
        run.q_expected = np.asarray(expected, dtype=np.float64).reshape(len(expected), len(case.q0))
        if reference is None:
            run.plan = commands_plan(run, case, plugin.name)
    loop.clock.now_ns = stamps[-1] + period_ns
    done = run.message
    run.outcome, run.message = "completed", f"the controller is done{': ' + done if done else ''}"
    if supervised is not None:
        run.message += "; every stage executed under the supervisor"
    if run.left_out:
        names = " and ".join(r.label for r in run.left_out)
        run.message += f" without the {names} robot (it stopped answering in an earlier case)"
    listener.status(CaseEvent.COMPLETED, run.last_stage, run.message, run)


class _Asker:
    """Asks the controller for each period's command and keeps what it asked for (its setpoint and stage).

    ``where``: the loop, the run and the robot the controller observes first.
    """

    def __init__(
        self, plugin: ClosedLoopPlugin, where: tuple[Lockstep, CaseRun, RobotRole], q0: np.ndarray, stage: Stage
    ) -> None:
        self.plugin, self.where = plugin, where
        self.q, self.stage, self.done = q0, stage, False
        #: This period's case time, the robots' answers and the setpoint they answered (set before each step)
        self.period: tuple[float, Mapping[RobotRole, Measurement], np.ndarray] = (0.0, {}, q0)
        self.forces = plugin.needle_force() if plugin.needle_force is not None else None

    def ask(
        self, t_s: float, seen: Mapping[RobotRole, Measurement], q_last: np.ndarray, mode: SupervisorMode | None
    ) -> None:
        """Ask for this period's command: :attr:`q` and :attr:`stage` follow it; :attr:`done` once the controller
        said done (``run.message`` then holds its reason). ``seen``: what every robot answered to ``q_last``.

        Raises:
            ControllerFaultError: It misbehaved or is past its time limit.
            CaseAbortedError: It said ``done`` with ``aborted``.
        """
        plugin = self.plugin
        if t_s > plugin.spec.time_limit_s + 1e-9:
            raise ControllerFaultError(f"time limit: the controller was not done after {plugin.spec.time_limit_s:g} s")
        loop, run, feed = self.where
        command = plugin.step(_observe(loop, seen, (feed, self.forces), t_s, q_last, mode))
        if command.kind is CommandKind.DONE:
            if command.outcome == "aborted":
                raise CaseAbortedError(
                    f"the controller aborted: {command.reason or 'no reason given'}", StoppedBy.CONTROLLER
                )
            run.message, self.done = command.reason, True
            return
        self.q = command.q if command.kind is CommandKind.SETPOINT else self.q
        self.stage = command.stage if command.stage is not None else self.stage

    def propose(self, status: SupervisorStatus) -> Proposal:
        """What the controller asks for in :attr:`period` under the supervisor's step ``status`` (it is no longer
        asked once done)."""
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
    loop: Lockstep,
    seen: Mapping[RobotRole, Measurement],
    sensing: tuple[RobotRole, NeedleForceSensor | None],
    t_s: float,
    q_last: np.ndarray,
    mode: SupervisorMode | None = None,
) -> Observation:
    """The observation of what every robot answered (``seen``) to ``q_last``; ``sensing``: the robot the controller
    observes first and the case's needle force sensor, if it has one (the force at the holder of that robot's
    needle, from its measured joints); ``mode``: the supervisor's mode of this period, if supervised."""
    feed, forces = sensing
    main = seen[feed]
    force_n = float("nan")
    if forces is not None:
        holder, tip = loop.kinematics.needle_segments(main.q_measured)
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
