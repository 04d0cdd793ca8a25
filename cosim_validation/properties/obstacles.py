"""Obstacles for the monitor: a triangle mesh (metrics.MeshDistance) as a :class:`DistanceField`."""

from __future__ import annotations

import numpy as np
from numba import njit

from cosim_validation.metrics import MeshDistance


@njit(cache=True)
def _sphere_gap(points: np.ndarray, center: np.ndarray, radius: float) -> np.ndarray:  # pragma: no cover
    """|p - center| - radius for (n, 3) points."""
    out = np.empty(points.shape[0])
    for i in range(points.shape[0]):
        dx, dy, dz = points[i, 0] - center[0], points[i, 1] - center[1], points[i, 2] - center[2]
        out[i] = np.sqrt(dx * dx + dy * dy + dz * dz) - radius
    return out


@njit(cache=True)
def _segment_sphere_gap(
    a: np.ndarray, b: np.ndarray, center: np.ndarray, radius: float
) -> np.ndarray:  # pragma: no cover
    """Distance from ``center`` to each segment a -> b, minus radius."""
    out = np.empty(a.shape[0])
    for i in range(a.shape[0]):
        d0, d1, d2 = b[i, 0] - a[i, 0], b[i, 1] - a[i, 1], b[i, 2] - a[i, 2]
        c0, c1, c2 = center[0] - a[i, 0], center[1] - a[i, 1], center[2] - a[i, 2]
        length2 = d0 * d0 + d1 * d1 + d2 * d2
        s = (c0 * d0 + c1 * d1 + c2 * d2) / length2 if length2 > 0.0 else 0.0
        s = min(max(s, 0.0), 1.0)
        e0, e1, e2 = c0 - s * d0, c1 - s * d1, c2 - s * d2
        out[i] = np.sqrt(e0 * e0 + e1 * e1 + e2 * e2) - radius
    return out


class MeshObstacle:
    """A forbidden region given by a closed triangle mesh in base_link.

    Point distances are the mesh's signed distance (< 0 inside). A segment's distance is its
    minimum distance to the surface when it does not touch the mesh (within ``tolerance_m``); when it
    touches or enters, it is ``min(0, signed distance of either end)``: the depth of an end inside
    the region, or 0 for a segment that crosses the region with both ends outside.

    Args:
        mesh: The exact distance queries of the region.
        tolerance_m: Accuracy of the segment minimum [m].
    """

    def __init__(self, mesh: MeshDistance, vertices_m: np.ndarray, tolerance_m: float = 1e-6) -> None:
        self.mesh = mesh
        self.tolerance_m = tolerance_m
        vertices = np.asarray(vertices_m, dtype=np.float64)
        self.center_m = 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
        self.radius_m = float(np.sqrt(((vertices - self.center_m) ** 2).sum(axis=1).max()))

    @classmethod
    def from_arrays(cls, vertices_m: np.ndarray, faces: np.ndarray) -> MeshObstacle:
        """From (V, 3) vertices [m] in base_link and (F, 3) triangle indices."""
        return cls(MeshDistance(vertices_m, faces), vertices_m)

    def point_distance_m(self, points_m: np.ndarray) -> np.ndarray:
        """(n, 3) points [m] -> (n,) signed distances [m]."""
        return self.mesh.signed(np.ascontiguousarray(points_m, dtype=np.float64))

    def point_lower_bound_m(self, points_m: np.ndarray) -> np.ndarray:
        """Distance to the bounding sphere: a lower bound of the signed distance (the region lies inside it).

        For a point inside the sphere the ray away from its centre leaves the region within
        ``radius - |p - centre|``, so the signed distance is never below ``|p - centre| - radius``.
        """
        points = np.ascontiguousarray(points_m, dtype=np.float64)
        return _sphere_gap(points, self.center_m, self.radius_m)

    def segment_lower_bound_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        """Distance from the bounding sphere's centre to each segment, minus its radius (<= segment distance)."""
        a = np.ascontiguousarray(start_m, dtype=np.float64)
        b = np.ascontiguousarray(end_m, dtype=np.float64)
        return _segment_sphere_gap(a, b, self.center_m, self.radius_m)

    def segment_distance_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        """(n, 3) needle bases and tips [m] -> (n,) distances of the whole segments [m]."""
        result = self.mesh.segment_distance(start_m, end_m, tolerance_m=self.tolerance_m)
        if not result.contact.any():
            return result.distance_m
        ends = np.minimum(self.point_distance_m(start_m), self.point_distance_m(end_m))
        return np.where(result.contact, np.minimum(ends, 0.0), result.distance_m)
