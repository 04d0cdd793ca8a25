"""The state validator of the I-SUR architecture ([Preda et al. 2016]): every setpoint is checked before it is sent.

A setpoint passes when it is finite, within the joint limits, reachable from the last accepted setpoint
within one period at the commanding velocity limits, free of self-collision, with the arm outside the skin,
and with the needle farther than the clearance from every forbidden region. Otherwise it is discarded and
the robot stops: every later setpoint is refused too, until :meth:`StateValidator.reset`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.config.config_node import MAX_CLEARANCE_M
from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.controllers.planning.motion_checker import MotionChecker
from cosim_validation.robots.model import RobotConfig

_KEYS = ("enabled", "forbidden_clearance_m", "arm_clearance_m", "velocity_tolerance", "self_collision")


@dataclass(frozen=True)
class ValidatorSettings:
    """What the validator requires of a setpoint.

    Attributes:
        enabled: Whether every mode (campaign, session, run-case) validates by default; ``--validate`` /
            ``--no-validate`` override it.
        forbidden_clearance_m: The needle stays at least this far from every forbidden region [m].
        arm_clearance_m: Arm links and holder stay at least this far outside the skin [m].
        velocity_tolerance: A step may reach this multiple of (velocity limit x period).
        self_collision: Whether self-collision is checked.
    """

    enabled: bool = False
    forbidden_clearance_m: float = 0.005
    arm_clearance_m: float = 0.0
    velocity_tolerance: float = 1.05
    self_collision: bool = True

    @classmethod
    def from_config(cls, node: ConfigNode) -> ValidatorSettings:
        """Read the ``validator`` section (``node`` is that section).

        Args:
            node: The ``validator`` section.
        """
        node.reject_unknown(_KEYS)
        return cls(
            enabled=node["enabled"].to_bool(),
            forbidden_clearance_m=node["forbidden_clearance_m"].to_float(minimum=0.0, maximum=MAX_CLEARANCE_M),
            arm_clearance_m=node["arm_clearance_m"].to_float(minimum=0.0, maximum=MAX_CLEARANCE_M),
            velocity_tolerance=node["velocity_tolerance"].to_float(minimum=1.0),
            self_collision=node["self_collision"].to_bool(),
        )


class SetpointVerdict(NamedTuple):
    """The validator's answer for one setpoint.

    Attributes:
        accepted: Whether the setpoint may be sent.
        code: ``ok``, ``stopped``, ``malformed``, ``joint_limits``, ``velocity``, ``self_collision``,
            ``arm_in_body`` or ``forbidden_region``.
        message: Why it was refused ("" when accepted).
    """

    accepted: bool
    code: str
    message: str


_OK = SetpointVerdict(True, "ok", "")


class StateValidator:
    """Checks setpoints one by one; after the first refusal the robot is stopped.

    Args:
        robot: Arm, needle, URDF limits and commanding limits.
        world: The anatomy (skin, forbidden regions).
        settings: Clearances and tolerances.
        period_s: Time between setpoints [s].
    """

    def __init__(self, robot: RobotConfig, world: CollisionWorld, settings: ValidatorSettings, period_s: float) -> None:
        self.robot = robot
        self.kinematics = robot.kinematics
        self.world = world
        self.settings = settings
        self.max_step_rad = robot.limits.velocity * period_s * settings.velocity_tolerance
        self.checker = MotionChecker(
            self.kinematics, world, settings.arm_clearance_m, cover_step_m=0.0, port_links=robot.port_links
        )
        self._last: np.ndarray | None = None
        self.stop_reason: SetpointVerdict | None = None

    @property
    def stopped(self) -> bool:
        """Whether a setpoint was refused (the robot holds the last accepted one)."""
        return self.stop_reason is not None

    @property
    def last_accepted(self) -> np.ndarray | None:
        """(J,) the last accepted setpoint (or the reset state) [rad, or m for a prismatic joint]."""
        return None if self._last is None else self._last.copy()

    def reset(self, q_current_rad: ArrayLike) -> None:
        """Start over from the measured joints; the robot may move again.

        Args:
            q_current_rad: The measured joints, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        self._last = self.kinematics.as_joint_batch(q_current_rad, "q_current_rad")[0]
        self.stop_reason = None

    def check(self, q_setpoint: ArrayLike) -> SetpointVerdict:
        """Check one setpoint (J,); an accepted one becomes the reference of the next velocity check.

        Args:
            q_setpoint: The setpoint, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        if self.stop_reason is not None:
            return SetpointVerdict(False, "stopped", f"robot stopped: {self.stop_reason.message}")
        verdict = self._evaluate(q_setpoint)
        if verdict.accepted:
            self._last = np.asarray(q_setpoint, dtype=np.float64).copy()
        else:
            self.stop_reason = verdict
        return verdict

    def _evaluate(self, q_setpoint: ArrayLike) -> SetpointVerdict:
        q = np.asarray(q_setpoint, dtype=np.float64)
        if q.shape != (self.kinematics.n_joints,) or not np.isfinite(q).all():
            expected = f"{self.kinematics.n_joints} finite joint positions"
            return SetpointVerdict(False, "malformed", f"setpoint must be {expected}, got {q.tolist()!r}")
        violations = self.kinematics.limit_violations(q)
        if violations:
            return SetpointVerdict(False, "joint_limits", f"joint limits: {'; '.join(violations)}")
        if self._last is not None:
            step = np.abs(q - self._last)
            too_fast = np.flatnonzero(step > self.max_step_rad)
            if too_fast.size:
                j = int(too_fast[0])
                unit = self.kinematics.chain.joint_unit(j)
                return SetpointVerdict(
                    False,
                    "velocity",
                    f"unreachable in one period: {self.kinematics.joint_names[j]} moves {step[j]:.4f} {unit} "
                    f"> {self.max_step_rad[j]:.4f} {unit}",
                )
        return self._geometry(q)

    def _geometry(self, q: np.ndarray) -> SetpointVerdict:
        batch = q[None, :]
        if self.settings.self_collision:
            problem = self.checker.self_collision_problem(batch)
            if problem:
                return SetpointVerdict(False, "self_collision", problem)
        problem = self.checker.arm_problem(batch)
        if problem:
            return SetpointVerdict(False, "arm_in_body", problem)
        clearance = self.settings.forbidden_clearance_m
        mount, tip = self.kinematics.needle_segments(batch)
        distance, names = self.world.forbidden_distance(mount, tip, enough_m=clearance)
        if distance[0] < clearance:
            return SetpointVerdict(
                False,
                "forbidden_region",
                f"needle {distance[0] * 1e3:.2f} mm from {names[0]!r} (clearance {clearance * 1e3:.1f} mm)",
            )
        return _OK


def validated_setpoints(validator: StateValidator, q_plan: np.ndarray) -> tuple[np.ndarray, int | None]:
    """Pass a plan's setpoints (n, J) through the validator, as a controller streaming them would.

    The validator is reset to the plan's first sample.

    Args:
        validator: The state validator.
        q_plan: The plan's setpoints, shape (n, J), in [rad], or [m] for a prismatic joint.

    Returns:
        The setpoints actually sent (n, J) (after a refusal, the last accepted one is held) and the index of the first
        refused setpoint (None if all passed).
    """
    validator.reset(q_plan[0])
    sent = q_plan.copy()
    for i, q in enumerate(q_plan):
        if not validator.check(q).accepted:
            held = validator.last_accepted
            assert held is not None
            sent[i:] = held
            return sent, i
    return sent, None
