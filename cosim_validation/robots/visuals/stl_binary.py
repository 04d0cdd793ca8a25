"""Binary STL files as (F, 3, 3) triangle arrays.

Format (the de-facto standard, e.g. Wikipedia "STL (file format)", "Binary STL"): an 80-byte header, a
little-endian uint32 triangle count, then per triangle 12 little-endian float32 (normal, three vertices)
and a uint16 attribute byte count. Triangles keep their order and corner order, so a file read back gives
the written triangles exactly (to float32).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cosim_validation.common.exceptions import InputError

_RECORD = np.dtype([("normal", "<f4", (3,)), ("corners", "<f4", (3, 3)), ("attribute", "<u2")])
_HEADER_BYTES = 80


def triangle_normals(triangles: np.ndarray) -> np.ndarray:
    """(F, 3) unit normals of counter-clockwise triangles (zero for degenerate ones).

    Args:
        triangles: The triangles' vertices, shape (F, 3, 3).
    """
    cross = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    length = np.linalg.norm(cross, axis=1, keepdims=True)
    return np.asarray(np.divide(cross, length, out=np.zeros_like(cross), where=length > 0))


def write_stl(path: str | Path, triangles_m: np.ndarray, header: str = "cosim_validation") -> Path:
    """Write triangles as a binary STL.

    Args:
        path: The file to write (its folder must exist).
        triangles_m: (F, 3, 3) corner coordinates [m], counter-clockwise seen from outside.
        header: Text for the 80-byte header (ASCII, cut to 80 bytes; must not start with "solid").
    """
    triangles = np.asarray(triangles_m, dtype=np.float64)
    if triangles.ndim != 3 or triangles.shape[1:] != (3, 3):
        raise InputError(f"triangles_m must be (F, 3, 3), got shape {triangles.shape!r}")
    records = np.zeros(len(triangles), dtype=_RECORD)
    records["normal"] = triangle_normals(triangles)
    records["corners"] = triangles
    head = header.encode("ascii")[:_HEADER_BYTES].ljust(_HEADER_BYTES, b" ")
    path = Path(path)
    path.write_bytes(head + np.uint32(len(triangles)).tobytes() + records.tobytes())
    return path


def read_stl(path: str | Path) -> np.ndarray:
    """(F, 3, 3) float64 triangle corners of a binary STL file.

    Args:
        path: The STL file.

    Raises:
        InputError: The file is missing or not a binary STL of the size its count says.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such STL file")
    data = path.read_bytes()
    if len(data) < _HEADER_BYTES + 4:
        raise InputError(f"{path}: too short for a binary STL ({len(data)} bytes)")
    count = int(np.frombuffer(data, "<u4", 1, _HEADER_BYTES)[0])
    expected = _HEADER_BYTES + 4 + count * _RECORD.itemsize
    if len(data) != expected:
        raise InputError(f"{path}: a binary STL of {count} triangles has {expected} bytes, this file {len(data)}")
    records = np.frombuffer(data, _RECORD, count, _HEADER_BYTES + 4)
    return np.asarray(records["corners"], dtype=np.float64)
