"""The lockstep stream of a closed-loop controller: one ``step`` per control period decides each setpoint.

Before the case: ``reference(case)`` (optional) is the expected trajectory; the robots are reset at its first
setpoint (else at the home pose) and ``start(case)`` is called. Period 0 streams that pose. Period p >= 1, at
case time p * dt: the controller observes what the robots answered to setpoint p - 1 (:class:`Observation`) and
returns a command; a setpoint or a hold is validated, announced (the expected state: the reference at p, held at
its last sample, else the command), sent to every robot and waited for, with the same calls as the open-loop and
the supervised streams. The case ends when the controller says ``done``; it is aborted, with the reason, when the
controller misbehaves (:class:`~cosim_validation.controllers.plugin_controllers.ControllerFaultError`) or runs past its
time limit.
"""

from __future__ import annotations

import numpy as np

from cosim_validation.assembly.case_run import CaseAbortedError, CaseEvent, CaseListener, CaseRun, admit_setpoint
from cosim_validation.assembly.supervised_stream import Lockstep, exchange_setpoint, sync_streamed
from cosim_validation.assembly.supervision import feeding_robot
from cosim_validation.common.record import RobotRole, Stage, SupervisorMode
from cosim_validation.controllers.planning.plan import InsertionLine, Plan
from cosim_validation.controllers.plugin_api import CaseStart, CommandKind, Observation
from cosim_validation.controllers.plugin_controllers import ClosedLoopPlugin, ControllerFaultError, NeedleForceSensor


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
) -> None:
    """Stream ``run`` with ``plugin`` deciding every setpoint on ``loop``'s robots (see the module docstring).

    ``run.plan`` holds the reference (or the start pose) on entry and ``run.stamps_ns`` the case start; on return
    it holds the reference or the commands streamed.

    Raises:
        CaseAbortedError: The controller misbehaved, said ``done`` with ``aborted``, ran past its time limit; a
            robot was lost, the validator refused a setpoint or the client canceled.
    """
    feed = feeding_robot(run.robots)
    start_ns, period_ns = int(run.stamps_ns[0]), round(plugin.dt_s * 1e9)
    stamps: list[int] = []
    q_sent: list[np.ndarray] = []
    stages: list[int] = []
    modes: list[int] = []
    expected: list[np.ndarray] = []
    validator = loop.start_streaming(run, listener)
    q, stage = case.q0, run.last_stage
    ending = ("aborted", "")
    forces = plugin.needle_force() if plugin.needle_force is not None else None
    try:
        plugin.start(case)
        while True:
            p = len(stamps)
            t_s = p * plugin.dt_s
            if p > 0:
                if t_s > plugin.spec.time_limit_s + 1e-9:
                    limit = plugin.spec.time_limit_s
                    raise ControllerFaultError(f"time limit: the controller was not done after {limit:g} s")
                command = plugin.step(_observe(loop, run, (feed, forces), t_s, stamps[-1], q))
                if command.kind is CommandKind.DONE:
                    if command.outcome == "aborted":
                        raise CaseAbortedError(f"the controller aborted: {command.reason or 'no reason given'}")
                    run.message = command.reason
                    break
                q = command.q if command.kind is CommandKind.SETPOINT else q
                stage = command.stage if command.stage is not None else stage
            admit_setpoint(listener, validator, p, q, stage)
            want = q if reference is None else reference.q[min(p, reference.n_samples - 1)]
            stamps.append(start_ns + p * period_ns)
            q_sent.append(q)
            stages.append(int(stage))
            modes.append(int(SupervisorMode.UNSUPERVISED))
            expected.append(want)
            sync_streamed(run, stamps, q_sent, stages, modes)
            exchange_setpoint(loop, run, p, stamps[-1], (stage, SupervisorMode.UNSUPERVISED), q, listener, want)
            listener.pace(p, t_s)
        ending = ("completed", run.message)
    except ControllerFaultError as fault:
        ending = ("aborted", str(fault))
        raise CaseAbortedError(str(fault)) from None
    except CaseAbortedError as stop:
        ending = ("aborted", str(stop))
        raise
    finally:
        _tell_finished(plugin, run, *ending)
        sync_streamed(run, stamps, q_sent, stages, modes)
        run.q_expected = np.asarray(expected, dtype=np.float64).reshape(len(expected), len(case.q0))
        if reference is None:
            run.plan = commands_plan(run, case, plugin.name)
    loop.clock.now_ns = stamps[-1] + period_ns
    done = run.message
    run.outcome, run.message = "completed", f"the controller is done{': ' + done if done else ''}"
    if run.left_out:
        names = " and ".join(r.label for r in run.left_out)
        run.message += f" without the {names} robot (it stopped answering in an earlier case)"
    listener.status(CaseEvent.COMPLETED, run.last_stage, run.message, run)


def _tell_finished(plugin: ClosedLoopPlugin, run: CaseRun, outcome: str, reason: str) -> None:
    """``finish`` of the controller; a fault there is noted in the case's message, the outcome stands."""
    try:
        plugin.finish(outcome, reason)
    except ControllerFaultError as fault:
        run.message = f"{run.message}; {fault}" if run.message else str(fault)


def _observe(
    loop: Lockstep,
    run: CaseRun,
    sensing: tuple[RobotRole, NeedleForceSensor | None],
    t_s: float,
    stamp_ns: int,
    q_last: np.ndarray,
) -> Observation:
    """What every robot answered to the setpoint stamped ``stamp_ns``; ``sensing``: the robot the controller
    observes first and the case's needle force sensor, if it has one (the force at the holder of that robot's
    needle, from its measured joints)."""
    feed, forces = sensing
    seen = {role: loop.ports[role].measurement(stamp_ns) for role in run.robots}
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
    )
