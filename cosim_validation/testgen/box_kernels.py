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

    The 13 axes of Akenine-Möller's test: the 3 box normals, the triangle normal, and the 9 cross
    products of box normals with triangle edges. Touching counts as overlapping.
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
