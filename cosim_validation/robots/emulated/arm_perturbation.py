"""One real arm drawn from the manufacturing tolerances: how its geometry and masses differ from the URDF."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim_validation.common.optional import require
from cosim_validation.robots.emulated.emulated_config import DynamicsErrorConfig, KinematicErrorConfig
from cosim_validation.robots.virtual.mujoco_model import TIP_SITE

# A mass never drops below this fraction of nominal, whatever the draw (keeps the model physical).
_MIN_MASS_SCALE = 0.2


@dataclass(frozen=True)
class ArmPerturbation:
    """Differences of one real arm from the nominal model.

    Attributes:
        joint_zero_offset_rad: (J,) where each joint really is when its encoder reads 0 [rad]: the arm's
            kinematics at encoder angles q equal the nominal kinematics at q + offset.
        link_length_error_m: (J,) error of each joint origin along its parent frame's z axis [m].
        needle_length_error_m: Error of the needle length [m].
        body_names: Names of the B bodies whose masses are perturbed.
        mass_scale: (B,) real mass / nominal mass of each body (inertia scales alike).
    """

    joint_zero_offset_rad: np.ndarray
    link_length_error_m: np.ndarray
    needle_length_error_m: float
    body_names: tuple[str, ...]
    mass_scale: np.ndarray

    @classmethod
    def draw(
        cls,
        kinematics: KinematicErrorConfig,
        dynamics: DynamicsErrorConfig,
        n_joints: int,
        body_names: tuple[str, ...],
        rng: np.random.Generator,
    ) -> ArmPerturbation:
        """Draw every error from zero-mean normal distributions with the configured standard deviations.

        Args:
            kinematics: Standard deviations of the geometry errors (joint zero offsets, link lengths, needle length).
            dynamics: Its ``link_mass_error_rel_std`` is the relative standard deviation of each body's mass.
            n_joints: Number of joints J.
            body_names: Names of the B bodies whose masses are perturbed (e.g. :func:`massive_body_names`).
            rng: Random generator of the draws (the arm's geometry stream).
        """
        zero = rng.normal(0.0, kinematics.joint_zero_offset_std_rad, n_joints)
        length = rng.normal(0.0, kinematics.link_length_error_std_m, n_joints)
        needle = float(rng.normal(0.0, kinematics.needle_length_error_std_m))
        scale = np.maximum(_MIN_MASS_SCALE, 1.0 + rng.normal(0.0, dynamics.link_mass_error_rel_std, len(body_names)))
        return cls(zero, length, needle, tuple(body_names), scale)

    def apply(self, spec: Any, joint_names: tuple[str, ...], gravity_compensation: bool) -> None:
        """Edit a MuJoCo spec built by :mod:`cosim_validation.robots.virtual.mujoco_model` into this real arm.

        The servo keeps compensating the *nominal* gravity: a body whose mass is scaled by s gets
        ``gravcomp = 1 / s`` (MuJoCo applies gravcomp times the body's own weight).

        Args:
            spec: The ``mujoco.MjSpec`` of the nominal arm (with its servo and ``needle_tip`` site), edited in place.
            joint_names: Names of the J actuated joints of ``spec``, base to tool, in the order of the (J,) errors.
            gravity_compensation: Whether the servo compensates gravity; if so, each perturbed body's ``gravcomp``
                is set to 1 / its mass scale.
        """
        mujoco = require("mujoco", "mujoco", "the emulated ER3 Pro")
        for i, name in enumerate(joint_names):
            joint = spec.joint(name)
            body = joint.parent
            body.pos[2] += self.link_length_error_m[i]
            offset = np.empty(4)
            mujoco.mju_axisAngle2Quat(
                offset, np.asarray(joint.axis, dtype=np.float64), float(self.joint_zero_offset_rad[i])
            )
            rotated = np.empty(4)
            mujoco.mju_mulQuat(rotated, np.asarray(body.quat, dtype=np.float64), offset)
            body.quat = rotated
        tip = spec.site(TIP_SITE)
        tip_rotation = np.empty(9)
        mujoco.mju_quat2Mat(tip_rotation, np.asarray(tip.quat, dtype=np.float64))
        tip.pos = np.asarray(tip.pos) + self.needle_length_error_m * tip_rotation.reshape(3, 3)[:, 2]
        for name, scale in zip(self.body_names, self.mass_scale, strict=True):
            body = spec.body(name)
            body.mass = body.mass * scale
            body.fullinertia = np.asarray(body.fullinertia) * scale
            if gravity_compensation:
                body.gravcomp = 1.0 / scale


def massive_body_names(spec: Any) -> tuple[str, ...]:
    """Names of the bodies of ``spec`` with a positive mass.

    Args:
        spec: A ``mujoco.MjSpec`` (e.g. from :func:`~cosim_validation.robots.virtual.mujoco_model.load_arm_spec`).
    """
    return tuple(b.name for b in spec.bodies if b.mass > 0.0)
