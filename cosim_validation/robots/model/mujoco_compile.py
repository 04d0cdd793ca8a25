"""A MuJoCo model specification compiled, MuJoCo's refusal turned into one error that names the robot."""

from __future__ import annotations

from typing import Any

from cosim_validation.robots.model.errors import RobotModelError


def compile_spec(spec: Any, what: str) -> Any:
    """Compile ``spec`` into a ``mujoco.MjModel``.

    Used by every MuJoCo model of an arm: the virtual robot, the emulated arms, the CoppeliaSim stand-in and the
    self-collision model of the monitor.

    Args:
        spec: The ``mujoco.MjSpec`` to compile.
        what: What it is, for the error message (the URDF path, and which model of it).

    Raises:
        RobotModelError: MuJoCo rejects the model (e.g. a link of mass 1e-30 kg, below its mjMINVAL); the
            compiler's text on one line.
    """
    try:
        return spec.compile()
    except ValueError as exc:  # MuJoCo raises a plain ValueError with the compiler's text
        said = " ".join(str(exc).split())
        raise RobotModelError(f"{what}: MuJoCo cannot build the model: {said}") from None
