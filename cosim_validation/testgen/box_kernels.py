"""Numba kernels: which cubes of a regular grid a triangle surface passes through (exact SAT test)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _axis_separates(v0: np.ndarray, v1: np.ndarray, v2: np.ndarray, axis: np.ndarray, half: float) -> bool:
    """Whether ``axis`` separates the triangle (relative to the box centre) from a cube of half edge."""
    p0 = v0[0] * axis[0] + v0[1] * axis[1] + v0[2] * axis[2]
    p1 = v1[0] * axis[0] + v1[1] * axis[1] + v1[2] * axis[2]
    p2 = v2[0] * axis[0] + v2[1] * axis[1] + v2[2] * axis[2]
    r = half * (abs(axis[0]) + abs(axis[1]) + abs(axis[2]))
    return bool(min(p0, p1, p2) > r or max(p0, p1, p2) < -r)


@njit(cache=True)
def triangle_overlaps_cube(v0: np.ndarray, v1: np.ndarray, v2: np.ndarray, half: float) -> bool:
    """Separating-axis test of a triangle (vertices relative to the cube centre) against a cube.

    The 13 axes of Akenine-Möller's test: the 3 box normals, the triangle normal, and the 9 cross products of box
    normals with triangle edges. Touching counts as overlapping.

    Args:
        v0: First vertex relative to the cube centre, shape (3,), in [m].
        v1: Second vertex relative to the cube centre, shape (3,), in [m].
        v2: Third vertex relative to the cube centre, shape (3,), in [m].
        half: Half the cube's edge, in [m].
    """
    for k in range(3):
        if min(v0[k], v1[k], v2[k]) > half or max(v0[k], v1[k], v2[k]) < -half:
            return False
    e0, e1, e2 = v1 - v0, v2 - v1, v0 - v2
    normal = np.cross(e0, e1)
    if _axis_separates(v0, v1, v2, normal, half):
        return False
    unit = np.zeros(3)
    for edge in (e0, e1, e2):
        for k in range(3):
            unit[:] = 0.0
            unit[k] = 1.0
            axis = np.cross(unit, edge)
            if _axis_separates(v0, v1, v2, axis, half):
                return False
    return True


@njit(cache=True)
def mark_surface_cubes(
    vertices: np.ndarray, faces: np.ndarray, origin: np.ndarray, edge_m: float, shape: np.ndarray, pad_m: float
) -> np.ndarray:
    """(nx, ny, nz) bool: cubes of the grid (origin, edge) that the surface passes through or touches.

    ``pad_m`` grows every cube by a tiny amount, so rounding can only add cubes, never miss one.

    Args:
        vertices: (V, 3) float64 mesh vertices in base_link [m].
        faces: (F, 3) int64 vertex indices of each triangle.
        origin: (3,) float64 corner of cube (0, 0, 0) in base_link [m].
        edge_m: Cube edge [m].
        shape: (3,) int64 number of cubes along x, y, z.
        pad_m: Growth of every cube [m].
    """
    nx, ny, nz = shape[0], shape[1], shape[2]
    hit = np.zeros((nx, ny, nz), dtype=np.bool_)
    half = 0.5 * edge_m + pad_m
    centre = np.empty(3)
    for t in range(faces.shape[0]):
        a, b, c = vertices[faces[t, 0]], vertices[faces[t, 1]], vertices[faces[t, 2]]
        lo = np.empty(3, dtype=np.int64)
        hi = np.empty(3, dtype=np.int64)
        for k in range(3):
            lo[k] = max(int(np.floor((min(a[k], b[k], c[k]) - pad_m - origin[k]) / edge_m)), 0)
            hi[k] = min(int(np.floor((max(a[k], b[k], c[k]) + pad_m - origin[k]) / edge_m)), shape[k] - 1)
        for i in range(lo[0], hi[0] + 1):
            for j in range(lo[1], hi[1] + 1):
                for k in range(lo[2], hi[2] + 1):
                    if hit[i, j, k]:
                        continue
                    centre[0] = origin[0] + (i + 0.5) * edge_m
                    centre[1] = origin[1] + (j + 0.5) * edge_m
                    centre[2] = origin[2] + (k + 0.5) * edge_m
                    if triangle_overlaps_cube(a - centre, b - centre, c - centre, half):
                        hit[i, j, k] = True
    return hit


@njit(cache=True)
def surface_pairs(
    vertices: np.ndarray, faces: np.ndarray, origin: np.ndarray, edge_m: float, slot: np.ndarray, pad_m: float
) -> tuple[np.ndarray, np.ndarray]:
    """(cell, face) pairs: each face that passes through or touches a cube with ``slot >= 0``.

    Args:
        vertices: (V, 3) float64 mesh vertices in base_link [m].
        faces: (F, 3) int64 vertex indices of each triangle.
        origin: (3,) float64 corner of cube (0, 0, 0) in base_link [m].
        edge_m: Cube edge [m].
        slot: (nx, ny, nz) int64: the cell number of each cube to test, -1 for cubes left out.
        pad_m: Growth of every cube, so rounding can only add pairs.

    Returns:
        (P,) int64 cell numbers and (P,) int64 face numbers.
    """
    cells = np.empty(1024, dtype=np.int64)
    found = np.empty(1024, dtype=np.int64)
    n = 0
    half = 0.5 * edge_m + pad_m
    centre = np.empty(3)
    lo = np.empty(3, dtype=np.int64)
    hi = np.empty(3, dtype=np.int64)
    for t in range(faces.shape[0]):
        a, b, c = vertices[faces[t, 0]], vertices[faces[t, 1]], vertices[faces[t, 2]]
        for k in range(3):
            lo[k] = max(int(np.floor((min(a[k], b[k], c[k]) - pad_m - origin[k]) / edge_m)), 0)
            hi[k] = min(int(np.floor((max(a[k], b[k], c[k]) + pad_m - origin[k]) / edge_m)), slot.shape[k] - 1)
        for i in range(lo[0], hi[0] + 1):
            for j in range(lo[1], hi[1] + 1):
                for k in range(lo[2], hi[2] + 1):
                    if slot[i, j, k] < 0:
                        continue
                    centre[0] = origin[0] + (i + 0.5) * edge_m
                    centre[1] = origin[1] + (j + 0.5) * edge_m
                    centre[2] = origin[2] + (k + 0.5) * edge_m
                    if not triangle_overlaps_cube(a - centre, b - centre, c - centre, half):
                        continue
                    if n == len(cells):
                        cells = np.concatenate((cells, np.empty(n, dtype=np.int64)))
                        found = np.concatenate((found, np.empty(n, dtype=np.int64)))
                    cells[n], found[n] = slot[i, j, k], t
                    n += 1
    return cells[:n], found[:n]


@njit(cache=True, inline="always")
def _separated(p0: float, p1: float, p2: float, r: float) -> bool:
    """Whether projections p0..p2 of a triangle all lie beyond the box's projection radius r."""
    return min(p0, p1, p2) > r or max(p0, p1, p2) < -r


