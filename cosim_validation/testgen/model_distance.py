"""Distances from points to a model's surface for test generation, through metrics.MeshDistance."""

from __future__ import annotations

import numpy as np

from cosim_validation.anatomy import AnatomyModel
from cosim_validation.monitor.metrics import MeshDistance

_CACHE: dict[int, tuple[AnatomyModel, MeshDistance]] = {}


def mesh_distance(model: AnatomyModel) -> MeshDistance:
    """The (cached, per model object) exact distance structure of ``model``.

    Args:
        model: The anatomy model; the structure is built once per model object and cached.
    """
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
