"""numba kernels: the minimum distance from line segments to a triangle mesh, in float64, with a two-level cull.

For a segment that does not meet a triangle, their distance is attained with a segment end or a triangle edge
involved: it is the least of the two ends' distances to the triangle and the segment's distances to the three
edges. The point-triangle distance classifies the point against the triangle's Voronoi regions (vertex, edge or
face) and the segment-segment distance clamps the closest parameters of the two lines (both as in Ericson,
*Real-Time Collision Detection*, 2005, sections 5.1.5 and 5.1.9).

Triangles are grouped by splitting them at the median of their centroids along the longest extent until a group
holds at most :data:`GROUP_SIZE` (compact groups), and runs of :data:`GROUPS_PER_CLUSTER` consecutive groups (neighbours
in that split) form clusters. A cluster's bounding sphere, then a group's, then each triangle's gives a lower bound
(segment to centre minus radius) so that only triangles that may beat the best distance so far are measured exactly;
the cluster nearest the segment, and in each cluster the nearest group, are measured first. On the shipped heart
(5,120 triangles, 512 groups) a needle segment near it meets about 60 triangles exactly.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

#: Triangles per group of the cull.
GROUP_SIZE = 16
#: Consecutive groups per cluster, the cull's first level.
GROUPS_PER_CLUSTER = 16


class TriangleGroups(NamedTuple):
    """A mesh's triangles in cull order with their bounding spheres (see :func:`triangle_groups`).

    Attributes:
        v0: (F, 3) first vertex of each triangle [m].
        v1: (F, 3) second vertex.
        v2: (F, 3) third vertex.
        centre: (F, 3) centre of each triangle's bounding sphere [m].
        radius: (F,) its radius [m].
        group_centre: (G, 3) centre of each group's bounding sphere [m].
        group_radius: (G,) its radius [m].
        group_start: (G + 1,) first triangle of each group, and F.
        cluster_centre: (C, 3) centre of each cluster's bounding sphere [m] (a cluster: consecutive groups).
        cluster_radius: (C,) its radius (it holds its groups' spheres).
        cluster_start: (C + 1,) first group of each cluster, and G.
    """

    v0: np.ndarray
    v1: np.ndarray
    v2: np.ndarray
    centre: np.ndarray
    radius: np.ndarray
    group_centre: np.ndarray
    group_radius: np.ndarray
    group_start: np.ndarray
    cluster_centre: np.ndarray
    cluster_radius: np.ndarray
    cluster_start: np.ndarray


def triangle_groups(vertices_m: np.ndarray, faces: np.ndarray) -> TriangleGroups:
    """The triangles of a mesh grouped for :func:`segments_to_mesh`.

    Args:
        vertices_m: (V, 3) float64 vertex positions [m].
        faces: (F, 3) integer vertex indices, F >= 1.
    """
    tri = np.asarray(vertices_m, dtype=np.float64)[np.asarray(faces, dtype=np.int64)]  # (F, 3, 3)
    count = len(tri)
    centroid = tri.mean(axis=1)
    order = np.arange(count)
    run = np.zeros(count, dtype=np.int64)  # the run of each position of ``order``; runs are contiguous
    while True:  # every run larger than GROUP_SIZE split at the median along its longest extent, level by level
        starts = np.flatnonzero(np.diff(run, prepend=-1))
        sizes = np.diff(np.append(starts, count))
        if sizes.max() <= GROUP_SIZE:
            break
        points = centroid[order]
        axis = np.argmax(np.maximum.reduceat(points, starts) - np.minimum.reduceat(points, starts), axis=1)
        order = order[np.lexsort((points[np.arange(count), axis[run]], run))]
        position = np.arange(count) - starts[run]
        upper = (sizes[run] > GROUP_SIZE) & (position >= sizes[run] // 2)
        halves = 2 * run + upper
        run = np.cumsum(np.diff(halves, prepend=halves[0]) != 0)
    tri = tri[order]
    starts = np.append(starts, count).astype(np.int64)
    centre = 0.5 * (tri.min(axis=1) + tri.max(axis=1))
    radius = np.sqrt(((tri - centre[:, None, :]) ** 2).sum(axis=2)).max(axis=1)
    group_centre = 0.5 * (
        np.minimum.reduceat(tri.min(axis=1), starts[:-1]) + np.maximum.reduceat(tri.max(axis=1), starts[:-1])
    )
    reach = np.sqrt(((tri - np.repeat(group_centre, np.diff(starts), axis=0)[:, None, :]) ** 2).sum(axis=2)).max(axis=1)
    group_radius = np.maximum.reduceat(reach, starts[:-1])
    n_groups = len(group_radius)
    clusters = np.append(np.arange(0, n_groups, GROUPS_PER_CLUSTER), n_groups).astype(np.int64)
    low = np.minimum.reduceat(group_centre - group_radius[:, None], clusters[:-1])
    high = np.maximum.reduceat(group_centre + group_radius[:, None], clusters[:-1])
    cluster_centre = np.ascontiguousarray(0.5 * (low + high))
    spread = np.repeat(cluster_centre, np.diff(clusters), axis=0)
    holds = np.sqrt(((group_centre - spread) ** 2).sum(axis=1)) + group_radius  # each group's sphere inside
    return TriangleGroups(
        np.ascontiguousarray(tri[:, 0]),
        np.ascontiguousarray(tri[:, 1]),
        np.ascontiguousarray(tri[:, 2]),
        centre,
        radius,
        group_centre,
        group_radius,
        starts,
        cluster_centre,
        np.maximum.reduceat(holds, clusters[:-1]),
        clusters,
    )


@njit(cache=True, inline="always")
def _point_segment_sq(px: float, py: float, pz: float, a: np.ndarray, d: np.ndarray, dd: float) -> float:
    """Squared distance of point p from the segment a + t d, t in [0, 1] (dd = d . d)."""
    t = 0.0
    if dd > 0.0:
        t = ((px - a[0]) * d[0] + (py - a[1]) * d[1] + (pz - a[2]) * d[2]) / dd
        t = min(max(t, 0.0), 1.0)
    x, y, z = a[0] + t * d[0] - px, a[1] + t * d[1] - py, a[2] + t * d[2] - pz
    return float(x * x + y * y + z * z)


@njit(cache=True, inline="always")
def _point_triangle_sq(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> float:
    """Squared distance of point p from triangle abc (Voronoi regions of the vertices, edges and face)."""
    abx, aby, abz = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    acx, acy, acz = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    apx, apy, apz = p[0] - a[0], p[1] - a[1], p[2] - a[2]
    d1 = abx * apx + aby * apy + abz * apz
    d2 = acx * apx + acy * apy + acz * apz
    bpx, bpy, bpz = p[0] - b[0], p[1] - b[1], p[2] - b[2]
    d3 = abx * bpx + aby * bpy + abz * bpz
    d4 = acx * bpx + acy * bpy + acz * bpz
    cpx, cpy, cpz = p[0] - c[0], p[1] - c[1], p[2] - c[2]
    d5 = abx * cpx + aby * cpy + abz * cpz
    d6 = acx * cpx + acy * cpy + acz * cpz
    vc = d1 * d4 - d3 * d2
    vb = d5 * d2 - d1 * d6
    va = d3 * d6 - d5 * d4
    if d1 <= 0.0 and d2 <= 0.0:  # vertex a
        qx, qy, qz = a[0], a[1], a[2]
    elif d3 >= 0.0 and d4 <= d3:  # vertex b
        qx, qy, qz = b[0], b[1], b[2]
    elif vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0 and d1 - d3 > 0.0:  # edge ab (a != b)
        v = d1 / (d1 - d3)
        qx, qy, qz = a[0] + v * abx, a[1] + v * aby, a[2] + v * abz
    elif d6 >= 0.0 and d5 <= d6:  # vertex c
        qx, qy, qz = c[0], c[1], c[2]
    elif vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0 and d2 - d6 > 0.0:  # edge ac (a != c)
        w = d2 / (d2 - d6)
        qx, qy, qz = a[0] + w * acx, a[1] + w * acy, a[2] + w * acz
    elif va <= 0.0 and (d4 - d3) >= 0.0 and (d5 - d6) >= 0.0 and (d4 - d3) + (d5 - d6) > 0.0:  # edge bc
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        qx, qy, qz = b[0] + w * (c[0] - b[0]), b[1] + w * (c[1] - b[1]), b[2] + w * (c[2] - b[2])
    else:  # the face
        denom = va + vb + vc
        if not denom > 0.0:  # a degenerate (zero-area) triangle: its edges decide
            bc = c - b
            return min(
                _point_segment_sq(p[0], p[1], p[2], a, b - a, abx * abx + aby * aby + abz * abz),
                _point_segment_sq(p[0], p[1], p[2], a, c - a, acx * acx + acy * acy + acz * acz),
                _point_segment_sq(p[0], p[1], p[2], b, bc, bc[0] * bc[0] + bc[1] * bc[1] + bc[2] * bc[2]),
            )
        v = vb / denom
        w = vc / denom
        qx, qy, qz = a[0] + abx * v + acx * w, a[1] + aby * v + acy * w, a[2] + abz * v + acz * w
    x, y, z = p[0] - qx, p[1] - qy, p[2] - qz
    return float(x * x + y * y + z * z)


@njit(cache=True, inline="always")
def _segment_segment(
    ax: float, ay: float, az: float, ex: float, ey: float, ez: float, p: np.ndarray, q: np.ndarray
) -> tuple[float, float]:
    """Squared distance between segments a + s e and p -> q, and the parameter s where it is attained.

    Scalars in, so that no array is made per triangle edge.
    """
    fx, fy, fz = q[0] - p[0], q[1] - p[1], q[2] - p[2]
    rx, ry, rz = ax - p[0], ay - p[1], az - p[2]
    aa = ex * ex + ey * ey + ez * ez
    ee = fx * fx + fy * fy + fz * fz
    f = fx * rx + fy * ry + fz * rz
    s = 0.0
    t = 0.0
    if aa <= 0.0 and ee <= 0.0:
        pass
    elif aa <= 0.0:
        t = min(max(f / ee, 0.0), 1.0)
    else:
        c = ex * rx + ey * ry + ez * rz
        if ee <= 0.0:
            s = min(max(-c / aa, 0.0), 1.0)
        else:
            b = ex * fx + ey * fy + ez * fz
            denom = aa * ee - b * b
            if denom > 0.0:
                s = min(max((b * f - c * ee) / denom, 0.0), 1.0)
            t = (b * s + f) / ee
            if t < 0.0:
                t = 0.0
                s = min(max(-c / aa, 0.0), 1.0)
            elif t > 1.0:
                t = 1.0
                s = min(max((b - c) / aa, 0.0), 1.0)
    x = ax + s * ex - (p[0] + t * fx)
    y = ay + s * ey - (p[1] + t * fy)
    z = az + s * ez - (p[2] + t * fz)
    return x * x + y * y + z * z, s


@njit(cache=True, inline="always")
def _group_minimum(
    a: np.ndarray,
    b: np.ndarray,
    d: np.ndarray,
    dd: float,
    first: int,
    stop: int,
    groups: TriangleGroups,
    best: float,
    best_s: float,
) -> tuple[float, float]:
    """The least of ``best`` (squared) and the distances to triangles [first, stop), with its parameter."""
    v0, v1, v2, centre, radius = groups.v0, groups.v1, groups.v2, groups.centre, groups.radius
    for j in range(first, stop):
        c = centre[j]
        lower = math.sqrt(_point_segment_sq(c[0], c[1], c[2], a, d, dd)) - radius[j]
        if lower > 0.0 and lower * lower >= best:
            continue
        p, q, r = v0[j], v1[j], v2[j]
        sq = _point_triangle_sq(a, p, q, r)
        if sq < best:
            best, best_s = sq, 0.0
        sq = _point_triangle_sq(b, p, q, r)
        if sq < best:
            best, best_s = sq, 1.0
        for e in range(3):
            start, end = (p, q) if e == 0 else ((q, r) if e == 1 else (r, p))
            sq, s = _segment_segment(a[0], a[1], a[2], d[0], d[1], d[2], start, end)
            if sq < best:
                best, best_s = sq, s
    return best, best_s


@njit(cache=True)
def segments_to_mesh(a: np.ndarray, b: np.ndarray, groups: TriangleGroups) -> tuple[np.ndarray, np.ndarray]:
    """Minimum distance from each segment a -> b to the triangles, and where along a -> b it is attained.

    Exact for segments that meet no triangle (up to float64 rounding); for one that does, the least distance of
    its ends and of its edge crossings, which the caller must not take for the distance (it is not 0).

    Args:
        a: (k, 3) segment starts [m].
        b: (k, 3) segment ends [m].
        groups: The mesh's triangles in cull order (:func:`triangle_groups`).

    Returns:
        (k,) distances [m] and (k,) parameters in [0, 1] along a -> b.
    """
    k = a.shape[0]
    cluster_centre, cluster_radius, cluster_start = groups.cluster_centre, groups.cluster_radius, groups.cluster_start
    group_centre, group_radius, group_start = groups.group_centre, groups.group_radius, groups.group_start
    n_clusters = cluster_radius.shape[0]
    distance = np.empty(k)
    where = np.empty(k)
    cluster_bound = np.empty(n_clusters)
    group_bound = np.empty(int(np.max(np.diff(cluster_start))))
    d = np.empty(3)
    for i in range(k):
        ai, bi = a[i], b[i]
        d[0], d[1], d[2] = bi[0] - ai[0], bi[1] - ai[1], bi[2] - ai[2]
        dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        for h in range(n_clusters):
            cc = cluster_centre[h]
            cluster_bound[h] = math.sqrt(_point_segment_sq(cc[0], cc[1], cc[2], ai, d, dd)) - cluster_radius[h]
        best = np.inf  # squared
        best_s = 0.0
        nearest_cluster = int(np.argmin(cluster_bound))
        for cluster_step in range(n_clusters + 1):  # the nearest cluster first (a good best at once), then the rest
            h = nearest_cluster if cluster_step == 0 else cluster_step - 1
            if cluster_step > 0 and h == nearest_cluster:
                continue
            lower = cluster_bound[h]
            if lower > 0.0 and lower * lower >= best:
                continue
            g0, g1 = cluster_start[h], cluster_start[h + 1]
            for g in range(g0, g1):
                gc = group_centre[g]
                group_bound[g - g0] = math.sqrt(_point_segment_sq(gc[0], gc[1], gc[2], ai, d, dd)) - group_radius[g]
            nearest = g0 + int(np.argmin(group_bound[: g1 - g0]))
            for step in range(g1 - g0 + 1):  # likewise the cluster's nearest group first
                g = nearest if step == 0 else g0 + step - 1
                if step > 0 and g == nearest:
                    continue
                lower = group_bound[g - g0]
                if lower > 0.0 and lower * lower >= best:
                    continue
                best, best_s = _group_minimum(ai, bi, d, dd, group_start[g], group_start[g + 1], groups, best, best_s)
        distance[i] = math.sqrt(best)
        where[i] = best_s
    return distance, where
