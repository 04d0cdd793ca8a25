"""Binary STL round trip and bad files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.robots.visuals.link_visuals import cylinder_triangles
from cosim_validation.robots.visuals.stl_binary import read_stl, triangle_normals, write_stl


def test_round_trip_is_exact_to_float32(tmp_path: Path) -> None:
    triangles = cylinder_triangles(0.05, 0.3) + np.array([0.4, -0.2, 0.1])
    path = write_stl(tmp_path / "c.stl", triangles)
    assert path.stat().st_size == 84 + 50 * len(triangles)
    back = read_stl(path)
    np.testing.assert_array_equal(back, triangles.astype(np.float32).astype(np.float64))


def test_trimesh_reads_the_same_closed_outward_solid(tmp_path: Path) -> None:
    import trimesh

    triangles = cylinder_triangles(0.05, 0.3)
    mesh = trimesh.load(write_stl(tmp_path / "c.stl", triangles), force="mesh")
    assert mesh.is_watertight
    assert mesh.volume == pytest.approx(np.pi * 0.05**2 * 0.3, rel=0.01)  # positive: outward winding
    stored = np.frombuffer((tmp_path / "c.stl").read_bytes()[84:], dtype=np.uint8).reshape(-1, 50)
    normals = stored[:, :12].copy().view("<f4").reshape(-1, 3)
    np.testing.assert_allclose(normals, triangle_normals(triangles), atol=1e-6)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"solid x\n", "too short for a binary STL"),
        (b" " * 80 + np.uint32(2).tobytes() + b"\0" * 50, "a binary STL of 2 triangles has 184 bytes, this file 134"),
    ],
)
def test_bad_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.stl"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_stl(path)
    with pytest.raises(InputError, match="no such STL file"):
        read_stl(tmp_path / "missing.stl")
    with pytest.raises(InputError, match=r"must be \(F, 3, 3\)"):
        write_stl(tmp_path / "x.stl", np.zeros((4, 3)))
