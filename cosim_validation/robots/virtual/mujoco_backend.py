"""The default virtual robot: the arm in MuJoCo (step ``backends.physics_timestep_s``), first-order-hold servo."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.record import RobotRole
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.model.mujoco_compile import compile_spec
from cosim_validation.robots.robot_backend import BackendSample, JointSet
from cosim_validation.robots.virtual.backends_config import BackendsConfig
from cosim_validation.robots.virtual.command_checks import checked_duration, checked_joint_vector
from cosim_validation.robots.virtual.mujoco_arm import MujocoArm
from cosim_validation.robots.virtual.mujoco_model import actuated_joint_names, add_servo, load_arm_spec


class MujocoBackend(JointSet):
    """Virtual robot in MuJoCo; implements :class:`~cosim_validation.robots.robot_backend.RobotBackend`.

    The measured joints are the simulator state and the actual tip pose is its ground truth (the
    ``needle_tip`` site), both exact.

    Args:
        config: The shared backend configuration (physics rate, servo).
        kinematics: The arm (its URDF) and the needle.
    """

    name = "mujoco"
    role = RobotRole.VIRTUAL

    def __init__(self, config: BackendsConfig, kinematics: Kinematics) -> None:
        spec = load_arm_spec(kinematics)
        add_servo(spec, config.servo, config.physics_timestep_s)
        model = compile_spec(spec, str(kinematics.chain.urdf_path))
        self._arm = MujocoArm(model)
        self._joint_names = actuated_joint_names(spec)
        self._joint_units = kinematics.joint_units
        self._q_lower = np.array(model.jnt_range[: self._arm.n_joints, 0])
        self._q_upper = np.array(model.jnt_range[: self._arm.n_joints, 1])
        self._setpoint_rad = np.zeros(self._arm.n_joints)
        self._requested_s = 0.0
        self.reset(np.clip(np.zeros(self._arm.n_joints), self._q_lower, self._q_upper))

    @property
    def physics_timestep_s(self) -> float:
        """Physics period [s]."""
        return self._arm.timestep_s

    @property
    def model(self) -> Any:
        """The arm's ``mujoco.MjModel`` (servo, armature, damping, physics options)."""
        return self._arm.model

    def _joints(self, value: ArrayLike, what: str) -> np.ndarray:
        return checked_joint_vector(
            value, f"{self.name} {what}", self._joint_names, self._q_lower, self._q_upper, self._joint_units
        )

    def reset(self, q0: ArrayLike) -> None:
        """At rest at ``q0`` ((J,) [rad]), clock at 0.

        Args:
            q0: Joint positions, shape (J,), in [rad], or [m] for a prismatic joint; within the URDF limits.
        """
        q0 = self._joints(q0, "reset pose")
        self._arm.reset(q0)
        self._setpoint_rad = q0
        self._requested_s = 0.0

    def command(self, q_setpoint: ArrayLike, duration_s: float) -> None:
        """Ramp the servo reference to ``q_setpoint`` ((J,) [rad]) within ``duration_s`` [s].

        Args:
            q_setpoint: Joint setpoint, shape (J,), in [rad], or [m] for a prismatic joint; within the URDF limits.
            duration_s: Time to reach it, > 0, in [s] (rounded to whole physics steps, at least one).
        """
        q = self._joints(q_setpoint, "setpoint")
        duration = checked_duration(duration_s, f"{self.name} command duration_s")
        self._arm.ramp.start(q, duration)
        self._setpoint_rad = q

    def advance(self, dt_s: float) -> None:
        """Simulate ``dt_s`` [s] (whole physics steps; the clock never drifts from the requested time).

        Args:
            dt_s: Time to simulate, > 0, in [s].
        """
        self._requested_s += checked_duration(dt_s, f"{self.name} advance dt_s")
        self._arm.step(self._arm.steps_until(self._requested_s))

    def read(self) -> BackendSample:
        """Time, setpoint, joints and ground-truth tip pose now."""
        self._arm.kinematics()
        tip_pos_m, tip_quat_wxyz = self._arm.tip_pose()
        return BackendSample(
            t_s=self._arm.time_s,
            q_setpoint=self._setpoint_rad.copy(),
            q_measured=self._arm.joint_positions_rad(),
            actual_tip_pos_m=tip_pos_m,
            actual_tip_quat_wxyz=tip_quat_wxyz,
        )

    def close(self) -> None:
        """Nothing to release (the model lives in this process)."""
