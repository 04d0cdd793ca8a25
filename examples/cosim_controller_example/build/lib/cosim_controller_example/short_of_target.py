"""A planning plugin: inserts along the source-to-target line and stops ``stop_short_m`` before the target.

The whole plan is made before the first setpoint (``plan_case``) with the five-stage planner the context hands
over; the lockstep loop streams it open loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.controllers.planning import InsertionLine, Plan, PlanningError
from cosim_validation.controllers.plugin_api import ControllerContext


class ShortOfTarget:
    """Straight insertion that keeps ``stop_short_m`` [m] from the target (a biopsy needle's throw, say).

    Args:
        context: The case study (planner, anatomy).
        stop_short_m: Distance before the target where the needle stops [m].
    """

    def __init__(self, context: ControllerContext, stop_short_m: float) -> None:
        self.name = context.name
        self.planner, self.world = context.planner, context.world
        self.stop_short_m = stop_short_m

    def plan_case(self, source: np.ndarray, target: np.ndarray, seed: int = 0) -> Plan:
        """The five-stage plan; a refusal (``PlanningError`` with a reason) when the line misses the skin."""
        axis = (target - source) / np.linalg.norm(target - source)
        entry = self.world.skin_entries(source[None, :], target)[0]
        if not np.isfinite(entry).all():
            raise PlanningError("the line from the source to the target never meets the skin", "no_skin_entry")
        end = target - self.stop_short_m * axis
        return self.planner.plan(source, InsertionLine(end, axis, entry), self.name)


def make_controller(options: dict[str, Any], context: ControllerContext) -> ShortOfTarget:
    """The factory cosim_validation calls (options: ``stop_short_m``, default 0.002 m)."""
    unknown = set(options) - {"stop_short_m"}
    if unknown:
        raise ValueError(f"unknown options {sorted(unknown)}; expected stop_short_m")
    stop = float(options.get("stop_short_m", 0.002))
    if not 0.0 <= stop < 0.05:
        raise ValueError(f"stop_short_m must be in [0, 0.05) m, got {stop}")
    return ShortOfTarget(context, stop)
