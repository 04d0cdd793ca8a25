"""Every node declares its parameters by type and gets them as one checked struct; bad values are one error.

The bad-config fixtures (``bad_params/``, ROS params files for the controller) are kept as negative tests, as
generate_parameter_library's example keeps its own: a wrong type, an out-of-range value, an unknown name and a
bad choice each stop the node with one ``error:`` line naming node and parameter.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.live.nodes.node_runtime import declare_parameters
from cosim_validation.live.session.graph import load_graph
from cosim_validation.live.session.node_parameters import (
    NODE_PARAMETERS,
    ControllerParams,
    MonitorParams,
    SupervisorParams,
    TestGeneratorParams,
    parameters_of,
)
from cosim_validation.live.session.parameter_struct import NodeParameterError
from cosim_validation.live.session.session_plan import node_launches

pytestmark = pytest.mark.ros

TYPE_NAMES = {bool: "BOOL", int: "INTEGER", float: "DOUBLE", str: "STRING", list: "STRING_ARRAY"}
BAD_PARAMS = Path(__file__).parent / "bad_params"
BAD = {
    "wrong_type.yaml": "parameter 'stale_timeout_s' of node 'controller': expected a double, got integer 3",
    "out_of_range.yaml": "parameter 'stale_timeout_s' of node 'controller': expected > 0 s, got -1.0",
    "unknown.yaml": "parameter 'stale_timeout' of node 'controller': unknown parameter (did you mean "
    "'stale_timeout_s'?); declared: config, robots,",
    "bad_choice.yaml": "parameter 'robots' of node 'controller': expected one of: virtual, physical; got 'phyiscal'",
}


def _node(context: Any, name: str, args: list[str]) -> Any:
    from rclpy.node import Node

    return Node(name, context=context, cli_args=["--ros-args", *args])


@pytest.mark.parametrize("executable", sorted(NODE_PARAMETERS))
def test_defaults_have_their_declared_type(rclpy_context: Any, executable: str) -> None:
    required = [
        a for s in parameters_of(executable) if s.rule.not_empty and not s.default for a in ("-p", f"{s.name}:=m")
    ]
    node = _node(rclpy_context, f"typed_{executable}", required)
    try:
        params = declare_parameters(node, NODE_PARAMETERS[executable])
        for spec in parameters_of(executable):
            expected = "m" if spec.rule.not_empty and not spec.default else spec.default
            assert getattr(params, spec.name) == (tuple(expected) if spec.kind is list else expected)
            if spec.default is None:  # declared with its type, unset: the node reads the configuration
                assert node.has_parameter(spec.name)
                continue
            assert node.get_parameter(spec.name).type_.name == TYPE_NAMES[spec.kind], spec.name
    finally:
        node.destroy_node()


def test_the_graphs_params_files_load_with_lists_everywhere(
    rclpy_context: Any, repo_root: Path, tmp_path: Path
) -> None:
    """The shipped graph plus ``robots: [virtual, physical]`` for the test generator (issue: BYTE_ARRAY)."""
    text = (repo_root / "config" / "digital_twin.yaml").read_text()
    text = text.replace(
        'results: "{run_dir}/results.sqlite"}', 'results: "{run_dir}/results.sqlite",\n robots: [virtual, physical]}'
    )
    graph_file = tmp_path / "graph.yaml"
    graph_file.write_text(text)
    launches = node_launches(load_graph(graph_file), tmp_path, tmp_path / "suite.parquet", 2)
    assert next(n for n in launches if n.name == "test_generator").parameters["robots"] == ["virtual", "physical"]
    for launch in launches:
        params_file = tmp_path / f"{launch.name}.yaml"
        params_file.write_text(launch.params_file_content())
        node = _node(rclpy_context, launch.name, ["--params-file", str(params_file)])
        try:
            params = declare_parameters(node, NODE_PARAMETERS[launch.executable])
        finally:
            node.destroy_node()
        for key, value in launch.parameters.items():
            if key != "use_sim_time":
                assert getattr(params, key) == (tuple(value) if isinstance(value, list) else value), (launch.name, key)


@pytest.mark.parametrize("fixture", sorted(BAD))
def test_a_bad_params_file_is_one_error_naming_node_and_parameter(rclpy_context: Any, fixture: str) -> None:
    node = _node(rclpy_context, "controller", ["--params-file", str(BAD_PARAMS / fixture)])
    try:
        with pytest.raises(NodeParameterError, match=re.escape(BAD[fixture])):
            declare_parameters(node, ControllerParams)
    finally:
        node.destroy_node()


@pytest.mark.slow
@pytest.mark.parametrize("fixture", ["wrong_type.yaml", "unknown.yaml"])
def test_the_controller_stops_with_one_error_line(node_env: dict[str, str], tmp_path: Path, fixture: str) -> None:
    """The node's process: exit 1, one ``error:`` line, no traceback (checked before anything is loaded)."""
    command = [sys.executable, "-m", "cosim_validation.live.nodes.controller", "--ros-args"]
    done = subprocess.run(
        [*command, "--params-file", str(BAD_PARAMS / fixture)],
        env=node_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith(f"error: {BAD[fixture]}")
    assert "Traceback" not in done.stderr + done.stdout


def test_a_value_of_the_wrong_type_is_one_error(rclpy_context: Any) -> None:
    node = _node(rclpy_context, "wrong", ["-p", "server_timeout_s:=3", "-p", "robots:=[virtual]"])
    try:
        with pytest.raises(
            NodeParameterError,
            match=re.escape(
                "parameter 'server_timeout_s' of node 'wrong' (test_generator): expected a double, got integer 3"
            ),
        ):
            declare_parameters(node, TestGeneratorParams)
    finally:
        node.destroy_node()


def test_the_parameters_of_a_composed_node_are_no_unknown_ones(rclpy_context: Any) -> None:
    """Process-wide overrides reach every node of the process: the controller and its supervisor node accept each
    other's, a node of another process does not."""
    for name, params, given in (
        ("controller", ControllerParams, "teleoperation_stale_s:=1.0"),
        ("supervisor", SupervisorParams, "stale_timeout_s:=2.0"),
    ):
        node = _node(rclpy_context, name, ["-p", given])
        try:
            declare_parameters(node, params)
        finally:
            node.destroy_node()
    node = _node(rclpy_context, "monitor", ["-p", "teleoperation_stale_s:=1.0"])
    try:
        with pytest.raises(NodeParameterError, match="parameter 'teleoperation_stale_s' of node 'monitor': unknown"):
            declare_parameters(node, MonitorParams)
    finally:
        node.destroy_node()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1", "expected a double, got integer 1"),
        ("-0.5", "expected > 0 s, got -0.5"),
        ("0.0", "expected > 0 s, got 0.0"),
    ],
)
def test_the_supervisor_nodes_stale_time_is_checked(rclpy_context: Any, value: str, message: str) -> None:
    """The supervisor node's own parameter: a wrong type or a non-positive time is one error naming it (checked
    before the node touches the controller's supervisor, which is never reached here)."""
    from cosim_validation.live.nodes.supervisor_node import SupervisorNode

    args = ["--ros-args", "-p", f"teleoperation_stale_s:={value}"]
    expected = f"parameter 'teleoperation_stale_s' of node 'supervisor': {message}"
    with pytest.raises(NodeParameterError, match=re.escape(expected)):
        SupervisorNode(None, rclpy_context, args)  # type: ignore[arg-type]
