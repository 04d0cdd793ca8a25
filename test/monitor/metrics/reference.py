"""Slow, obviously correct references for the metric kernels (test-only)."""

from __future__ import annotations

import itertools
import math

import numpy as np


def couplings(n: int, m: int) -> list[list[tuple[int, int]]]:
    """Every coupling of seed 000: monotone index paths from (0, 0) to (n-1, m-1), steps (1,0), (0,1), (1,1)."""
    found: list[list[tuple[int, int]]] = []

    def walk(path: list[tuple[int, int]]) -> None:
        i, j = path[-1]
        if (i, j) == (n - 1, m - 1):
            found.append(list(path))
            return
        for di, dj in ((1, 0), (0, 1), (1, 1)):
            if i + di < n and j + dj < m:
                path.append((i + di, j + dj))
                walk(path)
                path.pop()

    walk([(0, 0)])
    return found


def frechet_by_couplings(P: np.ndarray, Q: np.ndarray) -> float:
    """min over all couplings of the max coupled distance (enumerates couplings: tiny inputs only)."""
    dist = np.linalg.norm(P[:, None, :] - Q[None, :, :], axis=2)
    return min(max(dist[i, j] for i, j in path) for path in couplings(len(P), len(Q)))


def frechet_by_matrix(P: np.ndarray, Q: np.ndarray) -> float:
    """The textbook O(n m) recursion on the full distance matrix, in plain Python."""
    dist = np.linalg.norm(P[:, None, :] - Q[None, :, :], axis=2)
    n, m = dist.shape
    C = np.full((n, m), math.inf)
    for i, j in itertools.product(range(n), range(m)):
        prev = (
            0.0
            if i == j == 0
            else min(
                C[i - 1, j] if i else math.inf, C[i, j - 1] if j else math.inf, C[i - 1, j - 1] if i and j else math.inf
            )
        )
        C[i, j] = max(dist[i, j], prev)
    return float(C[-1, -1])


def point_polyline(points: np.ndarray, polyline: np.ndarray) -> np.ndarray:
    """Distance from each point to the polyline, by projecting on every segment with numpy."""
    if len(polyline) == 1:
        return np.linalg.norm(points - polyline[0], axis=1)
    a, b = polyline[:-1], polyline[1:]
    ab = b - a
    ap = points[:, None, :] - a[None, :, :]
    len2 = (ab * ab).sum(axis=1)
    t = np.where(len2 > 0, (ap * ab[None]).sum(axis=2) / np.where(len2 > 0, len2, 1.0), 0.0)
    closest = a[None] + np.clip(t, 0.0, 1.0)[:, :, None] * ab[None]
    return np.linalg.norm(points[:, None, :] - closest, axis=2).min(axis=1)


def point_triangle_distance(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Exact distance from each point to the nearest triangle, all triangles tried (Ericson's regions)."""
    chunk = max(1, 2_000_000 // len(faces))
    return np.concatenate(
        [_point_triangle(points[i : i + chunk], vertices, faces) for i in range(0, len(points), chunk)]
    )


def _point_triangle(points: np.ndarray, vertices: np.ndarray, faces: np.ndarray) -> np.ndarray:
    a, b, c = (vertices[faces[:, k]][None] for k in range(3))
    p = points[:, None, :]
    ab, ac, ap = b - a, c - a, p - a

    def dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return np.einsum("...k,...k->...", u, v)

    d1, d2 = dot(ab, ap), dot(ac, ap)
    bp, cp = p - b, p - c
    d3, d4, d5, d6 = dot(ab, bp), dot(ac, bp), dot(ab, cp), dot(ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    denom = va + vb + vc
    with np.errstate(divide="ignore", invalid="ignore"):
        v = vb / denom
        w = vc / denom
        closest = a + v[..., None] * ab + w[..., None] * ac  # interior
        # edges
        t_ab = np.clip(d1 / (d1 - d3), 0, 1)
        t_ac = np.clip(d2 / (d2 - d6), 0, 1)
        t_bc = np.clip((d4 - d3) / ((d4 - d3) + (d5 - d6)), 0, 1)
    on_ab = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
    on_ac = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
    on_bc = (va <= 0) & ((d4 - d3) >= 0) & ((d5 - d6) >= 0)
    closest = np.where(on_bc[..., None], b + t_bc[..., None] * (c - b), closest)
    closest = np.where(on_ac[..., None], a + t_ac[..., None] * ac, closest)
    closest = np.where(on_ab[..., None], a + t_ab[..., None] * ab, closest)
    # vertices
    closest = np.where(((d6 >= 0) & (d5 <= d6))[..., None], c, closest)
    closest = np.where(((d3 >= 0) & (d4 <= d3))[..., None], b, closest)
    closest = np.where(((d1 <= 0) & (d2 <= 0))[..., None], a, closest)
    return np.sqrt(np.min(np.einsum("...k,...k->...", p - closest, p - closest), axis=1))
