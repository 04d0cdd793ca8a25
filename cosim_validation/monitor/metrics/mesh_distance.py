"""p2m: exact distances from points and needle segments to a triangle mesh (open3d ``RaycastingScene``).

Semantics ([Actuators 2025]): ``p2m`` is the distance to the model surface, 0 inside the model; the signed
distance is negative inside. Inside/outside is decided by the project's exact ray-parity test
(:class:`~cosim_validation.monitor.metrics.inside_test.InsideTest`: float64, rays along +z, symbolic perturbation
for rays through edges and vertices, so every crossing of a closed surface counts exactly once). open3d's
own inside test (``compute_signed_distance`` / ``compute_occupancy``) casts one float32 ray per point and
counts a crossing twice or not at all where the ray grazes an edge: on the built-in left lung it called
points up to 39 mm outside "inside". The parity test assumes a closed (watertight) surface, as
every loaded AnatomyModel is; on an open mesh the sign, and with it p2m and contact, can be wrong near
the holes (the unsigned distance stays exact).

Precision: open3d (Embree) works in float32 (distances, closest points, ray hits). The mesh is stored
relative to the centre of its bounding box and queries are shifted in float64 before rounding, so the
rounding error is about 1e-7 of the model's extent (about 0.01 µm for a 0.15 m heart), not of the
distance to the world origin.

The needle is a segment from ``a`` to ``b``. Contact means the closed segment meets the surface or lies
inside the model: a ray from a towards b hits a triangle within the segment, or a or b is inside. Otherwise the
minimum distance along the segment is computed exactly in float64 against the triangles themselves
(:mod:`~cosim_validation.monitor.metrics.segment_kernels`: the least of the ends' distances to each triangle and
the segment's distances to each edge, with bounding spheres ruling out the triangles that cannot be nearer),
so it is below any ``tolerance_m`` of the exact minimum and not limited by open3d's float32.
"""

from __future__ import annotations

import hashlib
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosim_validation.common.open3d_import import load_open3d
from cosim_validation.monitor.metrics.arrays import as_distance, as_point_or_points, as_points
from cosim_validation.monitor.metrics.errors import MetricInputError
from cosim_validation.monitor.metrics.inside_test import InsideTest
from cosim_validation.monitor.metrics.segment_kernels import TriangleGroups, segments_to_mesh, triangle_groups

#: Bisection rounds locating a crossing the float32 ray missed (2**-60 of the segment length).
MAX_ROUNDS = 60


class SegmentDistance(NamedTuple):
    """Result of a needle-segment query, one entry per segment.

    Attributes:
        distance_m: (k,) float64 minimum distance from the segment to the surface [m]; 0.0 on contact.
        contact: (k,) bool, the segment meets the surface or lies inside the model.
        t_closest: (k,) float64 in [0, 1], where along a -> b the distance is attained (the first hit on
            contact by crossing; 0.0 when a is inside).
    """

    distance_m: NDArray[np.float64]
    contact: NDArray[np.bool_]
    t_closest: NDArray[np.float64]


def _as_faces(faces: ArrayLike, n_vertices: int) -> NDArray[np.uint32]:
    """(F, 3) integer faces indexing [0, n_vertices), as uint32."""
    arr = np.asarray(faces)
    if arr.dtype.kind not in "iu":
        raise MetricInputError(f"faces: expected an integer array, got dtype {arr.dtype.name!r}")
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] < 1:
        raise MetricInputError(f"faces: expected shape (F, 3) with F >= 1, got {arr.shape!r}")
    if arr.min() < 0 or arr.max() >= n_vertices:
        raise MetricInputError(
            f"faces: indices must lie in [0, {n_vertices}) (the number of vertices), got range "
            f"[{int(arr.min())!r}, {int(arr.max())!r}]"
        )
    return np.ascontiguousarray(arr, dtype=np.uint32)


