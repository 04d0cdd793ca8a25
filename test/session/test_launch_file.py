"""launch/digital_twin.launch.py builds the same nodes, parameters and remappings as ``cosim session``.

``launch`` and ``launch_ros`` are not installable here, so the test gives the launch file small recording
stand-ins for the five launch classes it uses and checks what it asks them to build.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from cosim_validation.session.graph import load_graph, ros_arguments


class _Recorder:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs


class _Config:
    values: ClassVar[dict[str, str]] = {}

    def __init__(self, name: str) -> None:
        self.name = name

    def perform(self, context: Any) -> str:
        return self.values[self.name]


def _install_fake_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    modules = {
        "launch": {"LaunchContext": object, "LaunchDescription": _Recorder},
        "launch.actions": {"DeclareLaunchArgument": _Recorder, "OpaqueFunction": _Recorder},
        "launch.substitutions": {"LaunchConfiguration": _Config},
        "launch_ros": {},
        "launch_ros.actions": {"Node": _Recorder},
    }
    for name, attrs in modules.items():
        module = types.ModuleType(name)
        for key, value in attrs.items():
            setattr(module, key, value)
        monkeypatch.setitem(sys.modules, name, module)


def test_launch_file_builds_the_session_graph(monkeypatch: pytest.MonkeyPatch, repo_root: Path, tmp_path: Path) -> None:
    _install_fake_launch(monkeypatch)
    graph_file = tmp_path / "graph.yaml"
    graph_file.write_text(
        "session: {use_sim_time: true}\n"
        "nodes:\n"
        "  - {name: rec, executable: recorder, parameters: {output: '{run_dir}/session.mcap'},\n"
        "     remappings: [{from: /a, to: /b}]}\n"
        "  - {name: markers, executable: markers}\n"
    )
    spec = importlib.util.spec_from_file_location(
        "digital_twin_launch", repo_root / "launch" / "digital_twin.launch.py"
    )
    assert spec is not None
    assert spec.loader is not None
    launch_file = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(launch_file)
    description = launch_file.generate_launch_description()
    declared = [a.args[0] for a in description.args[0] if isinstance(a, _Recorder) and "function" not in a.kwargs]
    assert declared == ["graph", "run_dir", "suite", "cases"]
    (opaque,) = [a for a in description.args[0] if "function" in a.kwargs]
    _Config.values = {"graph": str(graph_file), "run_dir": str(tmp_path / "run"), "suite": "s.parquet", "cases": "3"}
    nodes = opaque.kwargs["function"](None)
    graph = load_graph(graph_file).resolved({"run_dir": str(tmp_path / "run")})
    assert [n.kwargs["name"] for n in nodes] == ["rec", "markers"]
    for node, expected in zip(nodes, graph.nodes, strict=True):
        assert node.kwargs["package"] == "cosim_validation"
        assert node.kwargs["executable"] == expected.executable
        assert node.kwargs["parameters"] == [{"use_sim_time": True, **expected.parameters}]
        assert node.kwargs["remappings"] == list(expected.remappings)
    assert nodes[0].kwargs["parameters"][0]["output"] == f"{tmp_path / 'run'}/session.mcap"
    # cosim session passes the same remappings on the command line
    assert ros_arguments(graph.nodes[0], tmp_path / "p.yaml")[-2:] == ("-r", "/a:=/b")
