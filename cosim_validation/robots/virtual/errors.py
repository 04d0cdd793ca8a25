"""Errors of the robot backends: bad commands, bad names, engines that cannot load the robot."""

from __future__ import annotations

from cosim_validation.common.exceptions import CosimError, InputError


class BackendInputError(InputError):
    """A command, duration, trajectory or backend name given to a backend is not acceptable."""


class BackendModelError(CosimError):
    """A physics engine cannot build the robot model (missing URDF, missing frame, bad needle length)."""


class BackendConnectionError(CosimError):
    """A simulator in another process (CoppeliaSim) does not answer, or the connection to it broke."""
