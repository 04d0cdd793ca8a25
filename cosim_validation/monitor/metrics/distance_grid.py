"""p2m in nanoseconds: a signed-distance grid per obstacle with a proven error bound, exact where it matters.

The grid holds the signed distance φ (negative inside) of a closed mesh at the nodes of a regular grid of
spacing h covering the mesh's bounding box plus a margin; a query interpolates trilinearly and returns an
interval that provably contains φ. A threshold question (is φ(x) >= t?) is answered from the interval where
it lies entirely on one side of t, and by the exact query (:class:`MeshDistance`) only for the remaining
points, so the answer always equals the exact one.

Error bound (proof). φ is 1-Lipschitz: for x, y on the same side of the surface S,
``|φ(x) - φ(y)|`` = ``|d(x, S) - d(y, S)|`` <= ``|x - y|`` (the distance to a set is 1-Lipschitz); on opposite sides the
segment [x, y] meets S at some z, so ``|φ(x) - φ(y)|`` = d(x, S) + d(y, S) <= ``|x - z|`` + ``|z - y|`` = ``|x - y|``.
Trilinear interpolation in a cell with corners c and local coordinates u_a in [0, 1] (a = x, y, z) is
I(x) = Σ_c w_c φ(c) with weights w_c = Π_a (u_a or 1 - u_a) >= 0, Σ_c w_c = 1. Hence
``|I(x) - φ(x)|`` = ``|Σ_c w_c (φ(c) - φ(x))|`` <= Σ_c w_c ``|c - x|`` <= (Σ_c w_c ``|c - x|²``)^(1/2)
(Jensen, Σ w_c = 1), and because the weights factor per axis,
Σ_c w_c ``|c - x|²`` = h² Σ_a [(1 - u_a) u_a² + u_a (1 - u_a)²] = h² Σ_a u_a (1 - u_a). So

    ``|I(x) - φ(x)|`` <= e(x) = h (Σ_a u_a (1 - u_a))^(1/2) <= (√3 / 2) h,

0 at the nodes and largest at cell centres.

Tighter one-sided bound away from the surface (semiconcavity). Let the whole cell lie at distance >= δ > 0
outside the surface; every point of the cell is within (√3 / 2) h of a corner, so δ = min_c φ(c) - (√3 / 2) h
is such a bound when positive. There φ = d_S = min_{s in S} ``|x - s|``, each ``|x - s|`` has Hessian
(I - n nᵀ) / ``|x - s|`` <= I / δ, so g = φ - ``|x|²`` / (2δ) is a minimum of concave functions, hence concave, and
g(x) >= Σ_c w_c g(c). With Σ_c w_c c = x this reads φ(x) >= I(x) - Σ_c w_c ``|c - x|²`` / (2δ)
= I(x) - h² Σ_a u_a (1 - u_a) / (2δ), much tighter than e(x) once δ >> h. Symmetrically, in a cell entirely
inside (max_c φ(c) + (√3 / 2) h = -δ < 0), -φ = d_S there and φ(x) <= I(x) + h² Σ_a u_a (1 - u_a) / (2δ).
The other side keeps e(x) from interpolation: d_S has concave kinks (on the medial axis) where e(x) is
attained.

Tighter other side from stored closest points. The grid also stores, per node c, the surface point s_c
closest to c (open3d's closest-point query). For any x outside, φ(x) = d_S(x) <= ``|x - s_c|`` because s_c lies
on S; so once the interval says x is outside (lower > 0), φ(x) <= min_c ``|x - s_c|`` over the cell's corners.
Inside (upper < 0) symmetrically φ(x) >= -min_c ``|x - s_c|``. Near a smooth surface at distance φ, with r the
offset of x from the best corner along the surface, ``|x - s_c|`` - φ is about r² / (2φ): second order in h, like
the semiconcave bound on the other side, so a threshold question is left undecided only in a band of width
O(h² / t) around the threshold t instead of O(h).

A point x outside the grid box is first clamped to the box point c, and ``|φ(x) - I(c)|`` <= ``|x - c|`` + e(c) by
the Lipschitz property; outside the mesh's bounding box, φ(x) >= dist(x, bounding box) as well.

Rounding. The node values, the closest points and the exact fallback come from open3d, which computes in
float32 on coordinates relative to the mesh centre; each carries an error ε against the true φ (a closest
point: ε off the surface). The interval is widened by 2ε (nodes or closest points, and the exact value it is
compared with) with ε = 64 · 2⁻²⁴ · R, R the largest coordinate of the
grid box relative to the mesh centre (about 0.4 µm for R = 0.1 m). This ε is a modelled bound of float32
closest-point arithmetic (a few roundings of magnitude R), not a proof; the tests check the whole bound
against the exact query on random, surface and thin-band points.

Precondition: the mesh is closed (watertight, consistently oriented), otherwise φ from ray parity is not
Lipschitz. The constructor checks the necessary condition ``|φ(a) - φ(b)|`` <= h + 2ε on every pair of
neighbouring nodes and rejects the mesh if it fails (the sign flips across a hole).
"""

