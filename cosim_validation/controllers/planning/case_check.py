"""Checks of a case's source and target against the anatomy, before anything is planned."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.controllers.planning.errors import PlanningError


def as_point(value: ArrayLike, name: str) -> np.ndarray:
    """``value`` as a finite (3,) float64 point.

    Args:
        value: The point, 3 numbers, in [m].
        name: What it is, for the message (e.g. ``source``).

    Raises:
        PlanningError: ``bad_input`` for a wrong shape, NaN or infinite coordinates.
    """
    try:
        point = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise PlanningError(f"{name} must be 3 numbers [m], got {value!r}", "bad_input") from None
    if point.shape != (3,):
        raise PlanningError(f"{name} must be 3 numbers [m], got shape {point.shape}: {value!r}", "bad_input")
    if not np.isfinite(point).all():
        raise PlanningError(f"{name} must be finite, got {point.tolist()!r}", "bad_input")
    return point


def check_case(world: CollisionWorld, source: ArrayLike, target: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The source and target (3,) of a case in base_link [m], checked against the anatomy.

    Args:
        world: Distance queries against the scene's anatomy.
        source: The case's source point in base_link, shape (3,), in [m].
        target: The case's target point in base_link, shape (3,), in [m].

    Returns:
        The source and the target as float64 arrays, shape (3,) each.

    Raises:
        PlanningError: ``bad_input`` (shape, NaN, inf), ``target_outside_target_model``, ``target_in_obstacle``,
            ``source_inside_body``.
    """
    source_m, target_m = as_point(source, "source"), as_point(target, "target")
    obstacles = world.containing(target_m, world.forbidden)
    if obstacles:
        raise PlanningError(
            f"target {target_m.tolist()} lies inside the forbidden region {obstacles[0]!r}", "target_in_obstacle"
        )
    if not world.containing(target_m, world.targets):
        names = ", ".join(world.targets) or "none"
        raise PlanningError(
            f"target {target_m.tolist()} is outside every target model ({names})", "target_outside_target_model"
        )
    inside = world.containing(source_m, {world.skin_name: world.skin, **world.targets, **world.forbidden})
    if inside:
        raise PlanningError(
            f"source {source_m.tolist()} lies inside {inside[0]!r}; it must be outside the body", "source_inside_body"
        )
    return source_m, target_m
