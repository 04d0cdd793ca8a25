"""What both the mesh checks and the repair need to know about a mesh as a solid: edges, shells, unions.

``mesh_check`` (what is wrong) and ``mesh_repair`` (what can be fixed) both build on this module and never
on each other. Shells are the connected bodies of a mesh; the generalised winding number (sum of the
signed solid angles of the faces, Van Oosterom and Strackee 1983) tells, at a point inside the region a
shell bounds, how the whole mesh counts that point: 1 inside a solid, 0 in a cavity or outside. Any other
value is a defect that ray parity cannot see: -1 in a pocket wound inward, 2 where solids overlap.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

# Below this enclosed volume a mesh or shell is taken as flat [m^3] (1 mm^3).
MIN_VOLUME_M3 = 1e-9
# Points per block of the winding-number sum (memory: points x faces x 3 doubles per block).
_POINT_BLOCK = 4


class Shell(NamedTuple):
    """One connected body of a closed mesh and how the whole mesh counts its inside.

    Attributes:
        volume_m3: Signed enclosed volume [m^3]: negative if wound inward.
        faces: Number of triangles.
        winding: Winding number of the whole mesh at a point just inside the region the shell bounds
            (rounded); NaN where no such point was found (a degenerate shell).
    """

    volume_m3: float
    faces: int
    winding: float


def edge_use_counts(faces: np.ndarray) -> np.ndarray:
    """How many faces use each distinct undirected edge.

    Args:
        faces: Triangles as vertex indices, shape (F, 3).

    Returns:
        One count per distinct edge, shape (E,), int64.
    """
    edges = np.sort(faces[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    _, counts = np.unique(edges, axis=0, return_counts=True)
    return np.asarray(counts, dtype=np.int64)


def union_manifold(bodies: list[Any]) -> Any:
    """The union of closed, outward-wound ``trimesh.Trimesh`` bodies as a ``manifold3d.Manifold``.

    Args:
        bodies: Closed, outward-wound ``trimesh.Trimesh`` bodies, coordinates in [m].
    """
    import manifold3d

    parts = [
        manifold3d.Manifold(
            manifold3d.Mesh64(
                vert_properties=np.ascontiguousarray(b.vertices, dtype=np.float64),
                tri_verts=np.ascontiguousarray(b.faces, dtype=np.uint64),
            )
        )
        for b in bodies
    ]
    return manifold3d.Manifold.batch_boolean(parts, manifold3d.OpType.Add)


def winding_numbers(vertices_m: np.ndarray, faces: np.ndarray, points_m: np.ndarray) -> np.ndarray:
    """Generalised winding number of a triangle mesh at each point: (P,) float64.

    Args:
        vertices_m: (V, 3) vertices [m], in any frame.
        faces: (F, 3) triangles.
        points_m: (P, 3) query points [m] in the vertices' frame, off the surface.
    """
    tri = np.asarray(vertices_m, dtype=np.float64)[np.asarray(faces)]
    out = np.empty(len(points_m))
    for start in range(0, len(points_m), _POINT_BLOCK):
        d = tri[None, :, :, :] - np.asarray(points_m, dtype=np.float64)[start : start + _POINT_BLOCK, None, None, :]
        a, b, c = d[:, :, 0], d[:, :, 1], d[:, :, 2]
        la, lb, lc = (np.linalg.norm(x, axis=-1) for x in (a, b, c))
        det = np.einsum("pfk,pfk->pf", a, np.cross(b, c))
        dot = (
            la * lb * lc
            + np.einsum("pfk,pfk->pf", a, b) * lc
            + np.einsum("pfk,pfk->pf", b, c) * la
            + np.einsum("pfk,pfk->pf", c, a) * lb
        )
        out[start : start + _POINT_BLOCK] = 2.0 * np.arctan2(det, dot).sum(axis=1) / (4.0 * np.pi)
    return out


def _inside_point(body: Any) -> np.ndarray | None:
    """A point just inside the region a closed shell bounds (towards -normal if outward, +normal if inward)."""
    sign = 1.0 if float(body.volume) >= 0 else -1.0
    areas = np.asarray(body.area_faces)
    extent = float(np.max(np.ptp(np.asarray(body.vertices), axis=0)))
    for face in np.argsort(-areas)[:8]:
        centre = np.asarray(body.triangles_center[face])
        normal = np.asarray(body.face_normals[face])
        for step in (1e-4, 1e-6):
            point = centre - sign * normal * min(step * extent, 0.1 * np.sqrt(areas[face]))
            own = winding_numbers(np.asarray(body.vertices), np.asarray(body.faces), point[None])[0]
            if abs(abs(own) - 1.0) < 1e-3:
                return np.asarray(point, dtype=np.float64)
    return None


def shells(mesh: Any) -> list[Shell]:
    """Every connected body of a closed, consistently wound ``trimesh.Trimesh`` with its winding number.

    Args:
        mesh: A closed, consistently wound ``trimesh.Trimesh``, coordinates in [m].
    """
    bodies = mesh.split(only_watertight=False, repair=False)
    if len(bodies) == 1:
        volume = float(bodies[0].volume)
        return [Shell(volume, len(bodies[0].faces), 1.0 if volume > 0 else -1.0)]
    vertices, faces = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    out = []
    for body in bodies:
        point = _inside_point(body)
        winding = np.nan if point is None else float(np.round(winding_numbers(vertices, faces, point[None])[0]))
        out.append(Shell(float(body.volume), len(body.faces), winding))
    return out
