"""The documented control-loop pattern (docs/SUPERVISOR.md, "In the control loop") with a real robot backend.

One supervisor step per 10 Hz setpoint period: feed what was measured after the previous setpoint, step,
then send the next setpoint of the permitted stage, or re-send the last one (hold). The ROS controller
node will do the same with topics; this is the batch version the tests measure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from cosim_validation.planning.collision_world import CollisionWorld
from cosim_validation.planning.plan import Plan
from cosim_validation.record import Stage
from cosim_validation.robot import Kinematics
from cosim_validation.sim.robot_backend import RobotBackend
from cosim_validation.supervisor.needle_force import NeedleForceModel, NeedleForceStream
from cosim_validation.supervisor.supervisor import Supervisor, SupervisorStatus

#: (step index, status before the step's observations) -> override of the observations, e.g. {"force": 5.0}
Injector = Callable[[int, SupervisorStatus], dict[str, object]]


@dataclass
class LoopRun:
    """What the loop did, period by period."""

    t_s: list[float] = field(default_factory=list)
    status: list[SupervisorStatus] = field(default_factory=list)
    sent_index: list[int] = field(default_factory=list)  # plan index commanded in the period (-1: hold)
    q_measured: list[np.ndarray] = field(default_factory=list)
    tip_m: list[np.ndarray] = field(default_factory=list)


def run_supervised(
    plan: Plan,
    backend: RobotBackend,
    kinematics: Kinematics,
    world: CollisionWorld,
    forces: NeedleForceModel,
    supervisor: Supervisor,
    inject: Injector,
    extra_periods: int = 10,
) -> LoopRun:
    """Run ``plan`` under ``supervisor`` on ``backend`` until the task ends or stops (+ ``extra_periods``)."""
    dt = float(plan.t_s[1] - plan.t_s[0])
    backend.reset(plan.q[0])
    stream = NeedleForceStream(forces)
    status = supervisor.start(0.0)
    supervisor.task_configured()
    sent, last_q, run, tail = 0, plan.q[0], LoopRun(), None
    for period in range(1, 10 * plan.n_samples):
        t = period * dt
        sample = backend.read()
        holder, tip = kinematics.needle_segments(sample.q_measured)
        override = inject(period, status)
        distance, _ = world.forbidden_distance(holder, tip)
        supervisor.observe_clearance(float(override.get("clearance", distance[0])))
        supervisor.observe_force(float(override.get("force", stream.update(t, holder[0], tip[0])[1])))
        supervisor.observe_tip(t, bool(override.get("tracked", np.all(np.isfinite(sample.actual_tip_pos_m)))))
        if override.get("abort"):
            supervisor.request("abort")
        status = supervisor.step(t)
        index = -1
        if status.motion_allowed and sent + 1 < plan.n_samples and plan.stage[sent + 1] == status.stage:
            sent = index = sent + 1
            last_q = plan.q[sent]
            if sent + 1 == plan.n_samples or plan.stage[sent + 1] != plan.stage[sent]:
                supervisor.stage_finished(Stage(plan.stage[sent]))
        backend.command(last_q, dt)
        backend.advance(dt)
        run.t_s.append(t)
        run.status.append(status)
        run.sent_index.append(index)
        run.q_measured.append(sample.q_measured)
        run.tip_m.append(tip[0])
        if tail is None and (status.finished or status.state.endswith("TaskStopped")):
            tail = extra_periods
        if tail is not None:
            tail -= 1
            if tail < 0:
                break
    return run
