"""Collision-free joint-space paths with OMPL, for moves whose straight joint interpolation is blocked."""

from __future__ import annotations

import gc
from collections.abc import Callable

import numpy as np

from cosim_validation.common.optional import require
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.planning_config import OmplSettings


def plan_joint_path(
    q_from: np.ndarray,
    q_to: np.ndarray,
    q_lower: np.ndarray,
    q_upper: np.ndarray,
    is_valid: Callable[[np.ndarray], bool],
    step_rad: float,
    settings: OmplSettings,
) -> np.ndarray:
    """Waypoints (m, J) of a collision-free joint path from ``q_from`` to ``q_to`` (OMPL, seeded, simplified).

    Args:
        q_from: (J,) start [rad], valid.
        q_to: (J,) goal [rad], valid.
        q_lower: (J,) lower joint bounds of the search [rad].
        q_upper: (J,) upper joint bounds of the search [rad].
        is_valid: Whether one configuration (J,) is collision-free.
        step_rad: Motions are checked at this joint resolution [rad].
        settings: Planner, time limit, seed.

    Raises:
        PlanningError: ``no_collision_free_path`` when OMPL finds no exact solution in time.
    """
    require("ompl", "ompl", "joint-space planning around obstacles")
    from ompl import base as ob
    from ompl import geometric as og
    from ompl import util as ou

    ou.setLogLevel(ou.LogLevel.LOG_NONE)
    n = len(q_from)
    space = ob.RealVectorStateSpace(n)
    bounds = ob.RealVectorBounds(n)
    for j in range(n):
        bounds.setLow(j, float(q_lower[j]))
        bounds.setHigh(j, float(q_upper[j]))
    space.setBounds(bounds)
    setup = og.SimpleSetup(space)
    setup.setStateValidityChecker(lambda state: bool(is_valid(np.array([state[j] for j in range(n)]))))
    start, goal = space.allocState(), space.allocState()
    for j in range(n):
        start[j], goal[j] = float(q_from[j]), float(q_to[j])
    setup.setStartAndGoalStates(start, goal)
    info = setup.getSpaceInformation()
    # OMPL checks motions at half the step; the planner re-checks the result at the full step
    info.setStateValidityCheckingResolution(0.5 * step_rad / space.getMaximumExtent())
    setup.setPlanner(getattr(og, settings.planner)(info))
    ou.RNG.setSeed(settings.seed + 1)  # OMPL treats seed 0 as "unset"
    solved = setup.solve(settings.time_limit_s)
    exact = bool(solved) and setup.haveExactSolutionPath()
    waypoints = None
    if exact:
        setup.simplifySolution()
        path = setup.getSolutionPath()
        waypoints = np.array([[path.getState(i)[j] for j in range(n)] for i in range(path.getStateCount())])
    del setup, info, space, start, goal
    gc.collect()
    if waypoints is None:
        raise PlanningError(
            f"no collision-free joint path found by OMPL {settings.planner} in {settings.time_limit_s} s",
            "no_collision_free_path",
        )
    return waypoints
