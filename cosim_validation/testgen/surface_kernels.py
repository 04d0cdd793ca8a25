"""Numba kernels: points just inside a closed surface, within a given cube (for thin partial cubes).

A partial cube whose share of the region is a thin sliver along the target's surface rarely yields a
valid target to uniform sampling. The surface itself says where the sliver is: each triangle that
passes through the cube is clipped to the cube (Sutherland-Hodgman), points are drawn uniformly by area
on the clipped pieces and moved a small distance inward along the triangle's normal. The candidates
are then checked like any other.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _clip(poly: np.ndarray, n: int, axis: int, bound: float, keep_below: bool) -> tuple[np.ndarray, int]:
    """Clip a convex polygon (n, 3) against the plane x[axis] = bound."""
    out = np.empty((poly.shape[0] + 2, 3))
    m = 0
    for i in range(n):
        a, b = poly[i], poly[(i + 1) % n]
        da = (bound - a[axis]) if keep_below else (a[axis] - bound)
        db = (bound - b[axis]) if keep_below else (b[axis] - bound)
        if da >= 0.0:
            out[m] = a
            m += 1
        if (da >= 0.0) != (db >= 0.0):
            out[m] = a + (b - a) * (da / (da - db))
            m += 1
    return out, m


@njit(cache=True)
def _clipped_fan(tri: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, int]:
    """The part of a triangle inside the box [lo, hi] as a convex polygon (m, 3)."""
    poly = np.empty((9, 3))
    poly[:3] = tri
    n = 3
    for axis in range(3):
        for keep_below, bound in ((False, lo[axis]), (True, hi[axis])):
            if n == 0:
                return poly, 0
            clipped, n = _clip(poly, n, axis, bound, keep_below)
            poly = np.empty((9, 3))
            poly[: min(n, 9)] = clipped[: min(n, 9)]
            n = min(n, 9)
    return poly, n


@njit(cache=True)
def surface_candidates(
    vertices: np.ndarray, faces: np.ndarray, lo: np.ndarray, hi: np.ndarray, inset_m: float, uniforms: np.ndarray
) -> np.ndarray:
    """Candidates just inside the surface, in the box [lo, hi]; (len(uniforms), 3), NaN rows if none.

    Args:
        vertices: (V, 3) float64 mesh vertices [m], outward-wound faces.
        faces: (F, 3) int64.
        lo: (3,) float64 minimum box corner [m].
        hi: (3,) float64 maximum box corner [m].
        inset_m: How far inward (against the face normal) the points are moved [m].
        uniforms: (n, 3) float64 uniform numbers in [0, 1): piece choice and position in it.
    """
    near = np.zeros(faces.shape[0], dtype=np.bool_)
    for t in range(faces.shape[0]):
        inside_box = True
        for k in range(3):
            a, b, c = vertices[faces[t, 0], k], vertices[faces[t, 1], k], vertices[faces[t, 2], k]
            if min(a, b, c) > hi[k] or max(a, b, c) < lo[k]:
                inside_box = False
        near[t] = inside_box
    candidates = np.flatnonzero(near)
    pieces = np.empty((7 * len(candidates), 3, 3))
    normals = np.empty((7 * len(candidates), 3))
    areas = np.zeros(7 * len(candidates))
    count = 0
    tri = np.empty((3, 3))
    for face in candidates:
        for j in range(3):
            tri[j] = vertices[faces[face, j]]
        normal = np.cross(tri[1] - tri[0], tri[2] - tri[0])
        length = np.sqrt(np.sum(normal * normal))
        if length == 0.0:
            continue
        poly, n = _clipped_fan(tri, lo, hi)
        for j in range(1, n - 1):
            pieces[count, 0], pieces[count, 1], pieces[count, 2] = poly[0], poly[j], poly[j + 1]
            area = np.cross(poly[j] - poly[0], poly[j + 1] - poly[0])
            areas[count] = 0.5 * np.sqrt(np.sum(area * area))
            normals[count] = normal / length
            count += 1
    out = np.full((uniforms.shape[0], 3), np.nan)
    total = np.sum(areas[:count])
    if count == 0 or total == 0.0:
        return out
    cumulative = np.cumsum(areas[:count]) / total
    for i in range(uniforms.shape[0]):
        piece = min(int(np.searchsorted(cumulative, uniforms[i, 0] * (1.0 - 1e-12))), count - 1)
        # the last uniform picks the position: split it into two for the barycentric square root trick
        u, v = uniforms[i, 1], uniforms[i, 2]
        s = np.sqrt(u)
        a, b, c = pieces[piece, 0], pieces[piece, 1], pieces[piece, 2]
        point = (1.0 - s) * a + s * (1.0 - v) * b + s * v * c - inset_m * normals[piece]
        for k in range(3):
            point[k] = min(max(point[k], lo[k]), hi[k])
        out[i] = point
    return out
