"""A suite's id depends on content only: the same configuration (with its mesh beside it) copied into two folders
gives the same suite and id, and the suite stores no absolute path of the machine that made it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import trimesh
import yaml

from cosim_validation.anatomy import builtin_mesh
from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root
from cosim_validation.testgen.suite import METADATA_KEY, Suite


def _clone(folder: Path) -> Path:
    """The shipped configuration in ``folder``, its heart read from ``meshes/heart.stl`` beside it."""
    (folder / "meshes").mkdir(parents=True)
    heart = builtin_mesh("heart")
    trimesh.Trimesh(heart.vertices_m, heart.faces, process=False).export(folder / "meshes" / "heart.stl")
    config = yaml.safe_load((package_root() / "config" / "needle_insertion.yaml").read_text())
    model = next(m for m in config["anatomy"]["models"] if m["name"] == "heart")
    model.pop("builtin")
    model |= {"file": "meshes/heart.stl", "unit": "m"}
    shutil.copyfile(package_root() / "config" / "properties.yaml", folder / "properties.yaml")
    path = folder / "case.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_same_configuration_in_two_clones_gives_one_id(tmp_path: Path) -> None:
    ids, metadata = [], []
    for clone in ("first_clone", "second/clone"):
        config = _clone(tmp_path / clone)
        out = tmp_path / clone / "suite.parquet"
        argv = ["testgen", "--config", str(config), "--method", "random", "--count", "5", "--seed", "3"]
        assert main([*argv, "--granularity-mm", "60", "-o", str(out)]) == 0
        ids.append(Suite.read(out).suite_id)
        metadata.append(pq.read_schema(out).metadata[METADATA_KEY].decode())
    assert ids[0] == ids[1]
    for text in metadata:
        assert str(tmp_path) not in text, "the suite stores an absolute path of this machine"
    stored = json.loads(metadata[0])
    assert stored["config"]["file"] == "case.yaml"
    assert {m["name"]: m["source"] for m in stored["models"]}["heart"] == "heart.stl"