from __future__ import annotations

import functools
import hashlib
from typing import NamedTuple

import numpy as np
from numba import njit, prange
from numpy.typing import ArrayLike, NDArray

from cosim_validation.common.disk_cache import load_arrays, source_digest, store_arrays
from cosim_validation.monitor.metrics.arrays import as_distance, as_points
from cosim_validation.monitor.metrics.errors import MetricInputError
from cosim_validation.monitor.metrics.mesh_distance import MeshDistance

#: Relative float32 rounding budget of one open3d distance (see the module docstring).
ROUNDING_ULPS = 64.0
#: Nodes evaluated per open3d call while building.
BUILD_CHUNK = 1 << 20
#: grids up to this size are kept in the disk cache (the shipped heart's: 0.3 MB; a 1 mm grid of it: 0.2 GB)
MAX_CACHED_BYTES = 64 << 20
#: nodes of a cached grid compared with exact values before it is used (two diagonals of the grid box)
SPOT_NODES = 32
#: Query points above which the interpolation runs in parallel (about 5-10 ms of serial work: on a loaded
#: machine a parallel region can wait milliseconds for a descheduled worker thread).
PARALLEL_POINTS = 1 << 17


class DistanceBounds(NamedTuple):
    """Guaranteed interval of the signed distance of each query point: lower_m <= φ(x) <= upper_m."""

    lower_m: NDArray[np.float64]
    upper_m: NDArray[np.float64]


@njit(cache=True, inline="always")
def _min2(a: float, b: float) -> float:
    return a if a < b else b


@njit(cache=True, inline="always")
def _max2(a: float, b: float) -> float:
    return a if a > b else b


@njit(cache=True, inline="always")
def _axis(
    p: float, lo: float, hi: float, h: float, nodes: int, mesh_lo: float, mesh_hi: float
) -> tuple[int, float, float, float]:
    """One axis of a query: cell index, local coordinate in [0, 1], distance outside the box and the mesh box.

    Written with selects, not branches or min/max calls: random queries made the branches unpredictable.
    """
    c = _min2(_max2(p, lo), hi)
    g = (c - lo) / h
    i = int(g)
    i = i if i < nodes - 2 else nodes - 2
    u = _min2(_max2(g - i, 0.0), 1.0)
    return i, u, p - c, _max2(_max2(mesh_lo - p, p - mesh_hi), 0.0)


@njit(cache=True, inline="always")
def _nearest_surface(
    closest: np.ndarray, origin: np.ndarray, i: int, j: int, k: int, x: float, y: float, z: float
) -> float:
    """Min over the cell's 8 corners c of ``|x - s_c|`` (s_c: c's closest surface point, float32 local) [m]."""
    lx, ly, lz = x - origin[0], y - origin[1], z - origin[2]
    best = np.inf
    for di in range(2):
        for dj in range(2):
            for dk in range(2):
                dx = lx - closest[i + di, j + dj, k + dk, 0]
                dy = ly - closest[i + di, j + dj, k + dk, 1]
                dz = lz - closest[i + di, j + dj, k + dk, 2]
                best = _min2(best, dx * dx + dy * dy + dz * dz)
    return float(np.sqrt(best))


