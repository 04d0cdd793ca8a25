"""Obstacles for the monitor: a triangle mesh (metrics.MeshDistance) as a :class:`DistanceField`."""

from __future__ import annotations

import numpy as np
from numba import njit

from cosim_validation.monitor.metrics import MeshDistance, SignedDistanceGrid


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


#: Spacing of the signed-distance grid built by :meth:`MeshObstacle.from_arrays` [m] (5 mm: ~50k exact queries
#: once per obstacle for a heart; its interval is at most ~4.3 mm wide, much less away from the surface).
GRID_SPACING_M = 0.005
#: How far the grid reaches beyond the mesh's bounding box [m]; farther points get a looser (still valid) bound.
GRID_MARGIN_M = 0.03


class MeshObstacle:
    """A forbidden region given by a closed triangle mesh in base_link.

    Point distances are the mesh's signed distance (< 0 inside). A segment's distance is its
    minimum distance to the surface when it does not touch the mesh (within ``tolerance_m``); when it
    touches or enters, it is ``min(0, signed distance of either end)``: the depth of an end inside
    the region, or 0 for a segment that crosses the region with both ends outside.

    Lower bounds (used to skip exact queries, never to decide): the distance to the bounding sphere,
    and, with a signed-distance grid, the grid's guaranteed interval (points) and its Lipschitz bound
    between samples at the grid spacing along the segment (segments).

    Args:
        mesh: The exact distance queries of the region.
        vertices_m: (V, 3) the mesh's vertices [m] (for the bounding sphere).
        tolerance_m: Accuracy of the segment minimum [m].
        grid: A signed-distance grid of the same mesh, for tight lower bounds; None: the sphere only.
    """

    def __init__(
        self,
        mesh: MeshDistance,
        vertices_m: np.ndarray,
        tolerance_m: float = 1e-6,
        grid: SignedDistanceGrid | None = None,
    ) -> None:
        self.mesh = mesh
        self.grid = grid
        self.tolerance_m = tolerance_m
        vertices = np.asarray(vertices_m, dtype=np.float64)
        self.center_m = 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
        self.radius_m = float(np.sqrt(((vertices - self.center_m) ** 2).sum(axis=1).max()))

    @classmethod
    def from_arrays(
        cls, vertices_m: np.ndarray, faces: np.ndarray, grid_spacing_m: float | None = GRID_SPACING_M
    ) -> MeshObstacle:
        """The obstacle of a triangle mesh, with a grid unless its spacing is None.

        Args:
            vertices_m: Vertices in base_link, shape (V, 3), in [m].
            faces: Triangles as indices into ``vertices_m``, shape (F, 3).
            grid_spacing_m: Spacing of the signed-distance grid used for lower bounds, in [m]; None: no grid.
        """
        mesh = MeshDistance(vertices_m, faces)
        grid = (
            None
            if grid_spacing_m is None
            else SignedDistanceGrid(mesh, grid_spacing_m, GRID_MARGIN_M, closest_points=False)
        )  # lower bounds only
        return cls(mesh, vertices_m, grid=grid)

    def point_distance_m(self, points_m: np.ndarray) -> np.ndarray:
        """Signed distance of each point.

        Args:
            points_m: Points in base_link, shape (n, 3), in [m].

        Returns:
            The signed distances, shape (n,), in [m].
        """
        return self.mesh.signed(np.ascontiguousarray(points_m, dtype=np.float64))

    def point_lower_bound_m(self, points_m: np.ndarray) -> np.ndarray:
        """Distance to the bounding sphere: a lower bound of the signed distance (the region lies inside it).

        For a point inside the sphere the ray away from its centre leaves the region within
        ``radius - |p - centre|``, so the signed distance is never below ``|p - centre| - radius``.

        Args:
            points_m: Points in base_link, shape (n, 3), in [m].

        Returns:
            The lower bounds, shape (n,), in [m].
        """
        points = np.ascontiguousarray(points_m, dtype=np.float64)
        gap: np.ndarray = _sphere_gap(points, self.center_m, self.radius_m)
        return gap

    def point_tight_lower_bound_m(self, points_m: np.ndarray) -> np.ndarray:
        """A tighter (and costlier) bound: the grid's guaranteed lower end, or the sphere's without a grid.

        Args:
            points_m: Points in base_link, shape (n, 3), in [m].

        Returns:
            The lower bounds (the larger of the sphere's and the grid's), shape (n,), in [m].
        """
        points = np.ascontiguousarray(points_m, dtype=np.float64)
        sphere = self.point_lower_bound_m(points)
        if self.grid is None or points.shape[0] == 0:
            return sphere
        return np.asarray(np.maximum(sphere, self.grid.bounds(points).lower_m))

    def segment_lower_bound_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        """Distance from the bounding sphere's centre to each segment, minus its radius (<= segment distance).

        Args:
            start_m: Segment starts (needle bases) in base_link, shape (n, 3), in [m].
            end_m: Segment ends (needle tips) in base_link, shape (n, 3), in [m].

        Returns:
            The lower bounds, shape (n,), in [m].
        """
        a = np.ascontiguousarray(start_m, dtype=np.float64)
        b = np.ascontiguousarray(end_m, dtype=np.float64)
        gap: np.ndarray = _segment_sphere_gap(a, b, self.center_m, self.radius_m)
        return gap

    def segment_tight_lower_bound_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        """A tighter (and costlier) bound: the grid's Lipschitz bound along each segment, or the sphere's.

        Args:
            start_m: Segment starts (needle bases) in base_link, shape (n, 3), in [m].
            end_m: Segment ends (needle tips) in base_link, shape (n, 3), in [m].

        Returns:
            The lower bounds (the larger of the sphere's and the grid's), shape (n,), in [m].
        """
        sphere = self.segment_lower_bound_m(start_m, end_m)
        if self.grid is None or sphere.shape[0] == 0:
            return sphere
        a = np.ascontiguousarray(start_m, dtype=np.float64)
        b = np.ascontiguousarray(end_m, dtype=np.float64)
        return np.asarray(np.maximum(sphere, self._segment_grid_bound(a, b)))

    def _segment_grid_bound(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Min over pieces between samples at <= the grid spacing of (l0 + l1 - piece length) / 2 (Lipschitz)."""
        assert self.grid is not None
        length = np.sqrt(((b - a) ** 2).sum(axis=1))
        count = np.maximum(np.ceil(length / self.grid.spacing_m).astype(np.int64) + 1, 2)
        seg = np.repeat(np.arange(a.shape[0]), count)
        starts = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
        t = (np.arange(seg.shape[0]) - starts[seg]) / (count[seg] - 1)
        lower = self.grid.bounds(a[seg] + t[:, None] * (b - a)[seg]).lower_m
        piece = 0.5 * (lower[:-1] + lower[1:] - (length / (count - 1))[seg[:-1]])
        piece = np.append(piece, np.inf)
        piece[starts[1:] - 1] = np.inf  # the last sample of one segment and the first of the next: not a piece
        return np.asarray(np.minimum.reduceat(piece, starts))

    def segment_distance_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        """Signed distance of each whole needle segment.

        Args:
            start_m: Needle bases in base_link, shape (n, 3), in [m].
            end_m: Needle tips in base_link, shape (n, 3), in [m].

        Returns:
            The signed distances of the whole segments, shape (n,), in [m].
        """
        result = self.mesh.segment_distance(start_m, end_m, tolerance_m=self.tolerance_m)
        if not result.contact.any():
            return result.distance_m
        touching = np.flatnonzero(result.contact)
        ends = np.concatenate((np.asarray(start_m)[touching], np.asarray(end_m)[touching]))
        both = self.point_distance_m(ends)  # the touching segments' two ends in one query
        distance = result.distance_m.copy()
        distance[touching] = np.minimum(np.minimum(both[: touching.size], both[touching.size :]), 0.0)
        return distance
