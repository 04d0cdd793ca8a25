"""The ``backends:`` section shared by every engine: physics rate and the joint position servo."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.common.config import ConfigNode
from cosim_validation.robots.virtual.config_vectors import joint_vector


@dataclass(frozen=True)
class JointServoConfig:
    """The joint position servo every engine runs at the physics rate.

    tau = kp (q_ref - q) + kd (dq_ref - dq) + g(q), limited to the URDF effort, where q_ref is the
    first-order hold of the streamed setpoints and dq_ref its slope (velocity feed-forward).

    Attributes:
        kp_nm_per_rad: (J,) position gains [N m/rad].
        kd_nms_per_rad: (J,) velocity gains [N m s/rad].
        armature_kg_m2: (J,) reflected rotor inertia added to each joint [kg m^2].
        damping_nms_per_rad: (J,) viscous joint friction [N m s/rad].
        gravity_compensation: Whether the servo adds the model's gravity torque g(q).
    """

    kp_nm_per_rad: np.ndarray
    kd_nms_per_rad: np.ndarray
    armature_kg_m2: np.ndarray
    damping_nms_per_rad: np.ndarray
    gravity_compensation: bool

    @property
    def n_joints(self) -> int:
        """Number of joints J."""
        return int(self.kp_nm_per_rad.shape[0])

    @classmethod
    def from_config(cls, node: ConfigNode, n_joints: int) -> JointServoConfig:
        """Read ``backends.servo``.

        Args:
            node: The ``backends.servo`` section.
            n_joints: Number of joints J, the length of each per-joint list.
        """
        node.reject_unknown(
            ["kp_nm_per_rad", "kd_nms_per_rad", "armature_kg_m2", "damping_nms_per_rad", "gravity_compensation"]
        )
        return cls(
            kp_nm_per_rad=joint_vector(node["kp_nm_per_rad"], n_joints, exclusive_minimum=0.0),
            kd_nms_per_rad=joint_vector(node["kd_nms_per_rad"], n_joints, minimum=0.0),
            armature_kg_m2=joint_vector(node["armature_kg_m2"], n_joints, minimum=0.0, maximum=100.0),
            damping_nms_per_rad=joint_vector(node["damping_nms_per_rad"], n_joints, minimum=0.0),
            gravity_compensation=node["gravity_compensation"].to_bool(),
        )


@dataclass(frozen=True)
class BackendsConfig:
    """What every backend shares.

    Attributes:
        default: Name of the backend used when none is asked for (checked against the registry,
            :mod:`cosim_validation.robots.registry`, when a backend is built).
        physics_timestep_s: Physics and servo period [s] (0.001 = 1 kHz).
        servo: The joint position servo.
    """

    default: str
    physics_timestep_s: float
    servo: JointServoConfig

    @classmethod
    def from_config(cls, node: ConfigNode, n_joints: int = 7) -> BackendsConfig:
        """Read the ``backends`` section (its ``emulated``, ``coppeliasim`` and ``ros2_control`` parts: those engines).

        Args:
            node: The ``backends`` section.
            n_joints: Number of joints J, the length of each per-joint list of ``servo``.
        """
        node.reject_unknown(["default", "physics_timestep_s", "servo", "emulated", "coppeliasim", "ros2_control"])
        return cls(
            default=node["default"].to_str(),
            physics_timestep_s=node["physics_timestep_s"].to_float(minimum=1e-5, maximum=0.01),  # 100 kHz..100 Hz
            servo=JointServoConfig.from_config(node["servo"], n_joints),
        )