class MeshDistance:
    """Exact distance queries against one triangle mesh.

    Args:
        vertices_m: (V, 3) vertex positions [m], in the frame of the query points (e.g. base_link).
        faces: (F, 3) integer vertex indices of the triangles, F >= 1.

    Raises:
        MetricInputError: Bad shapes, dtypes, NaN/inf vertices, face indices out of range.
        MissingDependencyError: open3d is not installed.
    """

    def __init__(self, vertices_m: ArrayLike, faces: ArrayLike) -> None:
        vertices = as_points("vertices_m", vertices_m, dim=3, min_points=3)
        faces_u32 = _as_faces(faces, vertices.shape[0])
        o3d = load_open3d("exact distance to a mesh (MeshDistance)")
        self._o3c: Any = o3d.core
        self.origin_m: NDArray[np.float64] = 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
        self.bounds_m: NDArray[np.float64] = np.stack([vertices.min(axis=0), vertices.max(axis=0)])
        self.n_faces = int(faces_u32.shape[0])
        self.inside_test = InsideTest(vertices, faces_u32.astype(np.int64))
        #: what decides every answer: the mesh's arrays and the version of open3d that computes on them
        self.digest = hashlib.sha256(
            vertices.tobytes() + faces_u32.tobytes() + str(getattr(o3d, "__version__", "")).encode()
        ).hexdigest()
        self._scene: Any = o3d.t.geometry.RaycastingScene()
        local = np.ascontiguousarray(vertices - self.origin_m, dtype=np.float32)
        self._scene.add_triangles(self._o3c.Tensor(local), self._o3c.Tensor(faces_u32))
        self._triangles = (vertices, faces_u32)
        self._groups: TriangleGroups | None = None  # built at the first segment query

    def _local(self, points: NDArray[np.float64]) -> Any:
        """(n, 3) float64 points in the model frame as an open3d float32 tensor relative to the origin."""
        return self._o3c.Tensor(np.ascontiguousarray(points - self.origin_m, dtype=np.float32))

    def _query(self, name: str, points: ArrayLike) -> tuple[NDArray[np.float64], bool]:
        return as_point_or_points(name, points, dim=3)

    @staticmethod
    def _out(values: NDArray[np.float64], single: bool) -> float | NDArray[np.float64]:
        return float(values[0]) if single else values

    def unsigned(self, points_m: NDArray[np.float64]) -> NDArray[np.float64]:
        """Unsigned distance for checked (n, 3) float64 points (no input checks; internal fast path).

        Args:
            points_m: Checked points, shape (n, 3), C-contiguous float64, in [m], in the frame of the vertices.

        Returns:
            The distances in [m], shape (n,).
        """
        values: NDArray[np.float64] = self._scene.compute_distance(self._local(points_m)).numpy().astype(np.float64)
        return values

    def signed(self, points_m: NDArray[np.float64]) -> NDArray[np.float64]:
        """Signed distance for checked (n, 3) float64 points (no input checks; internal fast path).

        Args:
            points_m: Checked points, shape (n, 3), C-contiguous float64, in [m], in the frame of the vertices.

        Returns:
            The distances in [m], shape (n,), negative inside the model.
        """
        distance = self.unsigned(points_m)
        return np.where(self.inside_test.contains(points_m), -distance, distance)

    def closest_local(self, points_m: NDArray[np.float64]) -> NDArray[np.float32]:
        """Closest surface points of checked (n, 3) float64 points, as open3d gives them.

        Float32 relative to :attr:`origin_m` (no input checks; internal fast path).

        Args:
            points_m: Checked points, shape (n, 3), float64, in [m], in the frame of the vertices.

        Returns:
            The closest surface points, shape (n, 3), float32, in [m], relative to :attr:`origin_m`.
        """
        points: NDArray[np.float32] = self._scene.compute_closest_points(self._local(points_m))["points"].numpy()
        return points

    def closest_points(self, points_m: ArrayLike) -> NDArray[np.float64]:
        """Closest point on the surface of one point or of points.

        Args:
            points_m: One point, shape (3,), or points, shape (n, 3), in [m], in the frame of the vertices.

        Returns:
            The closest surface points in the frame of the vertices, in [m], the same shape as ``points_m``.
        """
        pts, single = self._query("points_m", points_m)
        closest = self.closest_local(pts).astype(np.float64) + self.origin_m
        return closest[0] if single else closest

    def distance(self, points_m: ArrayLike) -> float | NDArray[np.float64]:
        """Unsigned distance to the surface of one point or of points.

        Args:
            points_m: One point, shape (3,), or points, shape (n, 3), in [m], in the frame of the vertices.

        Returns:
            The distance in [m]: a float for one point, shape (n,) for points.
        """
        pts, single = self._query("points_m", points_m)
        return self._out(self.unsigned(pts), single)

    def signed_distance(self, points_m: ArrayLike) -> float | NDArray[np.float64]:
        """Signed distance: negative inside the model, positive outside.

        Args:
            points_m: One point, shape (3,), or points, shape (n, 3), in [m], in the frame of the vertices.

        Returns:
            The signed distance in [m]: a float for one point, shape (n,) for points.
        """
        pts, single = self._query("points_m", points_m)
        return self._out(self.signed(pts), single)

    def p2m(self, points_m: ArrayLike) -> float | NDArray[np.float64]:
        """Seed 000's p2m: distance to the surface, 0.0 inside the model.

        Args:
            points_m: One point, shape (3,), or points, shape (n, 3), in [m], in the frame of the vertices.

        Returns:
            p2m in [m]: a float for one point, shape (n,) for points.
        """
        pts, single = self._query("points_m", points_m)
        return self._out(np.maximum(self.signed(pts), 0.0), single)

    def contains(self, points_m: ArrayLike) -> bool | NDArray[np.bool_]:
        """Whether points are inside the model (exact ray parity, :class:`InsideTest`).

        Args:
            points_m: One point, shape (3,), or points, shape (n, 3), in [m], in the frame of the vertices.

        Returns:
            A bool for one point, a bool array of shape (n,) for points.
        """
        pts, single = self._query("points_m", points_m)
        inside = self.inside_test.contains(pts)
        return bool(inside[0]) if single else inside

    def segment_distance(self, a_m: ArrayLike, b_m: ArrayLike, *, tolerance_m: float = 1e-6) -> SegmentDistance:
        """Minimum distance from needle segments a -> b to the surface, and contact.

        Args:
            a_m: (3,) or (k, 3) segment starts [m] (e.g. the needle mount).
            b_m: (3,) or (k, 3) segment ends [m] (e.g. the needle tip), same shape as ``a_m``.
            tolerance_m: The returned distance exceeds the exact minimum by at most this much [m], > 0.

        Returns:
            :class:`SegmentDistance` with (k,) arrays (k = 1 for a single segment).
        """
        a, _ = self._query("a_m", a_m)
        b, _ = self._query("b_m", b_m)
        if a.shape != b.shape:
            raise MetricInputError(f"a_m and b_m must have the same shape, got {a.shape!r} and {b.shape!r}")
        as_distance("tolerance_m", tolerance_m, allow_zero=False)  # the minimum is exact: any tolerance holds
        contact, t_hit = self._segment_contact(a, b)
        dist, t_best = self._segment_min(a[~contact], b[~contact])
        distance = np.zeros(a.shape[0])
        distance[~contact] = dist
        t_closest = t_hit.copy()
        t_closest[~contact] = t_best
        return SegmentDistance(distance, contact, t_closest)

    def _segment_contact(
        self, a: NDArray[np.float64], b: NDArray[np.float64]
    ) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
        """Contact flags and the parameter of the first hit (0 when a is inside, nan without contact).

        A segment whose end b is inside (exact parity) crosses the surface even where open3d's float32 ray
        slips through an edge; its crossing is then found by bisecting the inside test.
        """
        rays = np.concatenate([a - self.origin_m, b - a], axis=1).astype(np.float32)
        t_hit = self._scene.cast_rays(self._o3c.Tensor(rays))["t_hit"].numpy().astype(np.float64)
        crossing = t_hit <= 1.0
        inside = self.inside_test.contains(a)
        missed = ~crossing & ~inside & self.inside_test.contains(b)
        if missed.any():
            t_hit[missed] = self._bisect_crossing(a[missed], b[missed])
            crossing |= missed
        t = np.where(inside, 0.0, np.where(crossing, t_hit, np.nan))
        return crossing | inside, t

    def _bisect_crossing(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        """(k,) parameter of a crossing of segments with a outside and b inside, to 2**-MAX_ROUNDS."""
        lo, hi = np.zeros(a.shape[0]), np.ones(a.shape[0])
        for _ in range(MAX_ROUNDS):
            mid = 0.5 * (lo + hi)
            inside = self.inside_test.contains(a + mid[:, None] * (b - a))
            hi = np.where(inside, mid, hi)
            lo = np.where(inside, lo, mid)
        return hi

    def _segment_min(
        self, a: NDArray[np.float64], b: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Exact minimum distance of segments that do not touch the mesh, and where along a -> b it is attained."""
        if a.shape[0] == 0:
            return np.zeros(0), np.zeros(0)
        if self._groups is None:
            self._groups = triangle_groups(*self._triangles)
        distance, where = segments_to_mesh(np.ascontiguousarray(a), np.ascontiguousarray(b), self._groups)
        return distance, where
