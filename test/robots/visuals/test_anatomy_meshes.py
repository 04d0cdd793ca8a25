"""The built-in anatomy exported as STL, and MESH_RESOURCE placement only for a file that is the loaded model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.anatomy import AnatomyModel, AnatomyScene, load_anatomy, pose_matrix
from cosim_validation.common.config import load_config
from cosim_validation.robots.visuals import PACKAGE_URI_PREFIX, package_uri, resolve_package_uri
from cosim_validation.robots.visuals.anatomy_meshes import (
    MeshMismatchError,
    anatomy_path,
    export_builtin_anatomy,
    mesh_resource,
    rigid_fit,
)
from cosim_validation.robots.visuals.stl_binary import read_stl, write_stl


@pytest.fixture(scope="module")
def scene(repo_root: Path) -> AnatomyScene:
    return load_anatomy(load_config(repo_root / "config" / "needle_insertion.yaml")["anatomy"])


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("package")
    export_builtin_anatomy(root)
    return root


def _placed(path: Path, T: np.ndarray) -> np.ndarray:
    return read_stl(path) @ T[:3, :3].T + T[:3, 3]


def test_every_model_is_placed_from_its_file(scene: AnatomyScene, exported: Path) -> None:
    for model in scene:
        resource = mesh_resource(model, exported)
        assert resource.uri == f"{PACKAGE_URI_PREFIX}meshes/anatomy/{model.source.split(':')[1]}.stl"
        np.testing.assert_allclose(resource.T_frame_mesh, scene.T_base_patient, atol=1e-7)  # fit to float32 corners
        placed = _placed(resolve_package_uri(resource.uri, exported), resource.T_frame_mesh)
        np.testing.assert_allclose(placed, model.vertices_m[model.faces], atol=1e-6)
        assert resource.residual_m < 1e-7  # float32 rounding only


def test_set_up_exported_the_same_files(scene: AnatomyScene, repo_root: Path, exported: Path) -> None:
    """make setup wrote meshes/anatomy from the current code (its stamp tracks the generator modules)."""
    for model in scene:
        relative = anatomy_path(model.source.split(":")[1])
        assert (repo_root / relative).read_bytes() == (exported / relative).read_bytes()


def test_a_posed_model_gets_its_pose(scene: AnatomyScene, exported: Path) -> None:
    heart = scene.model("heart")
    T_extra = pose_matrix(np.array([0.01, -0.02, 0.03]), np.array([0.1, -0.2, 0.3]))
    moved = AnatomyModel(
        "heart", "obstacle", heart.vertices_m @ T_extra[:3, :3].T + T_extra[:3, 3], heart.faces, heart.source, "", "m"
    )
    resource = mesh_resource(moved, exported)
    np.testing.assert_allclose(resource.T_frame_mesh, T_extra @ scene.T_base_patient, atol=1e-7)


def test_mismatches_fall_back(scene: AnatomyScene, exported: Path, tmp_path: Path) -> None:
    heart = scene.model("heart")
    user_mesh = AnatomyModel("heart", "obstacle", heart.vertices_m, heart.faces, "/data/heart.stl", "", "m")
    with pytest.raises(MeshMismatchError, match="ships files of built-in models only"):
        mesh_resource(user_mesh, exported)
    with pytest.raises(MeshMismatchError, match="missing"):
        mesh_resource(heart, tmp_path)
    stale = tmp_path / anatomy_path("heart")
    stale.parent.mkdir(parents=True)
    triangles = read_stl(exported / anatomy_path("heart"))
    triangles[10, 1] += 0.002  # one corner moved 2 mm
    write_stl(stale, triangles)
    with pytest.raises(MeshMismatchError, match="differs from the loaded model"):
        mesh_resource(heart, tmp_path)
    write_stl(stale, triangles[:-1])
    with pytest.raises(MeshMismatchError, match="5119 triangles, the model 5120"):
        mesh_resource(heart, tmp_path)


def test_rigid_fit_recovers_a_transform() -> None:
    rng = np.random.default_rng(0)
    points = rng.normal(size=(50, 3))
    T = pose_matrix(np.array([0.3, -0.1, 2.0]), np.array([2.0, -0.4, 1.1]))
    np.testing.assert_allclose(rigid_fit(points, points @ T[:3, :3].T + T[:3, 3]), T, atol=1e-12)


def test_package_uris() -> None:
    assert package_uri("meshes/robot/link1.stl") == "package://cosim_validation/meshes/robot/link1.stl"
    assert resolve_package_uri("package://cosim_validation/urdf/x.urdf", Path("/p")) == Path("/p/urdf/x.urdf")
    with pytest.raises(Exception, match="expected a URI starting with 'package://cosim_validation/'"):
        resolve_package_uri("package://other_pkg/x.stl")
    with pytest.raises(Exception, match="expected a path inside the package"):
        package_uri("/abs/x.stl")
