"""One anatomical model: a closed triangle mesh placed in the robot base frame, with its provenance."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from cosim_validation.anatomy.repair_report import RepairReport
from cosim_validation.common.exceptions import InputError

ROLES: tuple[str, ...] = ("target", "obstacle", "skin")
UNITS: dict[str, float] = {"m": 1.0, "mm": 1e-3}


@dataclass(frozen=True, eq=False)
class AnatomyModel:
    """A target, obstacle or skin model, validated as a closed, consistently wound solid.

    Attributes:
        name: Unique name in its scene, e.g. ``left_lung``.
        role: ``target`` (test targets lie inside), ``obstacle`` (forbidden, e.g. the heart) or
            ``skin`` (the closed body surface the needle enters through).
        vertices_m: (V, 3) float64 vertex positions in ``base_link`` [m], read-only.
        faces: (F, 3) int64 vertex indices, outward (counter-clockwise seen from outside), read-only.
        source: The file the mesh was read from, or ``builtin:<name>``.
        sha256: SHA-256 (hex) of the source content: the file's bytes, or the built-in's arrays.
        unit: Unit of the source's coordinates, ``m`` or ``mm``.
        repair: What ``repair: true`` changed: every step with the shells and volume it removed; None if the
            mesh needed no repair.
    """

    name: str
    role: str
    vertices_m: np.ndarray
    faces: np.ndarray
    source: str
    sha256: str
    unit: str
    repair: RepairReport | None = None

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise InputError(f"role must be one of {ROLES!r}, got {self.role!r}")
        if self.unit not in UNITS:
            raise InputError(f"unit must be one of {tuple(UNITS)!r}, got {self.unit!r}")
        vertices = np.array(self.vertices_m, dtype=np.float64, copy=True)
        faces = np.array(self.faces, dtype=np.int64, copy=True)
        if vertices.ndim != 2 or vertices.shape[1] != 3:
            raise InputError(f"vertices_m must be (V, 3), got shape {vertices.shape!r}")
        if faces.ndim != 2 or faces.shape[1] != 3:
            raise InputError(f"faces must be (F, 3), got shape {faces.shape!r}")
        vertices.setflags(write=False)
        faces.setflags(write=False)
        object.__setattr__(self, "vertices_m", vertices)
        object.__setattr__(self, "faces", faces)

    @property
    def repairs(self) -> tuple[str, ...]:
        """What the repair changed, one line per step; empty if nothing was repaired."""
        return () if self.repair is None else self.repair.lines()

    @cached_property
    def mesh(self) -> Any:
        """The model as a ``trimesh.Trimesh`` in ``base_link`` [m] (built once, not processed)."""
        import trimesh

        return trimesh.Trimesh(self.vertices_m, self.faces, process=False, validate=False)

    @property
    def bounds_m(self) -> np.ndarray:
        """(2, 3) float64 axis-aligned bounding box ``[min, max]`` in ``base_link`` [m]."""
        return np.stack([self.vertices_m.min(axis=0), self.vertices_m.max(axis=0)])

    @property
    def extent_m(self) -> np.ndarray:
        """(3,) float64 size of the bounding box along x, y, z of ``base_link`` [m]."""
        lo, hi = self.bounds_m
        return np.asarray(hi - lo)

    @cached_property
    def volume_m3(self) -> float:
        """Enclosed volume [m^3] (positive: the mesh is validated as outward wound)."""
        return float(self.mesh.volume)

    @cached_property
    def area_m2(self) -> float:
        """Surface area [m^2]."""
        return float(self.mesh.area)

    def __repr__(self) -> str:
        return (
            f"AnatomyModel(name={self.name!r}, role={self.role!r}, source={self.source!r}, "
            f"faces={len(self.faces)}, volume_m3={self.volume_m3:.6g})"
        )
