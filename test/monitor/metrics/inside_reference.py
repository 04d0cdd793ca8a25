"""Exact references for the inside test, written independently of the code under test.

- ``parity_along_x``: brute-force ray parity with rays along +x over every triangle (another axis,
  no binning, plain barycentric test), exact for points off the surface whose ray misses edges.
- ``winding_number``: the generalised winding number (sum of signed solid angles, Van Oosterom and
  Strackee), 1 inside and 0 outside a closed outward-wound mesh, with no degenerate cases at all.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def parity_along_x(vertices: np.ndarray, faces: np.ndarray, points: np.ndarray) -> np.ndarray:
    out = np.zeros(points.shape[0], dtype=np.bool_)
    for p in prange(points.shape[0]):
        px, py, pz = points[p, 0], points[p, 1], points[p, 2]
        inside = False
        for t in range(faces.shape[0]):
            a, b, c = vertices[faces[t, 0]], vertices[faces[t, 1]], vertices[faces[t, 2]]
            if py < min(a[1], b[1], c[1]) or py > max(a[1], b[1], c[1]):
                continue
            if pz < min(a[2], b[2], c[2]) or pz > max(a[2], b[2], c[2]):
                continue
            # barycentric coordinates of (py, pz) in the (y, z) projection
            det = (b[1] - a[1]) * (c[2] - a[2]) - (c[1] - a[1]) * (b[2] - a[2])
            if det == 0.0:
                continue
            u = ((py - a[1]) * (c[2] - a[2]) - (c[1] - a[1]) * (pz - a[2])) / det
            v = ((b[1] - a[1]) * (pz - a[2]) - (py - a[1]) * (b[2] - a[2])) / det
            if u < 0.0 or v < 0.0 or u + v > 1.0:
                continue
            x = a[0] + u * (b[0] - a[0]) + v * (c[0] - a[0])
            if x > px:
                inside = not inside
        out[p] = inside
    return out


@njit(cache=True, parallel=True)
def winding_number(vertices: np.ndarray, faces: np.ndarray, points: np.ndarray) -> np.ndarray:
    out = np.zeros(points.shape[0])
    for p in prange(points.shape[0]):
        total = 0.0
        for t in range(faces.shape[0]):
            i, j, k = faces[t, 0], faces[t, 1], faces[t, 2]
            ax, ay, az = vertices[i, 0] - points[p, 0], vertices[i, 1] - points[p, 1], vertices[i, 2] - points[p, 2]
            bx, by, bz = vertices[j, 0] - points[p, 0], vertices[j, 1] - points[p, 1], vertices[j, 2] - points[p, 2]
            cx, cy, cz = vertices[k, 0] - points[p, 0], vertices[k, 1] - points[p, 1], vertices[k, 2] - points[p, 2]
            la = np.sqrt(ax * ax + ay * ay + az * az)
            lb = np.sqrt(bx * bx + by * by + bz * bz)
            lc = np.sqrt(cx * cx + cy * cy + cz * cz)
            det = ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx)
            ab, bc, ca = ax * bx + ay * by + az * bz, bx * cx + by * cy + bz * cz, cx * ax + cy * ay + cz * az
            total += 2.0 * np.arctan2(det, la * lb * lc + ab * lc + bc * la + ca * lb)
        out[p] = total / (4.0 * np.pi)
    return out


def band_points(vertices: np.ndarray, faces: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, 3) points within 1 nm to 0.1 mm of the surface, on both sides (log-uniform offsets)."""
    tri = vertices[faces]
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    area = np.linalg.norm(normal, axis=1)
    pick = rng.choice(len(faces), size=n, p=area / area.sum())
    u, v = rng.random(n), rng.random(n)
    s = np.sqrt(u)
    on = (1 - s)[:, None] * tri[pick, 0] + (s * (1 - v))[:, None] * tri[pick, 1] + (s * v)[:, None] * tri[pick, 2]
    offset = 10.0 ** rng.uniform(-9, -4, n) * rng.choice([-1.0, 1.0], n)
    return np.asarray(on + offset[:, None] * (normal[pick] / area[pick, None]))
