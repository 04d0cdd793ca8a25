"""A closed-loop plugin: follows the straight insertion plan and servoes the tracked needle tip onto it.

The reference is the plan of the straight insertion (source-to-target line, five stages); the monitor checks
"follows the plan" against it. Every control period the controller compares the tracked tip with where the
reference put the tip one period earlier and integrates the difference into a Cartesian correction, which it maps
to the joints with the damped pseudo-inverse of the tip Jacobian and adds to the reference setpoint. So a
physical arm whose geometry differs from the nominal model (the emulated ER3 Pro) ends the injection on the
target instead of a few millimetres off it. The correction is learned during the approach and the injection,
frozen while the needle comes out, and faded out during the reset. Without a tracked tip (NaN) it holds the
correction it has. It moves on along the reference when the robots were sent its last command, so under a task
supervisor that held it back (``observation.q_setpoint`` is then something else) it goes on where it was held.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.common.record import Stage
from cosim_validation.controllers import CaseStart, Command, ControllerContext, Observation
from cosim_validation.controllers.planning import InsertionLine, Plan, PlanningError

_LEARN = (int(Stage.APPROACH), int(Stage.INJECTION))


class TipServo:
    """Straight insertion with the tracked tip in the loop.

    Args:
        context: The case study (planner, kinematics, control period).
        gain: Fraction of the tip error added to the correction every period (0 < gain <= 1).
        damping_m: Damping of the pseudo-inverse [m] (keeps the correction small near singularities).
        max_correction_m: The correction never exceeds this [m].
    """

    def __init__(self, context: ControllerContext, gain: float, damping_m: float, max_correction_m: float) -> None:
        self.name = context.name
        self.planner, self.world, self.kinematics = context.planner, context.world, context.kinematics
        self.gain, self.damping_m, self.max_correction_m = gain, damping_m, max_correction_m
        self.plan: Plan | None = None
        self.correction_m = np.zeros(3)
        self.fade = 1.0

    def reference(self, case: CaseStart) -> Plan:
        """The straight five-stage plan of ``case`` (a ``PlanningError`` refuses the case)."""
        span = case.target_m - case.source_m
        axis = span / np.linalg.norm(span)
        entry = self.world.skin_entries(case.source_m[None, :], case.target_m)[0]
        if not np.isfinite(entry).all():
            raise PlanningError("the line from the source to the target never meets the skin", "no_skin_entry")
        self.plan = self.planner.plan(case.source_m, InsertionLine(case.target_m, axis, entry), self.name)
        return self.plan

    def start(self, case: CaseStart) -> None:
        """A new case: no correction yet, at the reference's first sample (where the robots rest)."""
        self.correction_m = np.zeros(3)
        self.fade = 1.0
        self.index, self.last_q = 0, np.array(case.q0, dtype=float)

    def step(self, observation: Observation) -> Command:
        """The next reference setpoint plus the joint motion that moves the tip by the correction."""
        plan = self.plan
        assert plan is not None, "start() comes after reference()"
        if np.array_equal(observation.q_setpoint, self.last_q):
            self.index += 1  # the last command was sent: on along the reference (a task supervisor may hold it back)
        p = self.index
        if p >= plan.n_samples:
            return Command.done("completed", "the reference is finished")
        stage = int(plan.stage[p])
        previous = plan.q[p - 1]
        if stage in _LEARN and np.isfinite(observation.tip_pos_m).all():
            error = self.kinematics.tip_pose(previous).pos_m - observation.tip_pos_m
            self.correction_m = self._clip(self.correction_m + self.gain * error)
        if stage == int(Stage.RESET):
            self.fade = max(0.0, self.fade - 0.05)
        self.last_q = plan.q[p] + self._joint_step(plan.q[p], self.fade)
        return Command.setpoint(self.last_q, Stage(stage))

    def _joint_step(self, q: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """Joint motion moving the tip by ``scale`` times the correction from ``q`` (damped least squares)."""
        jac = self.kinematics.tip_jacobian(q)[:3]
        lam2 = self.damping_m**2
        return jac.T @ np.linalg.solve(jac @ jac.T + lam2 * np.eye(3), scale * self.correction_m)

    def _clip(self, v: np.ndarray) -> np.ndarray:
        norm = float(np.linalg.norm(v))
        return v if norm <= self.max_correction_m else v * (self.max_correction_m / norm)


def make_controller(options: dict[str, Any], context: ControllerContext) -> TipServo:
    """The factory cosim_validation calls (options: ``gain`` 0.3, ``damping_m`` 0.01, ``max_correction_m`` 0.02)."""
    known = {"gain": 0.3, "damping_m": 0.01, "max_correction_m": 0.02}
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"unknown options {sorted(unknown)}; expected {sorted(known)}")
    values = {key: float(options.get(key, default)) for key, default in known.items()}
    if not 0.0 < values["gain"] <= 1.0:
        raise ValueError(f"gain must be in (0, 1], got {values['gain']}")
    return TipServo(context, values["gain"], values["damping_m"], values["max_correction_m"])
