"""What makes a triangle mesh unusable as a solid: the defects reported on load."""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.anatomy.mesh_solid import MIN_VOLUME_M3, edge_use_counts, shells, union_manifold

# Anatomical models (a tumour to a whole body) measure between these largest extents [m].
PLAUSIBLE_EXTENT_M: tuple[float, float] = (1e-3, 2.5)
# Bodies of a multi-body mesh may not overlap by more than this fraction of their summed volume.
_OVERLAP_TOLERANCE = 1e-3


def size_defect(vertices_m: np.ndarray, unit: str) -> str | None:
    """A message if the mesh is implausibly large or small for an anatomical model in ``unit``.

    Args:
        vertices_m: The mesh's vertices, already converted to metres, shape (V, 3), in [m].
        unit: Unit the source was declared in, for the message.
    """
    largest = float(np.max(vertices_m.max(axis=0) - vertices_m.min(axis=0)))
    lo, hi = PLAUSIBLE_EXTENT_M
    if lo <= largest <= hi:
        return None
    guess = "mm" if largest > hi else "m"
    hint = f"; is the unit {guess!r}?" if guess != unit else ""
    return (
        f"implausible size for unit {unit!r}: largest extent {largest:.6g} m, expected {lo:g} to {hi:g} m "
        f"for an anatomical model{hint}"
    )


def topology_defects(mesh: Any) -> list[str]:
    """Open edges, non-manifold edges and inconsistent winding of a ``trimesh.Trimesh``.

    Args:
        mesh: The mesh to check, coordinates in [m].
    """
    defects = []
    counts = edge_use_counts(np.asarray(mesh.faces))
    boundary, nonmanifold = int(np.sum(counts == 1)), int(np.sum(counts > 2))
    if boundary or nonmanifold:
        defects.append(
            f"not watertight: {boundary} open edges (used by one face) and {nonmanifold} non-manifold edges "
            f"(used by three or more faces)"
        )
    if not mesh.is_winding_consistent:
        defects.append("inconsistent winding: neighbouring faces are oriented in opposite directions")
    return defects


def volume_defects(mesh: Any) -> list[str]:
    """Flat, inverted or overlapping solids (call only on watertight, consistently wound meshes).

    Args:
        mesh: The mesh to check, coordinates in [m]; watertight and consistently wound (no topology defects).
    """
    volume = float(mesh.volume)
    if abs(volume) < MIN_VOLUME_M3:
        return [f"zero volume: encloses {volume:.3g} m^3 (less than {MIN_VOLUME_M3:g} m^3)"]
    if volume < 0:
        return [f"inverted: faces are wound inward (signed volume {volume:.6g} m^3)"]
    bodies = mesh.split(only_watertight=False, repair=False)
    if len(bodies) == 1:
        return []
    defects = shell_defects(mesh)
    outward = [b for b in bodies if float(b.volume) > 0]
    summed = float(sum(b.volume for b in outward))
    united = union_volume(outward) if len(outward) > 1 else summed
    if united < summed * (1.0 - _OVERLAP_TOLERANCE):
        defects.append(
            f"overlapping shells: {len(outward)} bodies whose volumes sum to {summed:.6g} m^3 but whose union "
            f"is {united:.6g} m^3 (inside tests by ray parity would be wrong where they overlap)"
        )
    return defects


def shell_defects(mesh: Any) -> list[str]:
    """Shells of inverted orientation that are not cavities of another shell (winding number -1 inside).

    An inward-wound shell inside an outward one is a cavity (winding number 0 inside it) and is fine; one
    that is not makes a pocket of winding number -1, which ray parity counts as inside.

    Args:
        mesh: A closed, consistently wound ``trimesh.Trimesh``, coordinates in [m].
    """
    pockets = [s for s in shells(mesh) if s.volume_m3 < 0 and s.winding < 0]
    if not pockets:
        return []
    volume = sum(-s.volume_m3 for s in pockets)
    return [
        f"inverted shells: {len(pockets)} shells wound inward that are not cavities of another shell "
        f"(winding number -1 inside them; {volume:.3g} m^3, {sum(s.faces for s in pockets)} faces)"
    ]


def union_volume(bodies: list[Any]) -> float:
    """Volume of the union of closed bodies [m^3], by manifold3d.

    Args:
        bodies: Closed, outward-wound ``trimesh.Trimesh`` bodies, coordinates in [m].
    """
    return float(union_manifold(bodies).volume())


def mesh_defects(mesh: Any, unit: str) -> list[str]:
    """Every reason a ``trimesh.Trimesh`` in metres cannot be used as a solid; empty if it can.

    Args:
        mesh: The mesh, coordinates already converted to metres.
        unit: Unit the source was declared in, for the size message.
    """
    vertices = np.asarray(mesh.vertices, dtype=np.float64)
    faces = np.asarray(mesh.faces)
    if len(faces) == 0 or len(vertices) == 0:
        return ["empty: no faces"]
    if not np.isfinite(vertices).all():
        return [f"non-finite coordinates in {int(np.sum(~np.isfinite(vertices).all(axis=1)))} vertices"]
    defects = []
    size = size_defect(vertices, unit)
    if size:
        defects.append(size)
    topology = topology_defects(mesh)
    defects += topology
    if not topology:
        defects += volume_defects(mesh)
    return defects
