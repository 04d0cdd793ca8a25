"""Reading mesh files (STL, OBJ, PLY, OFF, GLB) with an explicit unit."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.anatomy.anatomy_model import UNITS
from cosim_validation.anatomy.errors import MeshDefectError

SUFFIXES: tuple[str, ...] = (".stl", ".obj", ".ply", ".off", ".glb", ".gltf")


def read_mesh_file(path: Path, unit: str) -> tuple[Any, str]:
    """Read one mesh file into a ``trimesh.Trimesh`` in metres.

    Exactly coincident vertices are merged (STL stores every triangle on its own); nothing else is
    changed. Scenes (several meshes in one file) are concatenated.

    Args:
        path: The file; its suffix selects the format.
        unit: ``m`` or ``mm``, the unit of the file's coordinates.

    Returns:
        The mesh in metres and the SHA-256 (hex) of the file's bytes.

    Raises:
        MeshDefectError: The file is missing, of an unknown format, or cannot be parsed.
    """
    import trimesh

    if path.suffix.lower() not in SUFFIXES:
        raise MeshDefectError(str(path), [f"unknown mesh format {path.suffix!r}; expected one of {SUFFIXES!r}"])
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise MeshDefectError(str(path), [f"cannot read the file: {exc.strerror or exc}"]) from None
    if path.suffix.lower() == ".stl":
        _check_stl_length(path, data)
    try:
        loaded = trimesh.load(path, force="mesh", process=False)
    except Exception as exc:  # noqa: BLE001 - every parser failure means: not a mesh file we can read
        raise MeshDefectError(str(path), [f"cannot parse as {path.suffix[1:].upper()}: {exc}"]) from None
    if not isinstance(loaded, trimesh.Trimesh):
        raise MeshDefectError(str(path), ["empty: the file holds no triangles"])
    vertices = np.asarray(loaded.vertices, dtype=np.float64) * UNITS[unit]
    mesh = trimesh.Trimesh(vertices, np.asarray(loaded.faces, dtype=np.int64), process=False, validate=False)
    mesh.merge_vertices(merge_tex=True, merge_norm=True, digits_vertex=12)
    return mesh, hashlib.sha256(data).hexdigest()


def _check_stl_length(path: Path, data: bytes) -> None:
    """Refuse an STL file that is cut short.

    A binary STL holds exactly 84 + 50 n bytes for the n triangles its header announces (a file cut short
    was reported as "empty: no faces"); an ASCII STL (starting with ``solid``) ends with ``endsolid``.

    Raises:
        MeshDefectError: A binary STL of another length, or an ASCII STL without ``endsolid`` at its end.
    """
    count = int.from_bytes(data[80:84], "little") if len(data) >= 84 else -1
    if count >= 0 and len(data) == 84 + 50 * count:
        return  # a whole binary STL (its header may start with "solid" too)
    if data[:5].lower() == b"solid":
        if b"endsolid" not in data[-4096:]:
            raise MeshDefectError(str(path), ["truncated ASCII STL: no 'endsolid' at the end of the file"])
        return
    if count < 0:
        raise MeshDefectError(str(path), [f"truncated binary STL: {len(data)} bytes, less than its 84-byte header"])
    raise MeshDefectError(
        str(path),
        [
            f"truncated or damaged binary STL: its header announces {count} triangles ({84 + 50 * count} bytes), "
            f"the file has {len(data)} bytes"
        ],
    )
