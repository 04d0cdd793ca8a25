"""launch/digital_twin.launch.py builds the nodes, parameters and remappings ``cosim session`` starts.

``launch`` and ``launch_ros`` are not installable here, so the test gives the launch file recording stand-ins
for the launch classes it uses and compares what it asks ``launch_ros.actions.Node`` to start with the
processes and params files of ``cosim session`` (``session_runner.process_specs``) for the same graph, run
directory and suite. The launch file was also run by hand under the real launch 3.7 / launch_ros 0.28
(README, "With a full ROS 2 install").
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from cosim_validation.live.session.graph import load_graph
from cosim_validation.live.session.launch_values import launch_value_problem
from cosim_validation.live.session.session_plan import node_launches
from cosim_validation.live.session.session_runner import process_specs


class _Action:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs


class _Config:
    values: ClassVar[dict[str, str]] = {}

    def __init__(self, name: str) -> None:
        self.name = name

    def perform(self, context: Any) -> str:
        return self.values[self.name]


class _Context:
    is_shutdown = False


class _Exit:
    def __init__(self, returncode: int) -> None:
        self.returncode = returncode


@pytest.fixture
def launch_file(monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> Any:
    modules = {
        "launch": {"LaunchContext": object, "LaunchDescription": _Action},
        "launch.actions": dict.fromkeys(
            ("DeclareLaunchArgument", "LogInfo", "OpaqueFunction", "Shutdown", "TimerAction"), _Action
        ),
        "launch.substitutions": {"LaunchConfiguration": _Config},
        "launch_ros": {},
        "launch_ros.actions": {"Node": _Action},
    }
    for name, attrs in modules.items():
        module = types.ModuleType(name)
        for key, value in attrs.items():
            setattr(module, key, value)
        monkeypatch.setitem(sys.modules, name, module)
    spec = importlib.util.spec_from_file_location(
        "digital_twin_launch", repo_root / "launch" / "digital_twin.launch.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    for lease in module._LEASES:
        lease.release()


GRAPH = """
session: {use_sim_time: true, ready_timeout_s: 30, shutdown_grace_s: 2}
nodes:
  - {name: rec, executable: recorder, parameters: {output: '{run_dir}/session.mcap'},
     remappings: [{from: /a, to: /b}]}
  - {name: markers, executable: markers, parameters: {anatomy_markers: mesh}}
  - {name: virtual_driver, executable: virtual_driver, required: false}
  - {name: gen, executable: test_generator, console: true,
     parameters: {suite: '{suite}', cases: '{cases}', results: '{run_dir}/results.sqlite', robots: [virtual]}}
