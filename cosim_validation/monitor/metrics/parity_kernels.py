"""Numba kernels of the exact ray-parity inside test ([Actuators 2025], section 4.1), rays cast along +z.

A point is inside a closed mesh when a ray from it crosses the surface an odd number of times. Rays go
up (+z), so a crossing is a triangle whose projection on the xy plane holds the point's (x, y) and
whose plane lies above the point there. Rays through an edge or a vertex are resolved by symbolic
perturbation: the point is moved by an infinitesimal (1, e) in xy, and every edge function is computed
from the edge's endpoints in a canonical order (lower vertex index first), so the two triangles sharing
an edge always see it with exactly opposite signs. Each crossing of a closed surface is then counted
exactly once, and the parity is exact for every point off the surface (up to float64 rounding of the
crossing height, i.e. for points more than ~1e-15 of the model's size from it).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True)
def _edge(vx: np.ndarray, vy: np.ndarray, i: int, j: int, px: float, py: float) -> tuple[float, float]:
    """Edge function of (px, py) w.r.t. the directed edge i -> j: its value and its side (never 0).

    The side of a point exactly on the edge's line is that of the point moved by (1, e) (symbolic
    perturbation); the value (0 there) is kept for interpolating the crossing height.
    """
    lo, hi, flip = (i, j, 1.0) if i < j else (j, i, -1.0)
    dx = vx[hi] - vx[lo]
    dy = vy[hi] - vy[lo]
    w = dx * (py - vy[lo]) - dy * (px - vx[lo])
    side = w
    if w == 0.0:
        # derivative of w along the perturbation (1, e): -dy, then dx
        side = -dy if dy != 0.0 else dx
    return w * flip, side * flip


@njit(cache=True)
def crosses_above(
    vx: np.ndarray, vy: np.ndarray, vz: np.ndarray, a: int, b: int, c: int, px: float, py: float, pz: float
) -> bool:
    """Whether the upward ray from (px, py, pz) crosses triangle (a, b, c).

    Args:
        vx: (V,) float64 x coordinates of the mesh vertices [m].
        vy: (V,) float64 y coordinates of the mesh vertices [m].
        vz: (V,) float64 z coordinates of the mesh vertices [m].
        a: Index of the triangle's first vertex.
        b: Index of the triangle's second vertex.
        c: Index of the triangle's third vertex.
        px: x of the ray's origin [m].
        py: y of the ray's origin [m].
        pz: z of the ray's origin [m]; only a crossing strictly above it counts.
    """
    wa, sa = _edge(vx, vy, b, c, px, py)
    wb, sb = _edge(vx, vy, c, a, px, py)
    wc, sc = _edge(vx, vy, a, b, px, py)
    if not ((sa > 0.0 and sb > 0.0 and sc > 0.0) or (sa < 0.0 and sb < 0.0 and sc < 0.0)):
        return False
    total = wa + wb + wc
    if total == 0.0:  # projection of zero area: a vertical face, no crossing under the perturbation
        return False
    z = (wa * vz[a] + wb * vz[b] + wc * vz[c]) / total
    return bool(z > pz)


@njit(cache=True)
def build_bins(
    vx: np.ndarray, vy: np.ndarray, faces: np.ndarray, lo_x: float, lo_y: float, cell_m: float, nx: int, ny: int
) -> tuple[np.ndarray, np.ndarray]:
    """Bucket triangles by the xy cells their projected bounding boxes touch (CSR: start, triangle ids).

    Args:
        vx: (V,) float64 x coordinates of the mesh vertices [m].
        vy: (V,) float64 y coordinates of the mesh vertices [m].
        faces: (F, 3) int64 vertex indices of the triangles.
        lo_x: x of the grid's lower corner [m] (the mesh's smallest x).
        lo_y: y of the grid's lower corner [m] (the mesh's smallest y).
        cell_m: Edge length of the square xy cells [m], > 0.
        nx: Number of cells along x; triangles beyond the last cell are clipped to it.
        ny: Number of cells along y; cell (i, j) is number ``i * ny + j``.

    Returns:
        ``start`` (nx * ny + 1,) int64 offsets and ``ids`` int64 triangle indices: the triangles of cell k
        are ``ids[start[k]:start[k + 1]]``.
    """
    counts = np.zeros(nx * ny + 1, dtype=np.int64)
    n = faces.shape[0]
    for pass_ in range(2):
        if pass_ == 1:
            for k in range(nx * ny):
                counts[k + 1] += counts[k]
            fill = counts[:-1].copy()
            ids = np.empty(counts[nx * ny], dtype=np.int64)
        for t in range(n):
            a, b, c = faces[t, 0], faces[t, 1], faces[t, 2]
            i0 = int((min(vx[a], vx[b], vx[c]) - lo_x) / cell_m)
            i1 = int((max(vx[a], vx[b], vx[c]) - lo_x) / cell_m)
            j0 = int((min(vy[a], vy[b], vy[c]) - lo_y) / cell_m)
            j1 = int((max(vy[a], vy[b], vy[c]) - lo_y) / cell_m)
            for i in range(max(i0, 0), min(i1, nx - 1) + 1):
                for j in range(max(j0, 0), min(j1, ny - 1) + 1):
                    if pass_ == 0:
                        counts[i * ny + j + 1] += 1
                    else:
                        ids[fill[i * ny + j]] = t
                        fill[i * ny + j] += 1
    return counts, ids


@njit(cache=True, inline="always")
def _parity(
    vx: np.ndarray,
    vy: np.ndarray,
    vz: np.ndarray,
    faces: np.ndarray,
    start: np.ndarray,
    ids: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    cell_m: float,
    nx: int,
    ny: int,
    px: float,
    py: float,
    pz: float,
) -> bool:
    """Ray parity of one point against the binned mesh: True inside."""
    if not (lo[0] <= px <= hi[0] and lo[1] <= py <= hi[1] and lo[2] <= pz <= hi[2]):
        return False
    i = min(int((px - lo[0]) / cell_m), nx - 1)
    j = min(int((py - lo[1]) / cell_m), ny - 1)
    cell = i * ny + j
    inside = False
    for k in range(start[cell], start[cell + 1]):
        t = ids[k]
        if crosses_above(vx, vy, vz, faces[t, 0], faces[t, 1], faces[t, 2], px, py, pz):
            inside = not inside
    return inside


@njit(cache=True)
def contains_points(
    vx: np.ndarray,
    vy: np.ndarray,
    vz: np.ndarray,
    faces: np.ndarray,
    start: np.ndarray,
    ids: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    cell_m: float,
    nx: int,
    ny: int,
    points: np.ndarray,
) -> np.ndarray:
    """Ray parity of each point (N, 3) against the binned mesh; (N,) bool, True inside (one thread).

    Args:
        vx: (V,) float64 x coordinates of the mesh vertices [m].
        vy: (V,) float64 y coordinates of the mesh vertices [m].
        vz: (V,) float64 z coordinates of the mesh vertices [m].
        faces: (F, 3) int64 vertex indices of the triangles.
        start: (nx * ny + 1,) int64 CSR offsets of :func:`build_bins`: the triangles of cell ``i * ny + j`` are
            ``ids[start[cell]:start[cell + 1]]``.
        ids: (start[-1],) int64 triangle indices of :func:`build_bins`, grouped by cell.
        lo: (3,) float64 lower corner of the mesh's bounding box [m]; also the origin of the cell grid in xy.
        hi: (3,) float64 upper corner of the mesh's bounding box [m]; points outside the box are outside.
        cell_m: Edge length of the square xy cells [m], > 0.
        nx: Number of cells along x.
        ny: Number of cells along y.
        points: (N, 3) float64 query points [m], in the frame of the vertices.

    Returns:
        (N,) bool, True inside.
    """
    out = np.zeros(points.shape[0], dtype=np.bool_)
    for p in range(points.shape[0]):
        out[p] = _parity(
            vx, vy, vz, faces, start, ids, lo, hi, cell_m, nx, ny, points[p, 0], points[p, 1], points[p, 2]
        )
    return out


@njit(cache=True, parallel=True)
def contains_points_parallel(
    vx: np.ndarray,
    vy: np.ndarray,
    vz: np.ndarray,
    faces: np.ndarray,
    start: np.ndarray,
    ids: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    cell_m: float,
    nx: int,
    ny: int,
    points: np.ndarray,
) -> np.ndarray:
    """:func:`contains_points` over every core (for large batches: a grid build, millions of targets).

    Args:
        vx: (V,) float64 x coordinates of the mesh vertices [m].
        vy: (V,) float64 y coordinates of the mesh vertices [m].
        vz: (V,) float64 z coordinates of the mesh vertices [m].
        faces: (F, 3) int64 vertex indices of the triangles.
        start: (nx * ny + 1,) int64 CSR offsets of :func:`build_bins`: the triangles of cell ``i * ny + j`` are
            ``ids[start[cell]:start[cell + 1]]``.
        ids: (start[-1],) int64 triangle indices of :func:`build_bins`, grouped by cell.
        lo: (3,) float64 lower corner of the mesh's bounding box [m]; also the origin of the cell grid in xy.
        hi: (3,) float64 upper corner of the mesh's bounding box [m]; points outside the box are outside.
        cell_m: Edge length of the square xy cells [m], > 0.
        nx: Number of cells along x.
        ny: Number of cells along y.
        points: (N, 3) float64 query points [m], in the frame of the vertices.

    Returns:
        (N,) bool, True inside.
    """
    out = np.zeros(points.shape[0], dtype=np.bool_)
    for p in prange(points.shape[0]):
        out[p] = _parity(
            vx, vy, vz, faces, start, ids, lo, hi, cell_m, nx, ny, points[p, 0], points[p, 1], points[p, 2]
        )
    return out
