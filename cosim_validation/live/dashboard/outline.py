"""Outlines of anatomy models in a plane, for the dashboard's 2-D views of the tip paths."""

from __future__ import annotations

import numpy as np

AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


def projected_outline(triangles_m: np.ndarray, axes: str) -> np.ndarray:
    """The convex outline of a mesh seen along the third axis (a closed polygon).

    The convex hull of the projected vertices: exact for a convex model (the heart is close to one), an
    envelope for a concave one (the lung's cardiac notch is filled in).

    Args:
        triangles_m: (F, 3, 3) triangle corners [m].
        axes: Two of x, y, z: the plane's horizontal and vertical axes, e.g. ``"xy"`` (top view).

    Returns:
        (k + 1, 2) polygon [m], first point repeated at the end; (0, 2) for an empty mesh.
    """
    from scipy.spatial import ConvexHull, QhullError

    if len(axes) != 2 or any(a not in AXIS_INDEX for a in axes):
        raise ValueError(f"axes must be two of x, y, z, got {axes!r}")
    points = np.asarray(triangles_m, dtype=np.float64).reshape(-1, 3)[:, [AXIS_INDEX[a] for a in axes]]
    points = np.unique(points[np.isfinite(points).all(axis=1)], axis=0)
    if len(points) < 3:
        return np.empty((0, 2))
    try:
        hull = ConvexHull(points)
    except QhullError:  # every point on a line
        return np.empty((0, 2))
    ring = points[hull.vertices]
    return np.vstack([ring, ring[:1]])
