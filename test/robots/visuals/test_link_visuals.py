"""The URDF's link visuals are the shipped meshes, every engine still loads the URDF, and nothing else changed."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.model.self_collision import SelfCollision
from cosim_validation.robots.visuals import resolve_package_uri
from cosim_validation.robots.visuals.link_visuals import link_visuals, visual_path
from cosim_validation.robots.visuals.package_uri import with_file_paths
from cosim_validation.robots.visuals.stl_binary import read_stl

NEEDLE_M = 0.3


@pytest.fixture(scope="module")
def urdf(repo_root: Path) -> Path:
    return repo_root / "urdf" / "xmate_er3_pro.urdf"


def test_every_visual_is_a_shipped_mesh_made_from_the_urdf(urdf: Path, repo_root: Path) -> None:
    """The files are what link_visuals makes now (regenerate with scripts/make_meshes.py robot)."""
    uris = {
        link.get("name"): link.find("visual/geometry/mesh").get("filename")  # type: ignore[union-attr]
        for link in ET.parse(urdf).getroot().findall("link")
        if link.find("visual") is not None
    }
    made = link_visuals(urdf)
    assert sorted(uris) == sorted(v.link for v in made)
    for visual in made:
        assert uris[visual.link] == f"package://cosim_validation/{visual_path(visual.link)}"
        shipped = read_stl(resolve_package_uri(uris[visual.link], repo_root))
        np.testing.assert_array_equal(shipped, visual.triangles_m.astype(np.float32).astype(np.float64))


def test_a_visual_holds_its_link_body(urdf: Path) -> None:
    """Each mesh encloses the link's collision cylinder axis ends: the visual sits where the link is."""
    bodies = {
        link.get("name"): link.find("collision")
        for link in ET.parse(urdf).getroot().findall("link")
        if link.find("collision") is not None
    }
    for visual in link_visuals(urdf):
        cylinder = bodies[visual.link].find("geometry/cylinder")  # type: ignore[union-attr]
        centre = np.array([float(v) for v in bodies[visual.link].find("origin").get("xyz").split()])  # type: ignore[union-attr]
        lo, hi = visual.triangles_m.reshape(-1, 3).min(axis=0), visual.triangles_m.reshape(-1, 3).max(axis=0)
        assert np.all(lo <= centre + 1e-9)
        assert np.all(hi >= centre - 1e-9)
        assert hi[2] - lo[2] >= float(cylinder.get("length")) - 1e-6  # type: ignore[union-attr, arg-type]


def _without_visuals(urdf: Path, folder: Path) -> Path:
    copy = folder / urdf.name
    copy.write_text(re.sub(r"<visual>.*?</visual>", "", urdf.read_text(), flags=re.S))
    return copy


def test_kinematics_and_collisions_do_not_see_the_visuals(urdf: Path, tmp_path: Path) -> None:
    """Pinocchio FK and the MuJoCo self-collision check give identical results with and without the visuals."""
    bare = _without_visuals(urdf, tmp_path)
    with_meshes, without = Kinematics.from_urdf(urdf, NEEDLE_M), Kinematics.from_urdf(bare, NEEDLE_M)
    rng = np.random.default_rng(3)
    q = rng.uniform(with_meshes.q_lower, with_meshes.q_upper, size=(400, 7))
    for a, b in zip(with_meshes.record_arrays(q), without.record_arrays(q), strict=True):
        np.testing.assert_array_equal(a, b)
    hits = SelfCollision(with_meshes).in_collision(q)
    np.testing.assert_array_equal(hits, SelfCollision(without).in_collision(q))
    assert 0 < hits.sum() < len(q)  # the comparison covers both answers


def test_mujoco_drops_the_visuals_and_pybullet_finds_the_files(urdf: Path, tmp_path: Path) -> None:
    import mujoco
    import pybullet as p

    model = mujoco.MjSpec.from_file(str(urdf)).compile()
    bare = mujoco.MjSpec.from_file(str(_without_visuals(urdf, tmp_path))).compile()
    assert model.nmesh == 0
    np.testing.assert_array_equal(model.geom_size, bare.geom_size)
    resolved = tmp_path / "resolved.urdf"
    resolved.write_text(with_file_paths(urdf.read_text()))
    client = p.connect(p.DIRECT)
    try:
        body = p.loadURDF(str(resolved), useFixedBase=True, physicsClientId=client)
        files = {Path(row[4].decode()).name for row in p.getVisualShapeData(body, physicsClientId=client)}
    finally:
        p.disconnect(client)
    assert files == {Path(visual_path(v.link)).name for v in link_visuals(urdf)}
