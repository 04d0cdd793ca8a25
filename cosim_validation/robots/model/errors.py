"""Errors of the robot model: bad kinematic input and poses the arm cannot take."""

from __future__ import annotations

from cosim_validation.common.exceptions import CosimError, InputError


class RobotModelError(CosimError):
    """A robot description (URDF) cannot be used: missing file, unknown frame, not a serial chain."""


class KinematicsInputError(InputError):
    """A joint vector or Cartesian target given to the kinematics is malformed (shape, NaN, inf, limits)."""
