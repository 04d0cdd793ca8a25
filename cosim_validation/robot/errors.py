"""Errors of the robot model: bad kinematic input and poses the arm cannot take."""

from __future__ import annotations

from cosim_validation.exceptions import CosimError, InputError


class RobotModelError(CosimError):
    """A robot description (URDF) cannot be used: missing file, unknown frame, not a serial chain."""


class KinematicsInputError(InputError):
    """A joint vector or Cartesian target given to the kinematics is malformed (shape, NaN, inf, limits)."""


class UnreachableError(CosimError):
    """Inverse kinematics found no joint vector within the limits for a requested tip pose.

    Attributes:
        reason: Short machine-friendly reason, e.g. ``position_error`` or ``joint_limits``.
    """

    def __init__(self, message: str, reason: str) -> None:
        self.reason = reason
        super().__init__(message)
