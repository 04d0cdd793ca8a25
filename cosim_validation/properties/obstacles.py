"""Obstacles for the monitor: a triangle mesh (metrics.MeshDistance) as a :class:`DistanceField`."""

from __future__ import annotations

import numpy as np

from cosim_validation.metrics import MeshDistance


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

    def __init__(self, mesh: MeshDistance, tolerance_m: float = 1e-6) -> None:
        self.mesh = mesh
        self.tolerance_m = tolerance_m

    @classmethod
    def from_arrays(cls, vertices_m: np.ndarray, faces: np.ndarray) -> MeshObstacle:
        """From (V, 3) vertices [m] in base_link and (F, 3) triangle indices."""
        return cls(MeshDistance(vertices_m, faces))

    def point_distance_m(self, points_m: np.ndarray) -> np.ndarray:
        """(n, 3) points [m] -> (n,) signed distances [m]."""
        return self.mesh.signed(np.ascontiguousarray(points_m, dtype=np.float64))

    def segment_distance_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        """(n, 3) needle bases and tips [m] -> (n,) distances of the whole segments [m]."""
        result = self.mesh.segment_distance(start_m, end_m, tolerance_m=self.tolerance_m)
        if not result.contact.any():
            return result.distance_m
        ends = np.minimum(self.point_distance_m(start_m), self.point_distance_m(end_m))
        return np.where(result.contact, np.minimum(ends, 0.0), result.distance_m)