"""


def _session(launch_file: Any, graph_file: Path, run_dir: Path, suite: str) -> list[Any]:
    description = launch_file.generate_launch_description()
    declared = [a.args[0] for a in description.args[0] if "function" not in a.kwargs]
    assert declared == ["graph", "run_dir", "suite", "cases", "domain_id", "discovery_range"]
    (opaque,) = [a for a in description.args[0] if "function" in a.kwargs]
    _Config.values = {
        "graph": str(graph_file),
        "run_dir": str(run_dir),
        "suite": suite,
        "cases": "3",
        "domain_id": "auto",
        "discovery_range": "localhost",
    }
    return list(opaque.kwargs["function"](_Context()))


@pytest.mark.parametrize("graph_name", ["small", "shipped"])
def test_launch_starts_what_cosim_session_starts(
    launch_file: Any, repo_root: Path, tmp_path: Path, graph_name: str
) -> None:
    graph_file = repo_root / "config" / "digital_twin.yaml"
    if graph_name == "small":
        graph_file = tmp_path / "graph.yaml"
        graph_file.write_text(GRAPH)
    run_dir, suite = tmp_path / "run", tmp_path / "s.parquet"
    actions = _session(launch_file, graph_file, run_dir, str(suite))
    nodes = [a for a in actions if "executable" in a.kwargs]
    (start_console,) = [a for a in actions if "function" in a.kwargs]
    waiting = start_console.kwargs["function"](_Context())  # nothing is ready yet: poll again
    assert [sorted(w.kwargs) for w in waiting] == [["actions", "period"]]
    for node in nodes:
        (run_dir / ".ready" / node.kwargs["name"]).write_text("1")
    (console,) = start_console.kwargs["function"](_Context())
    nodes.append(console)

    # what cosim session starts for the same graph, run directory and suite
    graph = load_graph(graph_file)
    (run_dir / "params").mkdir(parents=True, exist_ok=True)
    specs = process_specs(node_launches(graph, run_dir.resolve(), suite, 3), run_dir, console=False)
    assert [n.kwargs["name"] for n in nodes] == [s.name for s in specs]
    for node, spec in zip(nodes, specs, strict=True):
        args = list(spec.ros_args)
        params_file = Path(args[args.index("--params-file") + 1])
        assert node.kwargs["package"] == "cosim_validation"
        assert node.kwargs["executable"] == spec.executable
        (parameters,) = node.kwargs["parameters"]
        assert parameters == yaml.safe_load(params_file.read_text())[spec.name]["ros__parameters"]
        remaps = [tuple(args[i + 1].split(":=")) for i, a in enumerate(args) if a == "-r"][1:]  # after __node
        assert node.kwargs["remappings"] == remaps
        # every value is one launch_ros passes to the node (no empty list, lists of one type)
        assert {k: launch_value_problem(v) for k, v in parameters.items() if launch_value_problem(v)} == {}
        env = node.kwargs["env"]
        assert env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
        assert int(env["ROS_DOMAIN_ID"]) == launch_file._LEASES[-1].scope.domain_id
        assert node.kwargs["sigterm_timeout"] == str(graph.settings.shutdown_grace_s)
    if graph_name == "small":
        assert nodes[0].kwargs["remappings"] == [("/a", "/b")]
        assert nodes[-1].kwargs["parameters"][0]["robots"] == ["virtual"]


def test_exits_end_the_launch_as_they_end_cosim_session(launch_file: Any, tmp_path: Path) -> None:
    graph_file = tmp_path / "graph.yaml"
    graph_file.write_text(GRAPH)
    actions = _session(launch_file, graph_file, tmp_path / "run", str(tmp_path / "s.parquet"))
    by_name = {a.kwargs["name"]: a for a in actions if "executable" in a.kwargs}
    (shutdown,) = by_name["rec"].kwargs["on_exit"](_Exit(1), _Context())
    assert shutdown.kwargs["reason"] == "required node rec exited with code 1"
    stopping = _Context()
    stopping.is_shutdown = True
    assert by_name["rec"].kwargs["on_exit"](_Exit(0), stopping) == []  # stopped with the others
    assert by_name["virtual_driver"].kwargs["on_exit"] is None  # not required: the session goes on

    for name in by_name:
        (tmp_path / "run" / ".ready" / name).write_text("1")
    (start_console,) = [a for a in actions if "function" in a.kwargs]
    (console,) = start_console.kwargs["function"](_Context())
    (failed,) = console.kwargs["on_exit"](_Exit(1), _Context())
    assert failed.kwargs["reason"] == "gen exited with code 1"
    launch_file.QUIET_S = 0.0
    (drain,) = console.kwargs["on_exit"](_Exit(0), _Context())  # done: let the recorder drain, then shut down
    progress = tmp_path / "run" / ".ready" / "rec.progress"
    progress.write_text("10 1")  # 10 messages written, at the recorder's first timer round
    first = drain.kwargs["function"](_Context())
    assert [sorted(a.kwargs) for a in first] == [["actions", "period"]]
    progress.write_text("10 3")  # the count stood, but the recorder's timer ran only twice: maybe starved
    (again,) = first[0].kwargs["actions"][0].kwargs["function"](_Context())
    assert sorted(again.kwargs) == ["actions", "period"]
    progress.write_text("10 6")  # five rounds of its timer without a message: drained
    (done,) = again.kwargs["actions"][0].kwargs["function"](_Context())
    assert done.kwargs["reason"] == "gen finished: all cases run"
    exited = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / "run" / ".ready" / "rec").write_text(exited.stdout.strip())  # a recorder that is gone
    (drain,) = console.kwargs["on_exit"](_Exit(0), _Context())
    progress.write_text("10 6")
    (done,) = drain.kwargs["function"](_Context())  # its rounds never go on: not waited for
    assert done.kwargs["reason"] == "gen finished: all cases run"


def test_nodes_never_ready_end_the_launch(launch_file: Any, tmp_path: Path) -> None:
    graph_file = tmp_path / "graph.yaml"
    graph_file.write_text(GRAPH.replace("ready_timeout_s: 30", "ready_timeout_s: 0.001"))
    actions = _session(launch_file, graph_file, tmp_path / "run", str(tmp_path / "s.parquet"))
    (start_console,) = [a for a in actions if "function" in a.kwargs]
    time.sleep(0.01)
    (shutdown,) = start_console.kwargs["function"](_Context())
    assert shutdown.kwargs["reason"] == "nodes not ready after 0 s: rec, markers, virtual_driver"


def test_no_suite_makes_the_default_suite(launch_file: Any, repo_root: Path, tmp_path: Path) -> None:
    from cosim_validation.testgen.suite import Suite

    run_dir = tmp_path / "run"
    actions = _session(launch_file, repo_root / "config" / "digital_twin.yaml", run_dir, "")
    notes = [a.kwargs["msg"] for a in actions if "msg" in a.kwargs]
    assert notes[0] == f"suite: 633 grid cases (20 mm, 1 per cube) -> {run_dir.resolve() / 'suite.parquet'}"
    assert len(Suite.read(run_dir / "suite.parquet")) == 633
    for name in ("recorder", "monitor", "markers", "virtual_driver", "physical_driver", "controller"):
        (run_dir / ".ready" / name).write_text("1")
    (start_console,) = [a for a in actions if "function" in a.kwargs]
    (generator,) = start_console.kwargs["function"](_Context())
    assert generator.kwargs["parameters"][0]["suite"] == str(run_dir.resolve() / "suite.parquet")


def test_bad_arguments_are_errors(launch_file: Any, repo_root: Path, tmp_path: Path) -> None:
    from cosim_validation.common.exceptions import CosimError

    _Config.values = {}
    description = launch_file.generate_launch_description()
    (opaque,) = [a for a in description.args[0] if "function" in a.kwargs]
    base = {
        "graph": str(repo_root / "config" / "digital_twin.yaml"),
        "run_dir": str(tmp_path / "r"),
        "suite": "s.parquet",
        "cases": "3",
        "domain_id": "auto",
        "discovery_range": "localhost",
    }
    for key, value, message in (
        ("cases", "three", r"launch argument cases:='three': expected an integer"),
        ("domain_id", "999", r"--domain-id 999: expected 0..232"),
        ("discovery_range", "lan", r"discovery range 'lan': expected one of"),
    ):
        _Config.values = {**base, key: value, "run_dir": str(tmp_path / key)}
        with pytest.raises(CosimError, match=message):
            opaque.kwargs["function"](_Context())
