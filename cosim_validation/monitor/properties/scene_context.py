"""Building a :class:`MonitorContext` from what a run has: the anatomy scene, a record, a target."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cosim_validation.anatomy import AnatomyScene
from cosim_validation.common.config.config_node import MAX_POINT_M
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.monitor.properties.context import DistanceField, MonitorContext, SelfCollisionCheck, SelfDistance
from cosim_validation.monitor.properties.obstacles import MeshObstacle

#: Key of a record's meta that may hold the case's target point in base_link [m].
TARGET_META_KEY = "target_m"


def scene_obstacles(scene: AnatomyScene) -> dict[str, DistanceField]:
    """The scene's forbidden regions (role ``obstacle``, e.g. the heart) as exact mesh obstacles, by name.

    Each gets a signed-distance grid for fast bounds (about 1 s for the built-in heart): build them once
    per scene and reuse them for every case and robot.

    Args:
        scene: The case's anatomy scene; its models of role ``obstacle`` (vertices in base_link [m]) are used.
    """
    return {m.name: MeshObstacle.from_arrays(m.vertices_m, m.faces) for m in scene.obstacles}


def record_target(record: TrajectoryRecord) -> np.ndarray | None:
    """The target stored in ``record.meta['target_m']``, if any.

    Args:
        record: The robot's trajectory; its meta may hold the target in base_link, 3 numbers in [m].

    Returns:
        The target point, shape (3,), in [m]; None if the meta has none.

    Raises:
        InputError: The value is not 3 finite numbers within ``MAX_POINT_M`` of the base (1e300 overflowed the
            distances to it).
    """
    value: Any = record.meta.get(TARGET_META_KEY)
    if value is None:
        return None
    try:
        target = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        target = np.zeros(0)
    if target.shape != (3,) or not np.isfinite(target).all() or np.abs(target).max() > MAX_POINT_M:
        raise InputError(
            f"trajectory record {record.test_id!r}: meta {TARGET_META_KEY!r} is not 3 numbers within "
            f"+-{MAX_POINT_M:g} m of the base: {value!r}"
        )
    return target


def record_context(
    record: TrajectoryRecord,
    obstacles: Mapping[str, DistanceField] | None = None,
    *,
    target_m: np.ndarray | None = None,
    self_distance: SelfDistance | None = None,
    self_collision: SelfCollisionCheck | None = None,
) -> MonitorContext:
    """The context of ``record``.

    Its joints and needle, the obstacles, the target (given, else from meta) and the robot's self-collision model,
    if any.

    Args:
        record: The robot's trajectory.
        obstacles: Distance fields in base_link by obstacle name.
        target_m: The case's target point in base_link, shape (3,), in [m]; None: from the record's meta.
        self_distance: Smallest distance between non-adjacent links of joint vectors; None: not known.
        self_collision: Whether the links of joint vectors touch each other; None: not known.
    """
    target = target_m if target_m is not None else record_target(record)
    obstacles = dict(obstacles or {})
    names, needle = record.joint_names, record.needle_length_m
    return MonitorContext(names, needle, obstacles, self_distance, target, self_collision=self_collision)
