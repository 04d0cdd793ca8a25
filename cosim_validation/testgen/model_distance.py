"""Distances from points to a model's surface for test generation, through metrics.MeshDistance."""

from __future__ import annotations

import numpy as np

from cosim_validation.anatomy import AnatomyModel
from cosim_validation.monitor.metrics import MeshDistance

_CACHE: dict[int, tuple[AnatomyModel, MeshDistance]] = {}


def mesh_distance(model: AnatomyModel) -> MeshDistance:
    """The (cached, per model object) exact distance structure of ``model``."""
    entry = _CACHE.get(id(model))
    if entry is None or entry[0] is not model:
        entry = (model, MeshDistance(model.vertices_m, model.faces))
        _CACHE[id(model)] = entry
    return entry[1]


def signed_distance_m(model: AnatomyModel, points_m: np.ndarray) -> np.ndarray:
    """(N,) float64 signed distance to the surface of ``model`` [m], negative inside.

    Args:
        model: The anatomy model.
        points_m: Points in base_link, shape (N, 3), in [m].
    """
    if len(points_m) == 0:
        return np.zeros(0)
    return mesh_distance(model).signed(np.ascontiguousarray(points_m, dtype=np.float64))


def surface_distance_m(model: AnatomyModel, points_m: np.ndarray) -> np.ndarray:
    """(N,) float64 unsigned distance to the surface of ``model`` [m] (a target's depth).

    Args:
        model: The anatomy model.
        points_m: Points in base_link, shape (N, 3), in [m].
    """
    if len(points_m) == 0:
        return np.zeros(0)
    return mesh_distance(model).unsigned(np.ascontiguousarray(points_m, dtype=np.float64))


def box_distance_m(bounds_m: np.ndarray, points_m: np.ndarray) -> np.ndarray:
    """(N,) float64 distance from points to an axis-aligned box (2, 3) [m]; 0 inside.

    It is a lower bound of the distance to anything inside the box.

    Args:
        bounds_m: Minimum and maximum corner of the box, shape (2, 3), in [m].
        points_m: Points in the box's frame, shape (N, 3), in [m].
    """
    gap = np.maximum(np.maximum(bounds_m[0] - points_m, points_m - bounds_m[1]), 0.0)
    return np.asarray(np.sqrt(np.sum(gap * gap, axis=1)))