@njit(cache=True, inline="always")
def _bounds_one(
    values: np.ndarray,
    closest: np.ndarray,
    origin: np.ndarray,
    lo: np.ndarray,
    h: float,
    box_hi: np.ndarray,
    mesh_lo: np.ndarray,
    mesh_hi: np.ndarray,
    eps2: float,
    x: float,
    y: float,
    z: float,
) -> tuple[float, float]:
    """(lower, upper) of φ at (x, y, z); see the module docstring for the bound."""
    i, ux, ox, gx = _axis(x, lo[0], box_hi[0], h, values.shape[0], mesh_lo[0], mesh_hi[0])
    j, uy, oy, gy = _axis(y, lo[1], box_hi[1], h, values.shape[1], mesh_lo[1], mesh_hi[1])
    k, uz, oz, gz = _axis(z, lo[2], box_hi[2], h, values.shape[2], mesh_lo[2], mesh_hi[2])
    v000, v100 = values[i, j, k], values[i + 1, j, k]
    v010, v110 = values[i, j + 1, k], values[i + 1, j + 1, k]
    v001, v101 = values[i, j, k + 1], values[i + 1, j, k + 1]
    v011, v111 = values[i, j + 1, k + 1], values[i + 1, j + 1, k + 1]
    c00 = v000 * (1.0 - ux) + v100 * ux
    c10 = v010 * (1.0 - ux) + v110 * ux
    c01 = v001 * (1.0 - ux) + v101 * ux
    c11 = v011 * (1.0 - ux) + v111 * ux
    c0 = c00 * (1.0 - uy) + c10 * uy
    c1 = c01 * (1.0 - uy) + c11 * uy
    value = c0 * (1.0 - uz) + c1 * uz
    spread = ux * (1.0 - ux) + uy * (1.0 - uy) + uz * (1.0 - uz)  # Σ w_c |c - x|² / h²
    interp = h * np.sqrt(spread)
    lower = value - interp
    upper = value + interp
    # semiconcavity: in a cell where |φ| >= δ > 0, |φ| - |x|²/(2δ) is concave (see the module docstring)
    vmin = _min2(_min2(_min2(v000, v100), _min2(v010, v110)), _min2(_min2(v001, v101), _min2(v011, v111)))
    vmax = _max2(_max2(_max2(v000, v100), _max2(v010, v110)), _max2(_max2(v001, v101), _max2(v011, v111)))
    reach = 0.8660254037844387 * h + eps2  # (√3 / 2) h: every point of the cell is that close to a corner
    curvature = 0.5 * h * h * spread
    delta_out = vmin - reach  # > 0: the whole cell is outside, at least this far from the surface
    delta_in = -vmax - reach  # > 0: the whole cell is inside
    semi_lower = value - curvature / (delta_out if delta_out > 0.0 else 1e-300)
    semi_upper = value + curvature / (delta_in if delta_in > 0.0 else 1e-300)
    lower = semi_lower if (delta_out > 0.0 and semi_lower > lower) else lower
    upper = semi_upper if (delta_in > 0.0 and semi_upper < upper) else upper
    outside = np.sqrt(ox * ox + oy * oy + oz * oz)
    lower -= eps2 + outside
    upper += eps2 + outside
    gap2 = gx * gx + gy * gy + gz * gz
    box_lower = np.sqrt(gap2) - eps2  # outside the mesh's bounding box, hence outside the model
    lower = box_lower if (gap2 > 0.0 and box_lower > lower) else lower
    # the other side from the corners' closest surface points, once the side of the surface is known
    if closest.shape[0] > 1 and (lower > 0.0 or upper < 0.0):
        reach_surface = _nearest_surface(closest, origin, i, j, k, x, y, z) + eps2
        upper = _min2(upper, reach_surface) if lower > 0.0 else upper
        lower = _max2(lower, -reach_surface) if upper < 0.0 else lower
    return lower, upper


