"""Proxies in the graph: an ``error_injector`` (or ``robot_proxy``) node in the YAML moves its robot's driver under
``raw/``; ``--filter`` adds to it; two proxies for one robot, or one without a driver, are refused."""

from __future__ import annotations

import pytest

from cosim_validation.common.config import parse_config
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.live.nodes.robot_proxy import filter_texts
from cosim_validation.live.session.graph import GraphSpec, parse_graph
from cosim_validation.live.session.node_parameters import ErrorInjectorParams, ProxyParams
from cosim_validation.live.session.parameter_struct import NodeParameterError

DRIVERS = """
nodes:
  - {name: virtual_driver, executable: virtual_driver, parameters: {backend: mujoco}}
  - {name: physical_driver, executable: physical_driver}
"""
INJECTOR = "  - {name: virtual_errors, executable: error_injector, parameters: {robot: virtual, model: m.npz}}\n"
RAW = tuple(
    (f"/cosim/virtual/{n}", f"/cosim/virtual/raw/{n}")
    for n in ("command", "joint_states", "tip_pose", "marker", "reset")
)


def _graph(extra: str) -> GraphSpec:
    return parse_graph(parse_config(DRIVERS + extra, "g.yaml"))


def test_an_error_injector_in_the_yaml_moves_the_virtual_driver_under_raw() -> None:
    graph = _graph(INJECTOR)
    assert graph.node("virtual_driver").remappings == RAW
    assert graph.node("physical_driver").remappings == ()
    assert graph.node("virtual_errors").parameters["model"] == "m.npz"


def test_a_command_line_filter_goes_outside_the_injector() -> None:
    graph = _graph(INJECTOR).with_robot_filters("virtual", ["offset:joint2=0.001"])
    assert [n.name for n in graph.nodes] == ["virtual_driver", "physical_driver", "virtual_errors"]
    assert graph.node("virtual_errors").parameters["filters"] == ["offset:joint2=0.001"]
    assert graph.node("virtual_driver").remappings == RAW  # moved once
    params = ErrorInjectorParams.from_values(graph.node("virtual_errors").parameters, node="virtual_errors")
    assert filter_texts(params) == ["errors:model=m.npz", "offset:joint2=0.001"]


def test_without_a_proxy_in_the_yaml_a_filter_adds_one() -> None:
    graph = _graph("").with_robot_filters("virtual", ["errors:model=m.npz"])
    proxy = graph.node("virtual_proxy")
    assert proxy.executable == "robot_proxy"
    assert filter_texts(ProxyParams.from_values(proxy.parameters, node=proxy.name)) == ["errors:model=m.npz"]
    assert graph.node("virtual_driver").remappings == RAW


def test_two_proxies_for_one_robot_are_refused() -> None:
    second = "  - {name: p, executable: robot_proxy, parameters: {robot: virtual, filters: ['offset:joint1=0.1']}}\n"
    with pytest.raises(ConfigError, match="p and virtual_errors both stand in front of the virtual robot"):
        _graph(INJECTOR + second)


def test_a_proxy_without_its_driver_is_refused() -> None:
    text = "nodes:\n" + INJECTOR
    with pytest.raises(ConfigError, match="node 'virtual_errors': no virtual_driver node to stand in front of"):
        parse_graph(parse_config(text, "g.yaml"))


def test_an_injector_without_a_model_is_one_error() -> None:
    with pytest.raises(NodeParameterError, match=r"parameter 'model' of node 'e' \(error_injector\): required"):
        ErrorInjectorParams.from_values({"model": "", "filters": []}, node="e")
    text = "  - {name: virtual_errors, executable: error_injector, parameters: {robot: virtual}}\n"
    with pytest.raises(ConfigError, match="node 'virtual_errors' \\(error_injector\\): parameter 'model' is required"):
        _graph(text)