@njit(cache=True)
def _overlaps_scalar(v: np.ndarray, c: np.ndarray, h: float) -> bool:
    """:func:`triangle_overlaps_cube` without allocations: triangle v (3, 3) [m], cube centre c, half edge h."""
    x0, y0, z0 = v[0, 0] - c[0], v[0, 1] - c[1], v[0, 2] - c[2]
    x1, y1, z1 = v[1, 0] - c[0], v[1, 1] - c[1], v[1, 2] - c[2]
    x2, y2, z2 = v[2, 0] - c[0], v[2, 1] - c[1], v[2, 2] - c[2]
    if _separated(x0, x1, x2, h) or _separated(y0, y1, y2, h) or _separated(z0, z1, z2, h):
        return False
    # the 9 axes e_k x edge (edge = (ex, ey, ez)): (0, -ez, ey), (ez, 0, -ex), (-ey, ex, 0)
    for ex, ey, ez in ((x1 - x0, y1 - y0, z1 - z0), (x2 - x1, y2 - y1, z2 - z1), (x0 - x2, y0 - y2, z0 - z2)):
        r = h * (abs(ez) + abs(ey))
        if _separated(-ez * y0 + ey * z0, -ez * y1 + ey * z1, -ez * y2 + ey * z2, r):
            return False
        r = h * (abs(ez) + abs(ex))
        if _separated(ez * x0 - ex * z0, ez * x1 - ex * z1, ez * x2 - ex * z2, r):
            return False
        r = h * (abs(ey) + abs(ex))
        if _separated(-ey * x0 + ex * y0, -ey * x1 + ex * y1, -ey * x2 + ex * y2, r):
            return False
    ax, ay, az = x1 - x0, y1 - y0, z1 - z0
    bx, by, bz = x2 - x1, y2 - y1, z2 - z1
    nx, ny, nz = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    r = h * (abs(nx) + abs(ny) + abs(nz))
    p0 = nx * x0 + ny * y0 + nz * z0
    p1 = nx * x1 + ny * y1 + nz * z1
    p2 = nx * x2 + ny * y2 + nz * z2
    return not _separated(p0, p1, p2, r)


@njit(cache=True)
def child_pairs(
    vertices: np.ndarray,
    faces: np.ndarray,
    pair_parent: np.ndarray,
    pair_face: np.ndarray,
    parent_index: np.ndarray,
    origin: np.ndarray,
    child_edge_m: float,
    pad_m: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(child, face) pairs of the 8 children of split cells: each parent pair tested on its 8 children.

    Args:
        vertices: (V, 3) float64 mesh vertices in base_link [m].
        faces: (F, 3) int64 vertex indices of each triangle.
        pair_parent: (P,) int64 rank of each pair's cell among the split cells, -1 if not split.
        pair_face: (P,) int64 face of each pair.
        parent_index: (S, 3) int64 grid index of each split cell (its children's edge is ``child_edge_m``).
        origin: (3,) float64 minimum corner of the grid (of its cube (0, 0, 0)) in base_link [m].
        child_edge_m: Edge of the children [m].
        pad_m: Growth of every child cube, so rounding can only add pairs [m].

    Returns:
        (Q,) int64 child numbers (8 x rank + octant, octant = 4 i + 2 j + k) and (Q,) int64 faces.
    """
    cells = np.empty(max(1024, 2 * pair_face.shape[0]), dtype=np.int64)
    found = np.empty(cells.shape[0], dtype=np.int64)
    n = 0
    tri = np.empty((3, 3))
    centre = np.empty(3)
    half = 0.5 * child_edge_m + pad_m
    for p in range(pair_face.shape[0]):
        rank = pair_parent[p]
        if rank < 0:
            continue
        for j in range(3):
            tri[j] = vertices[faces[pair_face[p], j]]
        for octant in range(8):
            for k in range(3):
                bit = (octant >> (2 - k)) & 1
                centre[k] = origin[k] + (2 * parent_index[rank, k] + bit + 0.5) * child_edge_m
            if not _overlaps_scalar(tri, centre, half):
                continue
            if n == cells.shape[0]:
                cells = np.concatenate((cells, np.empty(n, dtype=np.int64)))
                found = np.concatenate((found, np.empty(n, dtype=np.int64)))
            cells[n], found[n] = 8 * rank + octant, pair_face[p]
            n += 1
    return cells[:n], found[:n]
