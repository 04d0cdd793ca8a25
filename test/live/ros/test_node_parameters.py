"""Every node parameter is declared with its type: a params file or launch may give any list, never BYTE_ARRAY."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cosim_validation.live.nodes.node_runtime import NodeParameterError, declare_parameters
from cosim_validation.live.session.graph import load_graph
from cosim_validation.live.session.node_parameters import NODE_PARAMETERS, parameters_of
from cosim_validation.live.session.session_plan import node_launches

pytestmark = pytest.mark.ros

TYPE_NAMES = {bool: "BOOL", int: "INTEGER", float: "DOUBLE", str: "STRING", list: "STRING_ARRAY"}


def _node(context: Any, name: str, args: list[str]) -> Any:
    from rclpy.node import Node

    return Node(name, context=context, cli_args=["--ros-args", *args])


@pytest.mark.parametrize("executable", sorted(NODE_PARAMETERS))
def test_defaults_have_their_declared_type(rclpy_context: Any, executable: str) -> None:
    node = _node(rclpy_context, f"typed_{executable}", [])
    try:
        values = declare_parameters(node, executable)
        for spec in parameters_of(executable):
            assert values[spec.name] == spec.default
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
            values = declare_parameters(node, launch.executable)
        finally:
            node.destroy_node()
        for key, value in launch.parameters.items():
            if key != "use_sim_time":
                assert values[key] == value, (launch.name, key)


def test_a_value_of_the_wrong_type_is_one_error(rclpy_context: Any) -> None:
    node = _node(rclpy_context, "wrong", ["-p", "server_timeout_s:=3", "-p", "robots:=[virtual]"])
    try:
        with pytest.raises(
            NodeParameterError, match="parameter 'server_timeout_s' of test_generator: expected a double, got integer 3"
        ):
            declare_parameters(node, "test_generator")
    finally:
        node.destroy_node()


@pytest.mark.parametrize(
    ("value", "message"),
    [("1", "expected a double"), ("-0.5", "expected > 0 s, got -0.5"), ("0.0", "expected > 0 s, got 0.0")],
)
def test_the_supervisor_nodes_stale_time_is_checked(rclpy_context: Any, value: str, message: str) -> None:
    """The supervisor node's own parameter: a wrong type or a non-positive time is one error naming it (checked
    before the node touches the controller's supervisor, which is never reached here)."""
    from cosim_validation.live.nodes.supervisor_node import SupervisorNode

    args = ["--ros-args", "-p", f"teleoperation_stale_s:={value}"]
    with pytest.raises(NodeParameterError, match=f"parameter 'teleoperation_stale_s' of supervisor: {message}"):
        SupervisorNode(None, rclpy_context, args)  # type: ignore[arg-type]
