"""Loading the anatomy section: the shipped scene, file models, validation errors and repair."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import trimesh

from cosim_validation.anatomy import (
    AnatomyScene,
    MeshDefectError,
    builtin_mesh,
    builtin_sha256,
    load_anatomy_file,
    transform_points,
)
from cosim_validation.common.exceptions import ConfigError, InputError
from test.anatomy.conftest import write_stl

Loader = Callable[..., AnatomyScene]


@pytest.fixture(scope="module")
def shipped() -> AnatomyScene:
    return load_anatomy_file("config/needle_insertion.yaml")


def test_shipped_scene_has_every_role(shipped: AnatomyScene) -> None:
    assert shipped.names == ("left_lung", "right_lung", "heart", "torso")
    assert shipped.target.name == "left_lung"
    assert [m.name for m in shipped.obstacles] == ["heart"]
    assert shipped.skin is not None
    assert shipped.skin.name == "torso"
    assert "heart" in shipped
    assert len(shipped) == 4
    for model in shipped:
        assert model.source == f"builtin:{model.name}"
        assert model.sha256 == builtin_sha256(model.name)
        assert model.unit == "m"
        assert model.repairs == ()


def test_shipped_scene_places_built_ins_by_the_patient_pose(shipped: AnatomyScene) -> None:
    for model in shipped:
        expected = transform_points(shipped.T_base_patient, builtin_mesh(model.name).vertices_m)
        np.testing.assert_allclose(model.vertices_m, expected, atol=1e-12)
    # supine: patient anterior (+z) is base_link up, so the skin lies above the lung
    np.testing.assert_allclose(shipped.T_base_patient[:3, 2], [0.0, 0.0, 1.0], atol=1e-12)
    assert shipped.model("torso").bounds_m[1, 2] > shipped.model("left_lung").bounds_m[1, 2] + 0.02


def test_shipped_scene_puts_the_left_lung_within_reach(shipped: AnatomyScene) -> None:
    lung = shipped.model("left_lung")
    centre = lung.bounds_m.mean(axis=0)
    assert 0.35 < np.hypot(centre[0], centre[1]) < 0.55
    assert 0.05 < lung.bounds_m[1, 2] < 0.25


def test_model_arrays_are_read_only_and_mesh_is_cached(shipped: AnatomyScene) -> None:
    heart = shipped.model("heart")
    with pytest.raises(ValueError, match="read-only"):
        heart.vertices_m[0, 0] = 1.0
    assert heart.mesh is heart.mesh
    assert heart.volume_m3 == pytest.approx(heart.mesh.volume)
    np.testing.assert_allclose(heart.extent_m, heart.bounds_m[1] - heart.bounds_m[0])


def test_unknown_model_name_lists_existing_ones(shipped: AnatomyScene) -> None:
    with pytest.raises(InputError, match=r"no anatomy model named 'liver'; models: left_lung, right_lung, heart"):
        shipped.model("liver")


def test_file_model_in_mm_with_pose(load_scene: Loader, tmp_path: Path) -> None:
    box = trimesh.creation.box(extents=[40.0, 20.0, 10.0])  # millimetres
    path = write_stl(tmp_path / "box.stl", box)
    scene = load_scene(
        f"{{name: b, role: target, file: {path.name}, unit: mm, "
        "pose: {xyz_m: [0.1, 0, 0], rpy_rad: [0, 0, 1.5707963267948966]}}",
        pose="{xyz_m: [0, 0, 0.5], rpy_rad: [0, 0, 0]}",
    )
    model = scene.model("b")
    assert model.unit == "mm"
    assert model.source == str(path)
    assert model.volume_m3 == pytest.approx(8e-6)
    np.testing.assert_allclose(model.extent_m, [0.02, 0.04, 0.01], atol=1e-12)  # rotated by 90 deg about z
    np.testing.assert_allclose(model.bounds_m.mean(axis=0), [0.1, 0.0, 0.5], atol=1e-12)


@pytest.mark.parametrize(
    ("model", "match"),
    [
        ("{name: x, role: target, builtin: spleen}", r"models\[0\]\.builtin: expected one of 'left_lung'"),
        ("{name: x, role: organ, builtin: heart}", r"models\[0\]\.role: expected one of 'target'"),
        ("{name: x, role: target}", r"models\[0\]: expected exactly one of 'builtin' or 'file'"),
        ("{name: x, role: target, builtin: heart, file: a.stl}", "exactly one of 'builtin' or 'file'"),
        ("{name: x, role: target, builtin: heart, unit: mm}", r"models\[0\]\.unit: a built-in model is in metres"),
        ("{name: x, role: target, file: a.stl}", r"models\[0\]\.unit: missing required key"),
        ("{name: x, role: target, file: a.stl, unit: cm}", r"models\[0\]\.unit: expected one of 'm', 'mm'"),
        ("{name: x, role: target, file: nowhere.stl, unit: m}", r"models\[0\]\.file: mesh file not found"),
        ("{name: x, role: target, builtin: heart, colour: red}", r"models\[0\]\.colour: unknown key"),
        ("{name: x, role: obstacle, builtin: heart}", r"models: expected at least one model with role 'target'"),
        (
            "{name: x, role: target, builtin: heart, pose: {xyz_m: [0, 0], rpy_rad: [0, 0, 0]}}",
            r"models\[0\]\.pose\.xyz_m: expected a list of 3 numbers",
        ),
        (
            "{name: x, role: target, builtin: heart, pose: {xyz_m: [0, 0, 0], rpy_rad: [0, 0, nan]}}",
            r"models\[0\]\.pose\.rpy_rad\[2\]: expected a number",
        ),
    ],
)
def test_bad_model_entries_name_the_key(load_scene: Loader, model: str, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_scene(model)


def test_bad_patient_pose_names_the_key(load_scene: Loader) -> None:
    with pytest.raises(ConfigError, match=r"anatomy\.patient_pose\.rpy_rad: expected a list of 3 numbers"):
        load_scene("{name: x, role: target, builtin: heart}", pose="{xyz_m: [0, 0, 0], rpy_rad: [0, 0]}")
    with pytest.raises(ConfigError, match=r"anatomy\.patient_pose\.xyz_m\[1\]: expected a number, got 'up'"):
        load_scene("{name: x, role: target, builtin: heart}", pose="{xyz_m: [0, up, 0], rpy_rad: [0, 0, 0]}")


def test_duplicate_names_are_rejected(load_scene: Loader) -> None:
    with pytest.raises(ConfigError, match=r"models\[1\]\.name: model name 'x' is used twice"):
        load_scene("{name: x, role: target, builtin: heart}\n{name: x, role: target, builtin: left_lung}")


def _open_box(tmp_path: Path) -> Path:
    box = trimesh.creation.box(extents=[0.05, 0.05, 0.05])
    box.update_faces(np.arange(len(box.faces)) != 0)
    return write_stl(tmp_path / "open_box.stl", box)


def test_non_watertight_mesh_is_rejected_naming_file_and_defect(load_scene: Loader, tmp_path: Path) -> None:
    path = _open_box(tmp_path)
    with pytest.raises(MeshDefectError, match=r"open_box\.stl: mesh is not a usable solid: not watertight: 3 open"):
        load_scene(f"{{name: x, role: target, file: {path.name}, unit: m}}")


def test_repair_closes_a_hole_and_reports_it(load_scene: Loader, tmp_path: Path) -> None:
    path = _open_box(tmp_path)
    model = load_scene(f"{{name: x, role: target, file: {path.name}, unit: m}}", repair=True).model("x")
    assert model.volume_m3 == pytest.approx(0.05**3)
    assert model.repairs == ("closed open or mis-wound shells, 1 shell, 12 faces (125 cm^3 after closing)",)
    assert model.repair is not None
    assert model.repair.removed_m3 == 0.0


def test_empty_mesh_is_rejected(load_scene: Loader, tmp_path: Path) -> None:
    (tmp_path / "empty.stl").write_text("solid empty\nendsolid empty\n")
    with pytest.raises(MeshDefectError, match=r"empty\.stl: .*empty"):
        load_scene("{name: x, role: target, file: empty.stl, unit: m}")


def test_unparsable_and_unknown_format_files_are_rejected(load_scene: Loader, tmp_path: Path) -> None:
    (tmp_path / "junk.ply").write_bytes(b"\x00\x01not a ply file")
    with pytest.raises(MeshDefectError, match=r"junk\.ply: .*cannot parse as PLY"):
        load_scene("{name: x, role: target, file: junk.ply, unit: m}")
    (tmp_path / "lung.vtk").write_text("x")
    with pytest.raises(MeshDefectError, match=r"lung\.vtk: .*unknown mesh format '\.vtk'"):
        load_scene("{name: x, role: target, file: lung.vtk, unit: m}")


@pytest.mark.parametrize(("scale", "declared", "hint"), [(1000.0, "m", "'mm'"), (1.0, "mm", "'m'")])
def test_wrong_unit_is_an_implausible_size(
    load_scene: Loader, tmp_path: Path, scale: float, declared: str, hint: str
) -> None:
    lung = builtin_mesh("left_lung")
    write_stl(tmp_path / "lung.stl", trimesh.Trimesh(lung.vertices_m * scale, lung.faces, process=False))
    with pytest.raises(MeshDefectError, match=rf"lung\.stl: .*implausible size for unit '{declared}'.*unit {hint}\?"):
        load_scene(f"{{name: x, role: target, file: lung.stl, unit: {declared}}}")


def test_inverted_mesh_is_rejected_and_repaired(load_scene: Loader, tmp_path: Path) -> None:
    box = trimesh.creation.box(extents=[0.05, 0.05, 0.05])
    box.invert()
    write_stl(tmp_path / "inside_out.stl", box)
    with pytest.raises(MeshDefectError, match="inverted: faces are wound inward"):
        load_scene("{name: x, role: target, file: inside_out.stl, unit: m}")
    model = load_scene("{name: x, role: target, file: inside_out.stl, unit: m}", repair=True).model("x")
    assert model.volume_m3 == pytest.approx(0.05**3)
    assert model.repairs == ("turned inward-wound shells outward, 1 shell, 12 faces",)


def test_flat_mesh_has_zero_volume(load_scene: Loader, tmp_path: Path) -> None:
    v = np.array([[0, 0, 0], [0.05, 0, 0], [0, 0.05, 0], [0.05, 0.05, 0]], dtype=float)
    flat = trimesh.Trimesh(v, [[0, 1, 2], [1, 3, 2], [0, 2, 1], [1, 2, 3]], process=False)
    write_stl(tmp_path / "flat.stl", flat)
    with pytest.raises(MeshDefectError, match=r"flat\.stl: .*(zero volume|not watertight)"):
        load_scene("{name: x, role: target, file: flat.stl, unit: m}")


def test_messy_multi_shell_mesh_needs_repair(load_scene: Loader, messy_heart: Path) -> None:
    entry = f"{{name: h, role: obstacle, file: {messy_heart}, unit: m}}\n{{name: t, role: target, builtin: heart}}"
    with pytest.raises(MeshDefectError, match=r"messy_heart\.stl: .*not watertight.*set repair: true"):
        load_scene(entry)
    model = load_scene(entry, repair=True).model("h")
    text = "\n".join(model.repairs)
    for step in ("degenerate", "duplicate", "zero volume", "dropped open shells", "united closed shells"):
        assert step in text
    spheres = trimesh.util.concatenate(
        [trimesh.creation.icosphere(3, 0.04), trimesh.creation.icosphere(3, 0.03).apply_translation([0.04, 0, 0])]
    )
    assert model.volume_m3 < spheres.volume  # the union, not the sum of the overlapping shells
    assert model.volume_m3 > trimesh.creation.icosphere(3, 0.04).volume


def test_overlapping_closed_shells_are_a_defect(load_scene: Loader, tmp_path: Path) -> None:
    a = trimesh.creation.box(extents=[0.05, 0.05, 0.05])
    b = trimesh.creation.box(extents=[0.05, 0.05, 0.05]).apply_translation([0.025, 0, 0])
    write_stl(tmp_path / "two.stl", trimesh.util.concatenate([a, b]))
    with pytest.raises(MeshDefectError, match="overlapping shells: 2 bodies"):
        load_scene("{name: x, role: target, file: two.stl, unit: m}")
    model = load_scene("{name: x, role: target, file: two.stl, unit: m}", repair=True).model("x")
    assert model.volume_m3 == pytest.approx(0.075 * 0.05 * 0.05)


def test_real_heart_is_rejected_then_repaired(load_scene: Loader, shared_anatomy: Path | None) -> None:
    """Issue 15, item 5: the repair drops the right atrium (an open shell) and must say so; by default the loss
    (11 % of the volume) is refused, with an explicit repair_max_loss it loads and reports every step."""
    if shared_anatomy is None:
        pytest.skip("real meshes absent; test_repair.py's open_chamber mesh covers the same code")
    entry = f"{{name: heart, role: obstacle, file: {shared_anatomy / 'heart.stl'}, unit: m}}\n"
    entry += "{name: lung, role: target, builtin: left_lung}"
    with pytest.raises(MeshDefectError, match=r"heart\.stl: .*not watertight: \d+ open edges"):
        load_scene(entry)
    with pytest.raises(MeshDefectError, match=r"heart\.stl: .*repair would remove 11\.\d % of the volume.*open shells"):
        load_scene(entry, repair=True)
    allowed = entry.replace("unit: m}", "unit: m, repair_max_loss: 0.15}")
    heart = load_scene(allowed, repair=True).model("heart")
    assert heart.repair is not None
    assert any(r.startswith("united closed shells") for r in heart.repairs)
    assert any(r.startswith("dropped open shells that hole filling could not close, 122 shells") for r in heart.repairs)
    assert heart.repair.volume_m3 == pytest.approx(235.7e-6, rel=0.01)
    assert 0.05 < heart.repair.removed_share < 0.15
    assert 1e-4 < heart.volume_m3 < 1e-3  # 0.1 to 1 litre


def test_real_skin_loads_as_is(load_scene: Loader, shared_anatomy: Path | None) -> None:
    if shared_anatomy is None:
        pytest.skip("real meshes absent; the built-in torso is checked in test_builtin_models")
    scene = load_scene(
        f"{{name: skin, role: skin, file: {shared_anatomy / 'skin_body.stl'}, unit: m}}\n"
        "{name: lung, role: target, builtin: left_lung}"
    )
    skin = scene.model("skin")
    assert skin.repairs == ()
    assert skin.volume_m3 == pytest.approx(0.0962, abs=1e-3)
