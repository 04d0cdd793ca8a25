"""The built-in models are closed, outward-wound, deterministic and anatomically plausible."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import trimesh

from cosim_validation.anatomy import BUILTIN_NAMES, HEART_BOUNDS_M, builtin_mesh, builtin_sha256, mesh_defects
from cosim_validation.anatomy.builtin_models import builtin_mesh as cached_builtin
from cosim_validation.anatomy.mesh_check import edge_use_counts


def _trimesh(name: str) -> trimesh.Trimesh:
    mesh = builtin_mesh(name)
    return trimesh.Trimesh(mesh.vertices_m, mesh.faces, process=False)


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_builtin_is_a_closed_outward_solid(name: str) -> None:
    mesh = _trimesh(name)
    assert np.all(edge_use_counts(mesh.faces) == 2)
    assert mesh.is_winding_consistent
    assert mesh.volume > 0
    assert mesh_defects(mesh, "m") == []
    assert mesh.body_count == 1


@pytest.mark.parametrize("name", BUILTIN_NAMES)
def test_builtin_is_deterministic_bit_for_bit(name: str) -> None:
    again = cached_builtin.__wrapped__(name)  # type: ignore[attr-defined]
    first = builtin_mesh(name)
    assert np.array_equal(again.vertices_m, first.vertices_m)
    assert np.array_equal(again.faces, first.faces)
    assert builtin_sha256(name) == builtin_sha256(name)


@pytest.mark.parametrize("name", ["left_lung", "right_lung"])
def test_lungs_have_adult_size(name: str) -> None:
    mesh = _trimesh(name)
    height_m = mesh.extents[1]
    assert 0.22 < height_m < 0.30
    assert 0.0015 < mesh.volume < 0.004  # 1.5 to 4 litres
    assert 0.10 < mesh.extents[0] < 0.16
    assert 0.15 < mesh.extents[2] < 0.23


def test_lungs_lie_on_their_side_and_right_is_larger() -> None:
    left, right = _trimesh("left_lung"), _trimesh("right_lung")
    assert left.bounds[0, 0] > 0 > right.bounds[1, 0]  # x = patient left
    assert right.volume > left.volume


def test_heart_fills_the_bounding_box_of_the_real_heart() -> None:
    np.testing.assert_allclose(_trimesh("heart").bounds, HEART_BOUNDS_M, atol=1e-9)


def test_heart_is_medial_to_the_left_lung_and_outside_both_lungs() -> None:
    heart = _trimesh("heart")
    for name in ("left_lung", "right_lung"):
        lung = _trimesh(name)
        assert not lung.contains(heart.vertices).any()
        assert not heart.contains(lung.vertices).any()
    left = _trimesh("left_lung")
    assert heart.centroid[0] < left.centroid[0]
    assert left.bounds[0, 1] < heart.centroid[1] < left.bounds[1, 1]


def test_left_lung_is_non_convex() -> None:
    lung = _trimesh("left_lung")
    assert lung.volume / lung.convex_hull.volume < 0.9


def test_left_lung_base_is_concave() -> None:
    lung = _trimesh("left_lung")
    # a vertical ray up through the middle of the base enters the lung well above its lowest point
    origin = np.array([[0.075, lung.bounds[0, 1] - 0.05, -0.005]])
    hits, _, _ = lung.ray.intersects_location(origin, [[0.0, 1.0, 0.0]])
    assert hits[:, 1].min() - lung.bounds[0, 1] > 0.02


def test_left_lung_has_a_cardiac_notch() -> None:
    v = builtin_mesh("left_lung").vertices_m

    def medial_edge_m(y_lo: float, y_hi: float) -> float:
        anterior = (v[:, 1] > y_lo) & (v[:, 1] < y_hi) & (v[:, 2] > 0.06)
        return float(v[anterior, 0].min())

    # beside the heart the anterior border recedes laterally by centimetres compared with above it
    assert medial_edge_m(0.42, 0.47) - medial_edge_m(0.50, 0.53) > 0.02


def test_torso_encloses_every_organ_with_a_margin() -> None:
    torso = _trimesh("torso")
    for name in ("left_lung", "right_lung", "heart"):
        organ = _trimesh(name)
        assert torso.contains(organ.vertices).all()
        assert np.all(np.abs(trimesh.proximity.signed_distance(torso, organ.vertices[::50])) > 0.02)


def test_unknown_builtin_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        builtin_mesh("spleen")


def test_a_node_on_the_builtin_anatomy_never_imports_trimesh(repo_root: Path) -> None:
    """A session starts six nodes at once on two cores; trimesh (with scipy and networkx, about a second of CPU)
    is imported only where a mesh is made or checked: never by a node, nor by the monitor's world of built-in
    anatomy (the built-in models are checked here, once, instead), once the built-in meshes are in the disk cache."""
    for name in BUILTIN_NAMES:  # made once and kept in the disk cache: making them needs trimesh (an icosphere)
        builtin_mesh(name)
    script = (
        "import sys\n"
        "import cosim_validation.live.nodes.monitor, cosim_validation.live.nodes.controller\n"
        "from cosim_validation.assembly.monitor_world import monitor_world_of\n"
        "world = monitor_world_of('config/needle_insertion.yaml', '')\n"
        "print(sorted(m for m in ('trimesh', 'networkx') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=repo_root, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "[]"
