"""Repairing what trimesh and manifold3d can: junk faces, fragments, holes, winding, overlapping shells."""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.anatomy.mesh_check import MIN_VOLUME_M3, edge_use_counts
from cosim_validation.anatomy.mesh_union import union_manifold


def _clean(mesh: Any, repairs: list[str]) -> Any:
    """Drop degenerate and duplicate faces, merge coincident vertices."""
    n_faces = len(mesh.faces)
    mesh.update_faces(mesh.nondegenerate_faces())
    degenerate = n_faces - len(mesh.faces)
    mesh.update_faces(mesh.unique_faces())
    duplicate = n_faces - degenerate - len(mesh.faces)
    mesh.remove_unreferenced_vertices()
    mesh.merge_vertices()
    if degenerate:
        repairs.append(f"removed {degenerate} degenerate (zero-area) faces")
    if duplicate:
        repairs.append(f"removed {duplicate} duplicate faces")
    return mesh


def _close_body(body: Any) -> bool:
    """Fix the winding and fill the holes of one connected body; whether it is now a closed solid."""
    import trimesh

    trimesh.repair.fix_winding(body)  # type: ignore[no-untyped-call]
    if not body.is_watertight:
        trimesh.repair.fill_holes(body)
    closed = bool(body.is_watertight and body.is_winding_consistent) and np.all(edge_use_counts(body.faces) == 2)
    if closed and body.volume < 0:
        body.invert()
    return bool(closed)


def _closed_bodies(mesh: Any, repairs: list[str]) -> list[Any]:
    """The mesh's connected bodies that are (or could be made) closed solids of non-zero volume."""
    bodies = mesh.split(only_watertight=False, repair=False)
    kept, fragments = [], 0
    opened: list[float] = []
    for body in bodies:
        if abs(float(body.volume)) < MIN_VOLUME_M3 and body.is_watertight:
            fragments += 1
            continue
        was_closed = bool(body.is_watertight and body.is_winding_consistent)
        inverted = was_closed and float(body.volume) < 0
        if not _close_body(body):
            opened.append(float(body.area))
            continue
        if abs(float(body.volume)) < MIN_VOLUME_M3:
            fragments += 1
            continue
        if inverted:
            repairs.append(f"turned one inward-wound body outward ({len(body.faces)} faces)")
        if not was_closed:
            repairs.append(f"closed one open or mis-wound body ({len(body.faces)} faces, {body.volume:.3g} m^3)")
        kept.append(body)
    if fragments:
        repairs.append(f"dropped {fragments} bodies of zero volume (fragments)")
    if opened:
        repairs.append(
            f"dropped {len(opened)} open bodies that hole filling could not close "
            f"(surface {sum(opened):.4g} m^2, largest {max(opened):.4g} m^2)"
        )
    return kept


def repair_mesh(mesh: Any) -> tuple[Any, list[str]]:
    """Repair a ``trimesh.Trimesh`` (metres) into one closed, outward-wound solid if possible.

    Steps: remove degenerate and duplicate faces and merge vertices; split into connected bodies;
    drop zero-volume fragments; fix winding and fill holes body by body, dropping bodies that stay
    open; turn inverted bodies outward; unite several bodies into one solid with manifold3d
    (overlapping shells would break inside tests by parity).

    Returns:
        The repaired mesh (a new object) and what was done, one line per step that changed something.
    """
    import trimesh

    repairs: list[str] = []
    with np.errstate(divide="ignore", invalid="ignore"):  # trimesh's inertia of flat fragments
        work = _clean(mesh.copy(), repairs)
        bodies = _closed_bodies(work, repairs)
    if not bodies:
        return work, repairs
    if len(bodies) == 1:
        return bodies[0], repairs
    united = union_manifold(bodies).to_mesh()
    result = trimesh.Trimesh(
        np.asarray(united.vert_properties[:, :3], dtype=np.float64),
        np.asarray(united.tri_verts, dtype=np.int64),
        process=False,
    )
    repairs.append(f"united {len(bodies)} closed bodies into one solid with manifold3d")
    return result, repairs
