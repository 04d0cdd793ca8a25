"""Repairing what trimesh and manifold3d can: junk faces, fragments, holes, winding, overlapping shells.

Every step that changes something is recorded in a :class:`RepairReport` with the shells and the volume it
removed, so the loader can show it and refuse a repair that removes too much.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.anatomy.mesh_solid import MIN_VOLUME_M3, edge_use_counts, union_manifold
from cosim_validation.anatomy.repair_report import RepairReport, RepairStep


def _clean(mesh: Any, steps: list[RepairStep]) -> Any:
    """Drop degenerate and duplicate faces, merge coincident vertices."""
    n_faces = len(mesh.faces)
    mesh.update_faces(mesh.nondegenerate_faces())
    degenerate = n_faces - len(mesh.faces)
    mesh.update_faces(mesh.unique_faces())
    duplicate = n_faces - degenerate - len(mesh.faces)
    mesh.remove_unreferenced_vertices()
    mesh.merge_vertices()
    if degenerate:
        steps.append(RepairStep("removed degenerate (zero-area) faces", faces=degenerate))
    if duplicate:
        steps.append(RepairStep("removed duplicate faces", faces=duplicate))
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


def _open_volume(body: Any) -> float:
    """Estimated volume an open shell would enclose with its holes capped by cones to its centroid [m^3].

    An open shell encloses no volume of its own; this is the signed volume of the surface seen from its
    centroid (exact for a closed shell, about right when the holes are small, near 0 for a thin patch).
    """
    triangles = np.asarray(body.triangles) - np.asarray(body.vertices).mean(axis=0)
    cross = np.cross(triangles[:, 1], triangles[:, 2])
    return abs(float(np.einsum("ij,ij->i", triangles[:, 0], cross).sum()) / 6.0)


def _hull_volume(body: Any) -> float:
    """Volume of the convex hull of a shell [m^3]: an upper bound of what it can enclose (0 if flat)."""
    try:
        return float(body.convex_hull.volume)
    except Exception:  # noqa: BLE001 - qhull refuses flat or tiny point sets: they enclose nothing
        return 0.0


class _Sorted:
    """The bodies of a mesh sorted into kept solids and the ones dropped, with the steps' numbers."""

    def __init__(self) -> None:
        self.kept: list[Any] = []
        self.fragments: list[Any] = []
        self.opened: list[Any] = []
        self.inverted: list[Any] = []
        self.closed: list[Any] = []

    def take(self, body: Any) -> None:
        if abs(float(body.volume)) < MIN_VOLUME_M3 and body.is_watertight:
            self.fragments.append(body)
            return
        was_closed = bool(body.is_watertight and body.is_winding_consistent)
        inverted = was_closed and float(body.volume) < 0
        if not _close_body(body):
            self.opened.append(body)
            return
        if abs(float(body.volume)) < MIN_VOLUME_M3:
            self.fragments.append(body)
            return
        if inverted:
            self.inverted.append(body)
        elif not was_closed:
            self.closed.append(body)
        self.kept.append(body)

    def steps(self) -> list[RepairStep]:
        out = []
        if self.inverted:
            out.append(RepairStep("turned inward-wound shells outward", len(self.inverted), _faces(self.inverted)))
        if self.closed:
            volume = sum(float(b.volume) for b in self.closed)
            note = f"{volume * 1e6:.4g} cm^3 after closing"
            out.append(RepairStep("closed open or mis-wound shells", len(self.closed), _faces(self.closed), note=note))
        if self.fragments:
            removed = sum(abs(float(b.volume)) for b in self.fragments)
            out.append(
                RepairStep("dropped shells of zero volume", len(self.fragments), _faces(self.fragments), removed, True)
            )
        if self.opened:
            areas = [float(b.area) for b in self.opened]
            removed = sum(_open_volume(b) for b in self.opened)
            hull = sum(_hull_volume(b) for b in self.opened)
            note = (
                f"surface {sum(areas):.4g} m^2, largest {max(areas):.4g} m^2; volume estimated with the holes "
                f"capped, at most {hull * 1e6:.4g} cm^3 (convex hulls)"
            )
            action = "dropped open shells that hole filling could not close"
            out.append(RepairStep(action, len(self.opened), _faces(self.opened), removed, True, note))
        return out


def _faces(bodies: list[Any]) -> int:
    return int(sum(len(b.faces) for b in bodies))


def _unite(bodies: list[Any], steps: list[RepairStep]) -> Any:
    """One solid from several closed bodies (manifold3d), without the cavities the union encloses."""
    import trimesh

    summed = sum(float(b.volume) for b in bodies)
    united = union_manifold(bodies).to_mesh()
    result = trimesh.Trimesh(
        np.asarray(united.vert_properties[:, :3], dtype=np.float64),
        np.asarray(united.tri_verts, dtype=np.int64),
        process=False,
    )
    note = f"{summed * 1e6:.4g} cm^3 summed, {float(result.volume) * 1e6:.4g} cm^3 united: overlaps counted once"
    steps.append(RepairStep("united closed shells into one solid with manifold3d", len(bodies), note=note))
    parts = result.split(only_watertight=False, repair=False)
    cavities = [p for p in parts if float(p.volume) < 0]
    if not cavities:
        return result
    outer = [p for p in parts if float(p.volume) >= 0]
    filled = sum(-float(p.volume) for p in cavities)
    note = f"{filled * 1e9:.4g} mm^3 added: a forbidden region has no holes inside"
    steps.append(RepairStep("filled cavities enclosed by the union", len(cavities), _faces(cavities), note=note))
    return trimesh.util.concatenate(outer) if len(outer) > 1 else outer[0]


def repair_mesh(mesh: Any) -> tuple[Any, RepairReport]:
    """Repair a ``trimesh.Trimesh`` (metres) into one closed, outward-wound solid if possible.

    Steps: remove degenerate and duplicate faces and merge vertices; split into connected bodies;
    drop zero-volume fragments; fix winding and fill holes body by body, dropping bodies that stay
    open; turn inverted bodies outward; unite several bodies into one solid with manifold3d
    (overlapping shells would break inside tests by parity) and fill the cavities the union encloses.

    Args:
        mesh: The mesh to repair, coordinates in [m]; it is not changed (a copy is repaired).

    Returns:
        The repaired mesh (a new object) and the report of every step that changed something.
    """
    steps: list[RepairStep] = []
    with np.errstate(divide="ignore", invalid="ignore"):  # trimesh's inertia of flat fragments
        work = _clean(mesh.copy(), steps)
        sorted_ = _Sorted()
        for body in work.split(only_watertight=False, repair=False):
            sorted_.take(body)
        steps += sorted_.steps()
        bodies = sorted_.kept
        if not bodies:
            return work, RepairReport(tuple(steps), 0.0)
        result = bodies[0] if len(bodies) == 1 else _unite(bodies, steps)
        return result, RepairReport(tuple(steps), float(result.volume))
