"""The lockstep stream of a supervised case: one supervisor step per control period decides each setpoint.

Period 0 streams the plan's first setpoint (the robots were reset there; the supervisor is configuring: its
sample's supervisor mode is HOLDING).
Period p >= 1, at case time p * dt: the supervisor observes what the feeding robot answered to setpoint
p - 1, steps, and the period's setpoint (:meth:`SupervisedCase.decide`) is validated, streamed to every
robot and waited for. The stamps run on from the case start at the plan's period whatever the supervisor
does, so a held or teleoperated case is longer than its plan. The case ends completed when the machine
reaches its final state, aborted when the supervisor keeps it stopped (``loop.stopped_timeout_s``) or idle
in teleoperation (``loop.teleoperation_idle_s``), or runs past ``loop.max_case_s``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

import numpy as np

from cosim_validation.assembly.case_run import (
    CaseAbortedError,
    CaseEvent,
    CaseListener,
    CaseRun,
    SessionClock,
    StoppedBy,
    admit_setpoint,
)
from cosim_validation.assembly.robot_port import RobotPort
from cosim_validation.assembly.supervision import Decision, Supervision, feeding_robot
from cosim_validation.common.record import RobotRole, Stage, SupervisorMode
from cosim_validation.controllers.planning.state_validator import StateValidator
from cosim_validation.robots.model import Kinematics


class Lockstep(Protocol):
    """What the stream uses of :class:`~cosim_validation.assembly.lockstep.Lockstep`."""

    kinematics: Kinematics
    clock: SessionClock

    @property
    def ports(self) -> Mapping[RobotRole, RobotPort]:
        """The robots, by role."""
        ...

    def start_streaming(self, run: CaseRun, listener: CaseListener) -> StateValidator | None:
        """Reset the robots, announce STARTED; the case's validator."""
        ...

    def exchange(self, run: CaseRun, stamp_ns: int, q: np.ndarray, stage: Stage = Stage.NONE) -> None:
        """Send a setpoint of ``stage`` to every robot and wait for every answer."""
        ...


def stream_supervised(loop: Lockstep, run: CaseRun, supervision: Supervision, listener: CaseListener) -> None:
    """Stream ``run``'s plan under ``supervision`` on ``loop``'s robots (see the module docstring).

    Raises:
        CaseAbortedError: The supervisor stopped the case, a robot was lost, the validator refused a setpoint
            or the client canceled (``run`` says how far it got).
    """
    plan = run.plan
    assert plan is not None
    case = supervision.for_case(run.test_id, plan)
    feed = case.robot = feeding_robot(run.robots)
    start_ns, period_ns = int(run.stamps_ns[0]), round(case.dt_s * 1e9)
    stamps: list[int] = []
    q_sent: list[np.ndarray] = []
    stages: list[int] = []
    modes: list[int] = []
    validator = loop.start_streaming(run, listener)
    decision: Decision | None = None
    try:
        while decision is None or not decision.end:
            p = len(stamps)
            t_s = p * case.dt_s
            if p > 0:
                case.observe(t_s, loop.ports[feed].measurement(stamps[-1]))
                decision = case.decide(t_s)
                run.supervision.append(decision)
                q, stage, mode = decision.q, decision.stage, decision.status.mode
            else:
                q, stage, mode = plan.q[0], Stage(int(plan.stage[0])), SupervisorMode.HOLDING
            stamp = start_ns + p * period_ns
            admit_setpoint(listener, validator, p, q, stage)
            stamps.append(stamp)
            q_sent.append(q)
            stages.append(int(stage))
            modes.append(int(mode))
            sync_streamed(run, stamps, q_sent, stages, modes)
            if decision is not None:
                listener.supervisor_step(stamp, decision)
            exchange_setpoint(loop, run, p, stamp, (stage, mode), q, listener)
            listener.pace(p, t_s)
    finally:
        sync_streamed(run, stamps, q_sent, stages, modes)
        supervision.current = None
    assert decision is not None
    if decision.end != "completed":
        raise CaseAbortedError(decision.end, StoppedBy.SUPERVISOR)
    loop.clock.now_ns = stamps[-1] + period_ns
    run.outcome, run.message = "completed", "every stage executed under the supervisor"
    if run.left_out:
        names = " and ".join(r.label for r in run.left_out)
        run.message += f" without the {names} robot (it stopped answering in an earlier case)"
    listener.status(CaseEvent.COMPLETED, run.last_stage, run.message, run)


def exchange_setpoint(
    loop: Lockstep,
    run: CaseRun,
    p: int,
    stamp: int,
    stage_mode: tuple[Stage, SupervisorMode],
    q: np.ndarray,
    listener: CaseListener,
    expected: np.ndarray | None = None,
) -> None:
    """Announce, send and wait for setpoint ``p`` of ``stage_mode`` (its stage and supervisor mode); the case's
    progress and stage changes. ``expected``: what the listener announces as the expected state when it is not the
    setpoint itself (a closed-loop controller's reference)."""
    stage, mode = stage_mode
    announced = q if expected is None else expected
    fk = loop.kinematics.record_arrays(announced[None, :])
    listener.setpoint(p, stamp, stage, announced, fk.tip_pos_m[0], fk.tip_quat_wxyz[0], mode)
    loop.exchange(run, stamp, q, stage)
    run.executed = p + 1
    changed = stage is not run.last_stage
    if changed and p > 0:
        listener.status(CaseEvent.STAGE, stage, "", run)
    run.last_stage = stage
    if changed or p % 10 == 0:
        listener.progress(p, stage, max(p + 1, run.plan.n_samples if run.plan is not None else 0))


def sync_streamed(
    run: CaseRun, stamps: list[int], q_sent: list[np.ndarray], stages: list[int], modes: list[int]
) -> None:
    """The run's arrays of what was streamed so far (the case start alone before the first setpoint)."""
    run.stamps_ns = np.asarray(stamps or [int(run.stamps_ns[0])], dtype=np.int64)
    n_joints = run.plan.q.shape[1] if run.plan is not None else 0
    run.q_sent = np.asarray(q_sent, dtype=np.float64).reshape(len(q_sent), -1 if q_sent else n_joints)
    run.stage_sent = np.asarray(stages, dtype=np.uint8)
    run.supervisor_sent = np.asarray(modes, dtype=np.uint8)
