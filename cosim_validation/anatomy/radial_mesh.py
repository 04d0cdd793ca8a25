"""Closed surfaces of star-shaped bodies: an implicit body meshed along rays from a centre.

Every ray from the centre crosses the meshed surface exactly once, so the mesh is a radial graph over
a subdivided icosahedron: watertight, consistently wound (outward) and free of self-intersections by
construction, whatever concavities the implicit body has.
"""

from __future__ import annotations

import numpy as np

from cosim_validation.anatomy.implicit_shapes import Implicit
from cosim_validation.common.exceptions import InputError

_BISECTION_STEPS = 40


def first_crossing_radii(
    implicit: Implicit, center_m: np.ndarray, directions: np.ndarray, max_radius_m: float, step_m: float
) -> np.ndarray:
    """Distance along each ray from ``center_m`` to the first point where the body ends.

    Args:
        implicit: The body, negative inside.
        center_m: (3,) float64 ray origin, inside the body, in the body's frame [m].
        directions: (N, 3) float64 unit vectors in the same frame.
        max_radius_m: Rays are searched up to this length [m]; the body must end before it.
        step_m: Marching step [m]; features thinner than it along a ray may be stepped over.

    Returns:
        (N,) float64 radii [m], accurate to about 1e-12 m of the implicit's zero crossing.

    Raises:
        InputError: The centre is outside the body, or a ray does not leave the body.
    """
    if implicit(center_m[None, :])[0] >= 0.0:
        raise InputError(f"radial mesh: centre {center_m.tolist()!r} is not inside the body")
    radii = np.arange(1, int(np.ceil(max_radius_m / step_m)) + 1) * step_m
    samples = center_m[None, None, :] + directions[:, None, :] * radii[None, :, None]
    outside = implicit(samples.reshape(-1, 3)).reshape(len(directions), len(radii)) >= 0.0
    if not outside.any(axis=1).all():
        raise InputError(f"radial mesh: the body does not end within {max_radius_m!r} m of the centre")
    first = outside.argmax(axis=1)
    lo = np.where(first > 0, radii[first - 1], 0.0)
    hi = radii[first]
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        out = implicit(center_m[None, :] + directions * mid[:, None]) >= 0.0
        hi = np.where(out, mid, hi)
        lo = np.where(out, lo, mid)
    return np.asarray(0.5 * (lo + hi))


def radial_mesh(
    implicit: Implicit,
    center_m: np.ndarray,
    stretch_m: np.ndarray,
    max_radius_m: float,
    *,
    subdivisions: int = 5,
    step_m: float = 3e-3,
) -> tuple[np.ndarray, np.ndarray]:
    """Mesh the star-shaped part of ``implicit`` seen from ``center_m``.

    Args:
        implicit: The body, negative inside.
        center_m: (3,) float64 centre, inside the body, in the body's frame [m].
        stretch_m: (3,) float64 rough half-extents of the body [m]; ray directions are spread
            like an ellipsoid of these axes so that elongated bodies get evenly sized triangles.
        max_radius_m: Longest ray searched [m].
        subdivisions: Icosphere subdivisions (5: 10242 vertices, 20480 faces).
        step_m: Marching step along the rays [m].

    Returns:
        vertices (V, 3) float64 [m] and faces (F, 3) int64, outward winding.
    """
    import trimesh  # here: an import of a second (scipy, networkx), which most processes never need

    sphere = trimesh.creation.icosphere(subdivisions=subdivisions, radius=1.0)
    directions = np.asarray(sphere.vertices, dtype=np.float64) * np.asarray(stretch_m, dtype=np.float64)
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    center = np.asarray(center_m, dtype=np.float64)
    radii = first_crossing_radii(implicit, center, directions, max_radius_m, step_m)
    vertices = center + directions * radii[:, None]
    return vertices, np.asarray(sphere.faces, dtype=np.int64)
