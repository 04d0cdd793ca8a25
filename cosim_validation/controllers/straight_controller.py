"""The flawed controller of [Actuators 2025]: it inserts along the source-to-target line, whatever lies on it."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.controllers.planning.case_check import check_case
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.five_stage_planner import FiveStagePlanner
from cosim_validation.controllers.planning.plan import InsertionLine, Plan


class StraightController:
    """Inserts along the line from the source through the target, ignoring forbidden regions.

    Args:
        planner: The five-stage planner (arm, anatomy, limits).
    """

    name = "straight"

    def __init__(self, planner: FiveStagePlanner) -> None:
        self.planner = planner

    def plan_case(self, source: ArrayLike, target: ArrayLike, seed: int = 0) -> Plan:
        """The plan of one case (``seed`` is not used: the plan is deterministic).

        Args:
            source: The case's source point, shape (3,), in base_link, in [m].
            target: The case's target point, shape (3,), in base_link, in [m].
            seed: The case seed (not used).

        Raises:
            PlanningError: Bad input, or the target cannot be reached along the line (with the reason).
        """
        source_m, target_m = check_case(self.planner.world, source, target)
        span = target_m - source_m
        axis = span / np.linalg.norm(span)
        entry = self.planner.world.skin_entries(source_m[None, :], target_m)[0]
        if not np.isfinite(entry).all():
            raise PlanningError(
                f"the line from the source to the target {target_m.tolist()} never meets the skin", "no_skin_entry"
            )
        return self.planner.plan(source_m, InsertionLine(target_m, axis, entry), self.name)
