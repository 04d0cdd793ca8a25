"""Issue 15, item 5: a repair reports every step with the shells and the volume it removed, refuses to remove
more than ``repair_max_loss`` of a model, and the checks flag shells of inverted orientation.

The meshes are made here, as messy as the real ones in ../shared/anatomy (test_loader.py runs those too when
the folder is present): a chamber that is an open shell next to a closed one, inverted and hollow shells.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import trimesh

from cosim_validation.anatomy import AnatomyScene, MeshDefectError, mesh_defects, repair_mesh
from cosim_validation.common.config import package_root
from test.anatomy.conftest import write_stl

Loader = Callable[..., AnatomyScene]


def _open_chamber(tmp_path: Path) -> Path:
    """A closed ventricle (sphere, r = 4 cm) and beside it an atrium that is an open shell (r = 2.5 cm, one
    cap of 20 degrees cut away), as the right atrium of the real heart.stl."""
    ventricle = trimesh.creation.icosphere(subdivisions=3, radius=0.04)
    atrium = trimesh.creation.icosphere(subdivisions=3, radius=0.025)
    atrium.update_faces(atrium.face_normals[:, 1] < np.cos(np.radians(20.0)))
    atrium.apply_translation([0.07, 0.0, 0.0])
    return write_stl(tmp_path / "open_chamber.stl", trimesh.util.concatenate([ventricle, atrium]))


def test_a_repair_that_removes_a_chamber_is_refused_naming_the_loss(load_scene: Loader, tmp_path: Path) -> None:
    path = _open_chamber(tmp_path)
    entry = f"{{name: h, role: obstacle, file: {path.name}, unit: m}}\n{{name: t, role: target, builtin: heart}}"
    with pytest.raises(MeshDefectError) as refused:
        load_scene(entry, repair=True)
    message = str(refused.value)
    assert "open_chamber.stl: mesh is not a usable solid: repair would remove 19.1 % of the volume" in message
    assert "dropped open shells that hole filling could not close, 1 shell" in message
    assert "At most 5 % may be removed (repair_max_loss)" in message
    assert "allow it with repair_max_loss: 0.2 under anatomy.models[0]" in message


@pytest.mark.parametrize("where", ["model", "section"])
def test_an_explicit_repair_max_loss_allows_it_and_the_report_keeps_the_balance(
    load_scene: Loader, tmp_path: Path, where: str
) -> None:
    path = _open_chamber(tmp_path)
    entry = f"{{name: h, role: obstacle, file: {path.name}, unit: m}}\n{{name: t, role: target, builtin: heart}}"
    if where == "model":
        scene = load_scene(entry.replace("unit: m}", "unit: m, repair_max_loss: 0.25}", 1), repair=True)
    else:
        scene = load_anatomy_text(entry, tmp_path, "  repair_max_loss: 0.25\n")
    model = scene.model("h")
    report = model.repair
    assert report is not None
    sphere = 4.0 / 3.0 * np.pi * 0.04**3
    assert report.volume_m3 == pytest.approx(model.volume_m3) == pytest.approx(sphere, rel=0.02)
    atrium = 4.0 / 3.0 * np.pi * 0.025**3  # the dropped shell, capped: about the whole ball
    assert report.removed_m3 == pytest.approx(atrium, rel=0.05)
    assert report.shells_removed == 1
    assert 0.15 < report.removed_share < 0.25
    (repaired,) = scene.repairs()
    assert repaired["model"] == "h"
    assert repaired["removed_share"] == report.removed_share
    lines = scene.repair_lines()
    assert lines[0].startswith("anatomy: h (")
    assert "was repaired: kept" in lines[0]
    assert "in 1 shell" in lines[0]
    assert any("dropped open shells" in line for line in lines[1:])


def load_anatomy_text(models: str, tmp_path: Path, extra: str) -> AnatomyScene:
    """An anatomy section with ``extra`` keys (section level) and repair on."""
    from cosim_validation.anatomy import load_anatomy
    from cosim_validation.common.config import parse_config
    from test.anatomy.conftest import scene_yaml

    text = scene_yaml(models, repair=True).replace("  models:\n", extra + "  models:\n")
    return load_anatomy(parse_config(text, tmp_path / "case.yaml")["anatomy"])


def test_repair_max_loss_is_a_share(load_scene: Loader, tmp_path: Path) -> None:
    from cosim_validation.common.exceptions import ConfigError

    with pytest.raises(ConfigError, match=r"case\.yaml: anatomy\.models\[0\]\.repair_max_loss: expected a number <= 1"):
        load_scene("{name: t, role: target, builtin: heart, repair_max_loss: 5}")


def test_a_shell_wound_inward_outside_every_other_is_flagged(load_scene: Loader, tmp_path: Path) -> None:
    """Ray parity counts such a pocket as inside; its winding number is -1 (issue 15)."""
    body = trimesh.creation.box(extents=[0.05, 0.05, 0.05])
    pocket = trimesh.creation.box(extents=[0.01, 0.01, 0.01]).apply_translation([0.05, 0.0, 0.0])
    pocket.invert()
    mesh = trimesh.util.concatenate([body, pocket])
    (defect,) = mesh_defects(mesh, "m")
    assert defect.startswith("inverted shells: 1 shells wound inward that are not cavities of another shell")
    write_stl(tmp_path / "pocket.stl", mesh)
    with pytest.raises(MeshDefectError, match=r"pocket\.stl: .*inverted shells"):
        load_scene("{name: x, role: target, file: pocket.stl, unit: m}")
    model = load_scene("{name: x, role: target, file: pocket.stl, unit: m}", repair=True).model("x")
    assert model.repairs[0] == "turned inward-wound shells outward, 1 shell, 12 faces"
    assert model.volume_m3 == pytest.approx(0.05**3 + 0.01**3)


def test_a_cavity_inside_a_solid_is_a_valid_solid(load_scene: Loader, tmp_path: Path) -> None:
    body = trimesh.creation.box(extents=[0.05, 0.05, 0.05])
    cavity = trimesh.creation.box(extents=[0.01, 0.01, 0.01])
    cavity.invert()
    hollow = trimesh.util.concatenate([body, cavity])
    assert mesh_defects(hollow, "m") == []
    write_stl(tmp_path / "hollow.stl", hollow)
    model = load_scene("{name: x, role: target, file: hollow.stl, unit: m}").model("x")
    assert model.repair is None
    assert model.volume_m3 == pytest.approx(0.05**3 - 0.01**3)


def test_the_union_fills_the_cavity_it_encloses() -> None:
    """Six overlapping slabs make a hollow box: their union encloses a void, which the repair fills and reports."""
    slabs = []
    for axis in range(3):
        for side in (-1.0, 1.0):
            extents = np.full(3, 0.06)
            extents[axis] = 0.012
            offset = np.zeros(3)
            offset[axis] = side * 0.024
            slabs.append(trimesh.creation.box(extents=extents).apply_translation(offset))
    mesh = trimesh.util.concatenate(slabs)
    repaired, report = repair_mesh(mesh)
    assert mesh_defects(repaired, "m") == []
    assert float(repaired.volume) == pytest.approx(0.06**3)  # the void (36 mm)^3 is filled
    assert report.lines()[-1].startswith("filled cavities enclosed by the union, 1 shell, 12 faces (4.666e+04 mm^3")
    assert report.removed_m3 == 0.0


def test_mesh_check_and_mesh_repair_do_not_import_each_other() -> None:
    """Issue 22: the checks and the repair share anatomy/mesh_solid.py instead of importing each other."""
    folder = package_root() / "cosim_validation" / "anatomy"
    for module, other in (("mesh_check", "mesh_repair"), ("mesh_repair", "mesh_check")):
        tree = ast.parse((folder / f"{module}.py").read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert f"cosim_validation.anatomy.{other}" not in imported, module
