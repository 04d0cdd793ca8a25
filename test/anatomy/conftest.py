"""Meshes written to disk for the loader tests: clean, broken and messy solids, and config text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import trimesh

from cosim_validation.anatomy import AnatomyScene, load_anatomy
from cosim_validation.common.config import parse_config


def scene_yaml(models: str, *, repair: bool = False, pose: str = "{xyz_m: [0, 0, 0], rpy_rad: [0, 0, 0]}") -> str:
    """An ``anatomy:`` section around the given model lines (each a YAML flow mapping)."""
    lines = "\n".join(f"    - {m}" for m in models.strip().splitlines())
    return f"anatomy:\n  patient_pose: {pose}\n  repair: {str(repair).lower()}\n  models:\n{lines}\n"


@pytest.fixture
def load_scene(tmp_path: Path) -> Callable[..., AnatomyScene]:
    """Load an anatomy section given as text, as if from ``tmp_path/case.yaml``."""

    def load(models: str, **kwargs: object) -> AnatomyScene:
        text = scene_yaml(models, **kwargs)  # type: ignore[arg-type]
        return load_anatomy(parse_config(text, tmp_path / "case.yaml")["anatomy"])

    return load


def write_stl(path: Path, mesh: trimesh.Trimesh) -> Path:
    """Write ``mesh`` as binary STL and return the path."""
    path.write_bytes(mesh.export(file_type="stl"))
    return path


@pytest.fixture(scope="session")
def messy_heart(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mesh as messy as the real heart.stl: overlapping closed shells, an open shell, a flat fragment,
    degenerate and duplicate faces, in metres (about 8 cm across)."""
    a = trimesh.creation.icosphere(subdivisions=3, radius=0.04)
    b = trimesh.creation.icosphere(subdivisions=3, radius=0.03)
    b.apply_translation([0.04, 0.0, 0.0])
    cup = trimesh.creation.icosphere(subdivisions=2, radius=0.01)
    cup.apply_translation([-0.06, 0.0, 0.0])
    cup.update_faces(cup.face_normals[:, 0] < 0.5)  # an open cup: hole filling cannot make it a sphere
    # a closed but flat tetrahedron (four coplanar corners): a zero-volume fragment
    corners = [[0, 0, 0.05], [0.01, 0, 0.05], [0, 0.01, 0.05], [0.01, 0.01, 0.05]]
    flat = trimesh.Trimesh(corners, [[0, 1, 2], [0, 3, 1], [0, 2, 3], [1, 3, 2]], process=False)
    parts = trimesh.util.concatenate([a, b, cup, flat])
    faces = np.vstack([parts.faces, parts.faces[:5], [[0, 0, 1]]])
    messy = trimesh.Trimesh(parts.vertices, faces, process=False)
    return write_stl(tmp_path_factory.mktemp("meshes") / "messy_heart.stl", messy)
