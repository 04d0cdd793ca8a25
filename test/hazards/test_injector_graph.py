"""The hazard_injector in a session graph: switched on in the YAML per robot, or by --filter; the driver moves."""

from __future__ import annotations

import pytest

from cosim_validation.common.config import package_root, parse_config
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.live.session.graph import GraphSpec, load_graph, parse_graph

TOPICS = ("command", "joint_states", "tip_pose", "marker", "reset")
RAW = {f"/cosim/physical/{t}": f"/cosim/physical/raw/{t}" for t in TOPICS}
INJECTOR = """
  - name: jump_injector
    executable: hazard_injector
    parameters: {config: config/needle_insertion.yaml, robot: physical, filters: ["hazards:sudden_jump"]}
"""


def _shipped_with(extra: str) -> GraphSpec:
    text = (package_root() / "config" / "digital_twin.yaml").read_text()
    return parse_graph(parse_config(text + extra, "graph.yaml"))


def test_an_injector_in_the_yaml_moves_its_robots_driver_under_raw() -> None:
    graph = _shipped_with(INJECTOR)
    driver = graph.node("physical_driver")
    assert dict(driver.remappings) == RAW
    assert graph.node("virtual_driver").remappings == ()
    injector = graph.node("jump_injector")
    assert injector.parameters["filters"] == ["hazards:sudden_jump"]
    assert graph.with_robot_filters("physical", ["offset:joint2=0.001"]).node("jump_injector").parameters[
        "filters"
    ] == ["hazards:sudden_jump", "offset:joint2=0.001"]


def test_filter_on_the_command_line_starts_a_hazard_injector() -> None:
    graph = load_graph(package_root() / "config" / "digital_twin.yaml")
    hazards = graph.with_robot_filters("physical", ["hazards:sudden_jump"])
    assert hazards.node("physical_hazard_injector").executable == "hazard_injector"
    assert dict(hazards.node("physical_driver").remappings) == RAW
    mixed = graph.with_robot_filters("virtual", ["hazards:sudden_jump", "offset:joint2=0.001"])
    assert mixed.node("virtual_proxy").executable == "robot_proxy"


def test_an_injector_without_a_driver_is_refused() -> None:
    text = "nodes:" + INJECTOR
    with pytest.raises(ConfigError, match="node 'jump_injector': no physical_driver node to stand in front of"):
        parse_graph(parse_config(text, "graph.yaml"))
