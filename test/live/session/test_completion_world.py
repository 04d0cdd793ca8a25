"""The bag check's monitor world, built in a thread during the session, is the one built in the main thread."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cosim_validation.common.config import resolve_resource
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.live.session.completion_world import WorldInBackground
from cosim_validation.live.session.graph import graph_inputs, load_graph
from cosim_validation.runs.run_inputs import capture_inputs, run_monitor_world


def test_the_world_equals_the_main_threads_and_its_warnings_come_on_result(tmp_path: Path) -> None:
    inputs = graph_inputs(load_graph(resolve_resource("config/digital_twin.yaml")))
    capture_inputs(tmp_path, inputs)
    built = WorldInBackground(tmp_path, inputs.get("config"), inputs.get("properties"))
    said: list[str] = []
    world = built.result(said.append)
    direct = run_monitor_world(tmp_path, inputs.get("config"), inputs.get("properties"), said.append)
    assert said == []  # the run directory has its copies
    assert [p.name for p in world.properties.properties] == [p.name for p in direct.properties.properties]
    assert [k.name for k in world.properties.kpis] == [k.name for k in direct.properties.kpis]
    assert world.properties.constants == direct.properties.constants
    assert len(world.obstacles) == len(direct.obstacles) > 0
    assert world.repair_lines == direct.repair_lines
    # the thread was not the main one, and it has ended
    assert not [t for t in threading.enumerate() if t.name == "bag-check-world"]

    empty = tmp_path / "empty"
    empty.mkdir()
    fallback = WorldInBackground(empty, inputs.get("config"), inputs.get("properties"))
    assert fallback.result(said.append) is not None
    assert len(said) == 2  # told in the caller's thread
    assert all("no copy of the run's" in line for line in said)


def test_a_failure_to_build_is_raised_by_result(tmp_path: Path) -> None:
    built = WorldInBackground(tmp_path, tmp_path / "missing.yaml", None)
    with pytest.raises(ConfigError, match=r"missing\.yaml"):
        built.result(lambda _line: None)


def test_a_moved_run_reads_its_property_copy_not_the_configurations_relative_path(tmp_path: Path) -> None:
    """The configuration names its properties relative to its own folder; once the run directory has moved (copied
    deeper, to another machine) that folder is not where the run's manifest says, and the replay of a moved session
    failed with 'property file not found'. The run's own copy is read instead."""
    import shutil

    from cosim_validation.common.config import package_root

    project = tmp_path / "project"
    for name in ("config", "urdf", "meshes"):  # the configuration and what it names, outside the package
        shutil.copytree(package_root() / name, project / name, ignore=shutil.ignore_patterns("anatomy"))
    run = tmp_path / "runs" / "run"
    capture_inputs(
        run,
        {"config": project / "config" / "needle_insertion.yaml"}
        | {"properties": project / "config" / "properties.yaml"},
    )
    moved = tmp_path / "elsewhere" / "deeper" / "run"
    shutil.copytree(run, moved)
    shutil.rmtree(project / "config")  # the original configuration folder is gone from where the manifest says
    said: list[str] = []
    world = run_monitor_world(moved, None, None, said.append)
    assert world is not None
    assert said == []
    assert [p.name for p in world.properties.properties]