@njit(cache=True, parallel=True)
def _bounds_parallel(
    values: np.ndarray,
    closest: np.ndarray,
    origin: np.ndarray,
    lo: np.ndarray,
    h: float,
    box_hi: np.ndarray,
    mesh_lo: np.ndarray,
    mesh_hi: np.ndarray,
    eps2: float,
    pts: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> None:
    for n in prange(pts.shape[0]):
        lower[n], upper[n] = _bounds_one(
            values, closest, origin, lo, h, box_hi, mesh_lo, mesh_hi, eps2, pts[n, 0], pts[n, 1], pts[n, 2]
        )


@njit(cache=True)
def _bounds_serial(
    values: np.ndarray,
    closest: np.ndarray,
    origin: np.ndarray,
    lo: np.ndarray,
    h: float,
    box_hi: np.ndarray,
    mesh_lo: np.ndarray,
    mesh_hi: np.ndarray,
    eps2: float,
    pts: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> None:
    for n in range(pts.shape[0]):
        lower[n], upper[n] = _bounds_one(
            values, closest, origin, lo, h, box_hi, mesh_lo, mesh_hi, eps2, pts[n, 0], pts[n, 1], pts[n, 2]
        )


@functools.cache
def _code_digest() -> str:
    """A digest of the modules that compute a grid's values, the sign included (a grid of older code is not read)."""
    package = "cosim_validation.monitor.metrics"
    return source_digest(
        f"{package}.{name}" for name in ("distance_grid", "mesh_distance", "inside_test", "parity_kernels")
    )


def _fits(arrays: dict[str, np.ndarray], shape: tuple[int, ...], closest_points: bool) -> bool:
    """Whether a cache entry holds a grid of ``shape`` (with closest points if asked): else it is built again."""
    values, closest = arrays.get("values"), arrays.get("closest_local")
    if values is None or closest is None or values.shape != shape or values.dtype != np.float64:
        return False
    return closest.dtype == np.float32 and closest.shape == ((*shape, 3) if closest_points else (1, 1, 1, 3))


class SignedDistanceGrid:
    """Signed distance of one closed mesh on a regular grid, with guaranteed intervals and exact decisions.

    Args:
        mesh: The exact reference (also used for the fallback).
        spacing_m: Grid spacing h [m], > 0; the interpolation error is at most (√3 / 2) h + 2ε.
        margin_m: How far beyond the mesh's bounding box the grid reaches [m], >= 0. Points beyond are still
            answered correctly (with a wider interval).
        closest_points: Also store each node's closest surface point (12 more bytes per node, and about half as
            much build time again): tightens the interval's far side to second order (see the module
            docstring), which matters for threshold questions near the surface; without it the grid gives the
            same guaranteed intervals, only wider.
        max_nodes: Refuse grids with more nodes than this (memory: 8 bytes per node, 20 with closest points).

    Raises:
        MetricInputError: Bad spacing or margin, too many nodes, or a mesh that is not closed.
    """

    def __init__(
        self,
        mesh: MeshDistance,
        spacing_m: float,
        margin_m: float,
        *,
        closest_points: bool = True,
        max_nodes: int = 20_000_000,
    ) -> None:
        h = as_distance("spacing_m", spacing_m, allow_zero=False)
        margin = as_distance("margin_m", margin_m)
        self.mesh = mesh
        lo = mesh.bounds_m[0] - margin
        shape = np.maximum(np.ceil((mesh.bounds_m[1] + margin - lo) / h).astype(np.int64) + 1, 2)
        if int(np.prod(shape)) > max_nodes:
            raise MetricInputError(
                f"spacing_m: {spacing_m!r} m gives a grid of {tuple(int(s) for s in shape)!r} = {int(np.prod(shape))} "
                f"nodes, more than max_nodes={max_nodes}; use a larger spacing or margin"
            )
        self.spacing_m = h
        self.lower_corner_m = lo
        self.upper_corner_m = lo + (shape - 1) * h
        radius = float(np.abs(np.stack([lo, self.upper_corner_m]) - mesh.origin_m).max())
        #: 2ε: rounding of a node value plus that of the exact value it stands for [m].
        self.rounding_m = 2.0 * ROUNDING_ULPS * 2.0**-24 * radius
        key = self._cache_key(shape, closest_points)
        cached = load_arrays(key)
        if (
            cached is not None
            and _fits(cached, tuple(int(s) for s in shape), closest_points)
            and self._spot_check(cached["values"])
        ):
            self.values, self.closest_local = cached["values"], cached["closest_local"]
            self._check_lipschitz()
        else:
            self.values, self.closest_local = self._sample(shape, closest_points)
            self._check_lipschitz()
            if self.values.nbytes + self.closest_local.nbytes <= MAX_CACHED_BYTES:
                store_arrays(key, {"values": self.values, "closest_local": self.closest_local})

    def _spot_check(self, values: NDArray[np.float64]) -> bool:
        """Whether a cached grid's values equal the exact ones at nodes along both diagonals of its box.

        A damaged or foreign entry of the right shape (whose bounds would be wrong) is then sampled again: at most
        2 x SPOT_NODES nodes, each within the rounding 2ε of the exact signed distance.
        """
        shape = np.asarray(values.shape)
        steps = np.linspace(0.0, 1.0, SPOT_NODES)[:, None] * (shape - 1)
        diagonals = np.vstack([steps, steps * [1, 1, -1] + [0, 0, shape[2] - 1]])
        index = np.unique(np.rint(diagonals).astype(np.int64), axis=0)
        nodes = self.lower_corner_m + self.spacing_m * index
        exact = self.mesh.signed(np.ascontiguousarray(nodes, dtype=np.float64))
        stored = values[index[:, 0], index[:, 1], index[:, 2]]
        return bool(np.all(np.abs(stored - exact) <= self.rounding_m))

    def _cache_key(self, shape: NDArray[np.int64], closest_points: bool) -> str:
        """The disk-cache entry of this grid: the mesh, the grid's geometry and the code that samples it.

        Every process that checks a case against this mesh (each command, each monitor node, each campaign worker)
        builds the same grid; sampling it costs about 0.1 s for the shipped heart, loading and spot-checking it 2 ms.
        """
        geometry = np.concatenate([self.lower_corner_m, [self.spacing_m], shape.astype(np.float64)])
        digest = hashlib.sha256(f"{self.mesh.digest}|{_code_digest()}|{closest_points}".encode() + geometry.tobytes())
        return f"distance-grid-{digest.hexdigest()[:24]}"

    @property
    def max_error_m(self) -> float:
        """Largest half-width of the interval inside the grid box: (√3 / 2) h + 2ε [m]."""
        return float(np.sqrt(3.0) / 2.0 * self.spacing_m + self.rounding_m)

    def _sample(
        self, shape: NDArray[np.int64], closest_points: bool
    ) -> tuple[NDArray[np.float64], NDArray[np.float32]]:
        """Signed distance at every node and, if asked, each node's closest surface point.

        The closest points are float32, relative to the mesh origin; a (1, 1, 1, 3) placeholder without.
        """
        axes = [self.lower_corner_m[a] + self.spacing_m * np.arange(shape[a]) for a in range(3)]
        nodes = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
        values = np.empty(nodes.shape[0])
        closest = np.zeros((nodes.shape[0] if closest_points else 1, 3), dtype=np.float32)
        for start in range(0, nodes.shape[0], BUILD_CHUNK):
            chunk = nodes[start : start + BUILD_CHUNK]
            values[start : start + BUILD_CHUNK] = self.mesh.signed(chunk)
            if closest_points:
                closest[start : start + BUILD_CHUNK] = self.mesh.closest_local(chunk)
        grid_shape = tuple(int(s) for s in shape)
        closest_shape = (*grid_shape, 3) if closest_points else (1, 1, 1, 3)
        return values.reshape(grid_shape), np.ascontiguousarray(closest.reshape(closest_shape))

    def _check_lipschitz(self) -> None:
        limit = self.spacing_m + self.rounding_m
        for axis in range(3):
            jumps = np.abs(np.diff(self.values, axis=axis))
            if jumps.max() > limit:
                bad = np.unravel_index(int(np.argmax(jumps)), jumps.shape)
                where = self.lower_corner_m + self.spacing_m * np.asarray(bad)
                raise MetricInputError(
                    f"mesh: the signed distance jumps by {float(jumps.max())!r} m between neighbouring grid nodes "
                    f"{int((jumps > limit).sum())} time(s) (at most spacing_m = {self.spacing_m!r} m for a closed "
                    f"surface), first near {tuple(float(c) for c in where)!r}: the mesh is not closed or not "
                    f"consistently oriented, so its inside is not defined"
                )

    def bounds(self, points_m: ArrayLike) -> DistanceBounds:
        """Guaranteed interval of the signed distance of points (see the module docstring).

        Args:
            points_m: Query points, shape (n, 3), in [m], in the frame of the mesh.

        Returns:
            The lower and upper bounds, each of shape (n,), in [m].
        """
        pts = as_points("points_m", points_m, dim=3, min_points=0)
        lower = np.empty(pts.shape[0])
        upper = np.empty(pts.shape[0])
        kernel = _bounds_parallel if pts.shape[0] >= PARALLEL_POINTS else _bounds_serial
        kernel(
            self.values,
            self.closest_local,
            self.mesh.origin_m,
            self.lower_corner_m,
            self.spacing_m,
            self.upper_corner_m,
            self.mesh.bounds_m[0],
            self.mesh.bounds_m[1],
            self.rounding_m,
            pts,
            lower,
            upper,
        )
        return DistanceBounds(lower, upper)

    def undecided(self, points_m: ArrayLike, threshold_m: float) -> NDArray[np.bool_]:
        """(n,) bool: where the grid alone cannot tell whether φ >= threshold_m (the exact query decides).

        Args:
            points_m: Query points, shape (n, 3), in [m], in the frame of the mesh.
            threshold_m: The signed distance compared with, in [m].
        """
        lower, upper = self.bounds(points_m)
        return (lower < threshold_m) & (upper >= threshold_m)

    def at_least(self, points_m: ArrayLike, threshold_m: float) -> NDArray[np.bool_]:
        """(n,) bool: whether the signed distance of each point is >= threshold_m, exactly as the mesh says.

        For p2m questions use threshold_m >= 0: p2m(x) >= t if and only if φ(x) >= t for t > 0.

        Args:
            points_m: Query points, shape (n, 3), in [m], in the frame of the mesh.
            threshold_m: The signed distance compared with, a finite number in [m].
        """
        pts = as_points("points_m", points_m, dim=3, min_points=0)
        threshold = float(threshold_m)
        if not np.isfinite(threshold):
            raise MetricInputError(f"threshold_m: expected a finite distance [m], got {threshold_m!r}")
        lower, upper = self.bounds(pts)
        answer = lower >= threshold
        open_ = (lower < threshold) & (upper >= threshold)
        if open_.any():
            answer[open_] = self.mesh.signed(pts[open_]) >= threshold
        return answer

    def segment_at_least(
        self, a_m: ArrayLike, b_m: ArrayLike, threshold_m: float, *, tolerance_m: float = 1e-7
    ) -> NDArray[np.bool_]:
        """(k,) bool: whether every point of each needle segment a -> b is at least threshold_m from the model.

        Each segment is sampled at spacing <= h; between two samples at distance δ with lower bounds l0, l1,
        the Lipschitz property gives φ >= (l0 + l1 - δ) / 2. The grid answers True when that bound clears
        the threshold on every piece and False when some sample's upper bound is below it; the remaining
        segments go to :meth:`MeshDistance.segment_distance`, whose minimum is within tolerance_m above the
        exact one, and are answered True only if ``distance - tolerance_m >= threshold_m`` (conservative:
        a segment whose exact minimum lies within tolerance_m above the threshold may be reported False).

        Args:
            a_m: (k, 3) or (3,) segment starts [m].
            b_m: (k, 3) or (3,) segment ends [m].
            threshold_m: Required clearance [m], > 0.
            tolerance_m: Tolerance of the exact fallback [m], > 0.
        """
        a = as_points("a_m", np.atleast_2d(np.asarray(a_m)), dim=3, min_points=0)
        b = as_points("b_m", np.atleast_2d(np.asarray(b_m)), dim=3, min_points=0)
        if a.shape != b.shape:
            raise MetricInputError(f"a_m and b_m must have the same shape, got {a.shape!r} and {b.shape!r}")
        threshold = as_distance("threshold_m", threshold_m, allow_zero=False)
        tol = as_distance("tolerance_m", tolerance_m, allow_zero=False)
        length = np.linalg.norm(b - a, axis=1)
        count = np.maximum(np.ceil(length / self.spacing_m).astype(np.int64) + 1, 2)
        seg = np.repeat(np.arange(a.shape[0]), count)
        starts = np.concatenate([[0], np.cumsum(count)[:-1]]).astype(np.int64)
        t = (np.arange(seg.shape[0]) - starts[seg]) / (count[seg] - 1)
        lower, upper = self.bounds(a[seg] + t[:, None] * (b - a)[seg])
        if seg.size == 0:
            return np.zeros(0, dtype=np.bool_)
        piece = 0.5 * (lower[:-1] + lower[1:] - (length / (count - 1))[seg[:-1]])
        piece[starts[1:] - 1] = np.inf  # not a piece: the last sample of one segment and the first of the next
        answer = np.minimum.reduceat(piece, starts) >= threshold
        open_ = ~answer & (np.minimum.reduceat(upper, starts) >= threshold)
        if open_.any():
            exact = self.mesh.segment_distance(a[open_], b[open_], tolerance_m=tol)
            answer[open_] = ~exact.contact & (exact.distance_m - tol >= threshold)
        return answer
