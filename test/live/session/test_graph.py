"""The graph YAML is checked against the nodes' declared parameters before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cosim_validation.common.config import parse_config
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.live.session.graph import parse_graph
from cosim_validation.live.session.session_plan import node_launches

GOOD = """
session: {use_sim_time: true, ready_timeout_s: 30}
nodes:
  - name: recorder
    executable: recorder
    parameters: {output: "{run_dir}/session.mcap", extra_topics: [/clock]}
    remappings: [{from: /a, to: /b}]
"""


def test_parse_fill_and_params_file(tmp_path: object) -> None:
    graph = parse_graph(parse_config(GOOD, "g.yaml"))
    assert graph.settings.ready_timeout_s == 30
    rec = graph.resolved({"run_dir": "/tmp/run"}).node("recorder")
    assert rec.parameters["output"] == "/tmp/run/session.mcap"
    assert rec.parameters["discovery_period_s"] == 0.2  # declared default
    assert rec.remappings == (("/a", "/b"),)
    (launch,) = node_launches(graph, "/tmp/run", "/s.parquet", 2)
    content = yaml.safe_load(launch.params_file_content())
    assert content == {
        "recorder": {
            "ros__parameters": {
                "use_sim_time": True,
                "output": "/tmp/run/session.mcap",
                "topic_prefixes": ["/cosim"],
                "extra_topics": ["/clock"],
                "discovery_period_s": 0.2,
            }
        }
    }
    assert launch.ros_arguments(Path("/p.yaml")) == (
        "-r",
        "recorder:__node:=recorder",
        "--params-file",
        "/p.yaml",
        "-r",
        "/a:=/b",
    )


GENERATOR = """
nodes:
  - name: test_generator
    executable: test_generator
    parameters: {suite: "{suite}", cases: "{cases}"ROBOTS}
"""


def test_an_empty_list_default_is_left_out_and_a_given_list_kept() -> None:
    """launch_ros refuses empty lists and rclpy would type them BYTE_ARRAY: the node's typed default applies."""
    plain = parse_graph(parse_config(GENERATOR.replace("ROBOTS", ""), "g.yaml")).node("test_generator")
    assert "robots" not in plain.parameters  # declared default []
    assert plain.parameters["selection"] == "spread"  # other defaults are filled in
    explicit_empty = parse_graph(parse_config(GENERATOR.replace("ROBOTS", ", robots: []"), "g.yaml"))
    assert "robots" not in explicit_empty.node("test_generator").parameters
    given = parse_graph(parse_config(GENERATOR.replace("ROBOTS", ", robots: [virtual, physical]"), "g.yaml"))
    assert given.node("test_generator").parameters["robots"] == ["virtual", "physical"]


def test_an_empty_list_for_a_non_empty_default_is_an_error() -> None:
    text = "nodes:\n  - {name: monitor, executable: monitor, parameters: {robots: []}}\n"
    with pytest.raises(ConfigError, match=r"nodes\[0\].parameters.robots: expected a non-empty list"):
        parse_graph(parse_config(text, "g.yaml"))


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        (GOOD.replace("output:", "outptu:"), ConfigError, r"g.yaml: nodes\[0\].parameters.outptu: unknown key"),
        (
            GOOD.replace("extra_topics: [/clock]", "extra_topics: 3"),
            ConfigError,
            r"nodes\[0\].parameters.extra_topics: expected a list",
        ),
        (
            GOOD.replace("executable: recorder", "executable: recordr"),
            ConfigError,
            r"nodes\[0\].executable: expected one of .*'recorder'",
        ),
        (GOOD + GOOD.split("nodes:")[1], ConfigError, "repeated: recorder"),
        ("nodes: []", ConfigError, "expected at least one node"),
        # rcl refused these only when the node started: a traceback in its log, the other nodes started for nothing
        (GOOD.replace("name: recorder", "name: 'rec order'"), ConfigError, r"nodes\[0\].name: expected a ROS name"),
        (GOOD.replace("name: recorder", "name: 2recorder"), ConfigError, r"nodes\[0\].name: expected a ROS name"),
        (GOOD.replace("name: recorder", "name: rec/order"), ConfigError, r"nodes\[0\].name: expected a node name"),
        (GOOD.replace("to: /b", "to: '/b c'"), ConfigError, r"nodes\[0\].remappings\[0\].to: expected a ROS name"),
        (GOOD.replace("from: /a", "from: /a/"), ConfigError, r"remappings\[0\].from: expected a ROS name"),
        (
            GOOD.replace("ready_timeout_s: 30", "ready_timeout_s: 0"),
            ConfigError,
            r"session.ready_timeout_s: expected a number > 0",
        ),
    ],
)
def test_bad_graphs(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        parse_graph(parse_config(text, "g.yaml"))


def test_unknown_node_lookup() -> None:
    graph = parse_graph(parse_config(GOOD, "g.yaml"))
    with pytest.raises(ConfigError, match="no node 'monitor'; nodes: recorder"):
        graph.node("monitor")


def test_shipped_graph_and_typed_placeholders(repo_root: object) -> None:
    from pathlib import Path

    from cosim_validation.live.session.graph import load_graph

    graph = load_graph(Path(str(repo_root)) / "config" / "digital_twin.yaml")
    assert [n.executable for n in graph.nodes] == [
        "recorder",
        "monitor",
        "markers",
        "virtual_driver",
        "physical_driver",
        "controller",
        "test_generator",
    ]
    assert [n.name for n in graph.nodes if n.console] == ["test_generator"]
    resolved = graph.resolved({"run_dir": "/r", "suite": "/s.parquet", "cases": "3", "package": "/p"})
    generator = resolved.node("test_generator").parameters
    assert generator["cases"] == 3
    assert generator["results"] == "/r/results.sqlite"
    with pytest.raises(ConfigError, match=r"test_generator.parameters.cases: expected int, got 'x'"):
        graph.resolved({"run_dir": "/r", "suite": "", "cases": "x", "package": "/p"})


def test_a_parameter_not_in_the_graph_has_the_default_its_node_declares() -> None:
    from cosim_validation.live.session.graph import NodeSpec, driver_robot

    injector = NodeSpec("hazards", "hazard_injector", {"config": "c.yaml"})
    proxy = NodeSpec("proxy", "robot_proxy", {"robot": "physical"})
    assert (injector.value("robot"), injector.value("config")) == ("physical", "c.yaml")
    assert proxy.value("robot") == "physical"
    assert NodeSpec("m", "monitor", {}).value("config") == "config/needle_insertion.yaml"
    assert driver_robot(NodeSpec("arm", "crtk_driver", {})) == "physical"
    with pytest.raises(KeyError, match="monitor has no parameter 'robot'"):
        NodeSpec("m", "monitor", {}).value("robot")
