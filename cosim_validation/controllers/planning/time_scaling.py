"""Jerk-limited rest-to-rest motion along a path parameter, sampled at a fixed rate (ruckig)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from cosim_validation.common.optional import require
from cosim_validation.controllers.planning.errors import PlanningError


def profile_samples(
    length: float, max_velocity: float, max_acceleration: float, max_jerk: float, dt_s: float
) -> np.ndarray:
    """Path parameter at t = 0, dt, ..., T of a time-optimal jerk-limited move from 0 to ``length``, rest to rest.

    The duration T is rounded up to a whole number of sample periods (the move is then slightly slower than
    time-optimal) and is at least one period, so every motion has at least one new sample.

    Args:
        length: Path length (>= 0), in the unit of the limits (e.g. [m] or a normalised [1]).
        max_velocity: Speed limit along the path [unit/s], > 0.
        max_acceleration: [unit/s^2], > 0.
        max_jerk: [unit/s^3], > 0.
        dt_s: Sample period [s], > 0.

    Returns:
        (N + 1,) float64 path parameter, non-decreasing, first 0, last ``length``; N >= 1.
    """
    ruckig = require("ruckig", "ruckig", "time parametrisation")
    if length <= 0.0:
        return np.zeros(2)
    inp = ruckig.InputParameter(1)
    inp.current_position = [0.0]
    inp.target_position = [float(length)]
    inp.max_velocity = [float(max_velocity)]
    inp.max_acceleration = [float(max_acceleration)]
    inp.max_jerk = [float(max_jerk)]
    otg = ruckig.Ruckig(1)
    trajectory = ruckig.Trajectory(1)
    _calculate(otg, inp, trajectory, ruckig.RuckigError)
    n = max(1, math.ceil(trajectory.duration / dt_s - 1e-9))
    inp.minimum_duration = n * dt_s
    _calculate(otg, inp, trajectory, ruckig.RuckigError)
    s = np.array([trajectory.at_time(k * dt_s)[0][0] for k in range(n + 1)])
    s[-1] = length
    clipped: np.ndarray = np.clip(s, 0.0, length)
    return clipped


def _calculate(otg: Any, inp: Any, trajectory: Any, ruckig_error: type[Exception]) -> None:
    """``otg.calculate``; a failure (limits ruckig cannot time a motion with) is a :class:`PlanningError`.

    Args:
        otg: The ruckig.Ruckig instance.
        inp: Its input parameters (one degree of freedom).
        trajectory: The ruckig.Trajectory it fills.
        ruckig_error: ruckig.RuckigError, from the module :func:`profile_samples` loaded.
    """
    try:
        otg.calculate(inp, trajectory)
    except (ruckig_error, ValueError) as exc:  # or a result code its binding does not name (ValueError)
        said = " ".join(str(exc).split()).split(" input:")[0][:120]
        raise PlanningError(
            f"the motion cannot be timed at speed {inp.max_velocity[0]:.3g}, acceleration "
            f"{inp.max_acceleration[0]:.3g}, jerk {inp.max_jerk[0]:.3g} over {inp.target_position[0]:.3g} "
            f"(ruckig: {said})",
            "bad_input",
        ) from exc
