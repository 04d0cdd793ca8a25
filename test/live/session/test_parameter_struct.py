"""The node parameter structs: one typed, frozen, validated struct per node, and the graph YAML checked by it."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.common.config import parse_config
from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.live.session.graph import load_graph, parse_graph
from cosim_validation.live.session.node_parameters import (
    BACKENDS,
    COMPOSED_PARAMETERS,
    FLAVOURS,
    NODE_PARAMETERS,
    ControllerParams,
    DriverParams,
    ErrorInjectorParams,
    HazardInjectorParams,
    TestGeneratorParams,
    params_type,
    process_peers,
)
from cosim_validation.live.session.parameter_struct import NodeParameterError, NodeParams
from cosim_validation.live.session.session_plan import node_launches

GRAPHS = sorted(p.name for p in (Path(__file__).parents[3] / "config").glob("*.yaml") if "\nnodes:" in p.read_text())
EVERY = sorted({**NODE_PARAMETERS, **COMPOSED_PARAMETERS}.items())


@pytest.mark.parametrize(("executable", "params"), EVERY)
def test_defaults_build_a_frozen_struct_of_the_declared_types(executable: str, params: type[NodeParams]) -> None:
    required = {s.name: "m.npz" for s in params.specs() if s.rule.not_empty and not s.default}  # the model
    built = params.from_values(required, node=executable)
    for spec in params.specs():
        value = getattr(built, spec.name)
        expected = required.get(spec.name, tuple(spec.default) if spec.kind is list else spec.default)
        assert value == expected, spec.name
        if value is not None:
            assert isinstance(value, tuple if spec.kind is list else spec.kind), spec.name
        assert spec.description, spec.name
    name = params.specs()[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(built, name, getattr(built, name))


def test_values_are_typed_not_cast_by_the_node() -> None:
    values = {"robots": ["physical"], "stale_timeout_s": 2, "validate_setpoints": True, "supervisor": "s.yaml"}
    params = ControllerParams.from_values(values, node="controller")
    assert params.robots == ("physical",)
    assert params.stale_timeout_s == 2.0
    assert isinstance(params.stale_timeout_s, float)
    assert params.validate_setpoints is True
    assert (params.supervisor, params.detector) == ("s.yaml", None)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (
            {"stale_timeout_s": "3"},
            "parameter 'stale_timeout_s' of node 'ctl' (controller): expected a double, got '3'",
        ),
        ({"min_subscribers": 2.0}, "parameter 'min_subscribers' of node 'ctl' (controller): expected an integer"),
        ({"publish_clock": 1}, "parameter 'publish_clock' of node 'ctl' (controller): expected a bool, got 1"),
        ({"robots": "virtual"}, "parameter 'robots' of node 'ctl' (controller): expected a list of strings"),
        ({"stale_timeout_s": -1.0}, "parameter 'stale_timeout_s' of node 'ctl' (controller): expected > 0 s, got -1.0"),
        ({"stale_timeout_s": 0.0}, "expected > 0 s, got 0.0"),
        ({"min_subscribers": -1}, "parameter 'min_subscribers' of node 'ctl' (controller): expected >= 0, got -1"),
        ({"robots": ["virtual", "phyiscal"]}, "expected one of: virtual, physical; got 'phyiscal'"),
        ({"stale_timeout": 3.0}, "parameter 'stale_timeout' of node 'ctl' (controller): unknown parameter "),
        ({"stale_timeout": 3.0}, "did you mean 'stale_timeout_s'?); declared: config, robots, publish_clock,"),
    ],
)
def test_a_bad_value_is_one_error_naming_node_and_parameter(values: dict[str, Any], message: str) -> None:
    with pytest.raises(NodeParameterError, match=re.escape(message)):
        ControllerParams.from_values(values, node="ctl")


@pytest.mark.parametrize(
    ("params", "values", "message"),
    [
        (TestGeneratorParams, {"selection": "evenly"}, "'selection' of node 'test_generator': expected one of: spread"),
        (TestGeneratorParams, {"cases": -2}, "'cases' of node 'test_generator': expected >= 0, got -2"),
        (ErrorInjectorParams, {"robot": "virtual"}, "'model' of node 'test_generator' \\(error_injector\\): required"),
        (NODE_PARAMETERS["foxglove_bridge"], {"port": 70000}, "'port' of node 'test_generator' .*: expected <= 65535"),
        (
            NODE_PARAMETERS["virtual_driver"],
            {"backend": "gazebo"},
            "expected one of: mujoco, pybullet, coppeliasim, emulated",
        ),
    ],
)
def test_ranges_choices_and_required(params: type[NodeParams], values: dict[str, Any], message: str) -> None:
    with pytest.raises(NodeParameterError, match=message):
        params.from_values(values, node="test_generator")


def test_subclass_defaults_stay_the_nodes_own() -> None:
    assert HazardInjectorParams.from_values({}, node="h").events_topic == "/cosim/hazards/events"
    assert params_type("physical_driver", DriverParams).from_values({}, node="p").backend == "emulated"
    assert params_type("virtual_driver", DriverParams).from_values({}, node="v").backend == "mujoco"
    with pytest.raises(InputError, match="unknown node executable 'monitor'; expected one of: physical_driver, virt"):
        params_type("monitor", DriverParams)


def test_the_choices_are_those_of_the_registries() -> None:
    from cosim_validation.live.ros.crtk_topics import FLAVOURS as CRTK_FLAVOURS
    from cosim_validation.robots.registry import HOSTED_NAMES

    assert BACKENDS == HOSTED_NAMES
    assert set(FLAVOURS) == {"", *CRTK_FLAVOURS}


def test_the_supervisor_shares_the_controllers_process() -> None:
    assert process_peers(ControllerParams) == (COMPOSED_PARAMETERS["supervisor"],)
    assert process_peers(COMPOSED_PARAMETERS["supervisor"]) == (ControllerParams,)
    assert process_peers(TestGeneratorParams) == ()


def _graph(parameters: str, executable: str = "controller") -> str:
    return f"nodes:\n  - {{name: n, executable: {executable}, parameters: {parameters}}}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (_graph("{stale_timeout_s: -1.0}"), r"g.yaml: nodes\[0\].parameters.stale_timeout_s: expected > 0 s, got -1.0"),
        (_graph("{robots: [virtual, robot3]}"), r"parameters.robots: expected one of: virtual, physical; got 'robot3'"),
        # a time or rate without a stated ceiling is bounded all the same (1e300 s overflowed the node's waits)
        (_graph("{reset_timeout_s: 1.0e+300}"), r"parameters.reset_timeout_s: expected <= 86400 s, got 1e\+300"),
        (_graph("{report_timeout_s: .inf}"), r"parameters.report_timeout_s: expected a finite number, got inf"),
        (_graph("{seed: 4294967296}", "physical_driver"), r"parameters.seed: expected <= 4.29497e\+09, got 4294967296"),
        (_graph("{cases: 99999999999999999999}", "test_generator"), r"cases: expected an integer of 64 bits"),
        (
            _graph("{update_rate_hz: 1.0e+300}", "controller_manager_emulator"),
            r"parameters.update_rate_hz: expected <= 1e\+06 Hz",
        ),
        (_graph("{selection: evenly}", "test_generator"), "parameters.selection: expected one of: spread, first"),
        (_graph("{robot: virtual}", "error_injector"), r"node 'n' \(error_injector\): parameter 'model' is required"),
    ],
)
def test_a_graph_yaml_is_checked_by_the_same_rules(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_graph(parse_config(text, "g.yaml"))


def test_a_placeholder_is_checked_once_filled(tmp_path: Path) -> None:
    graph = parse_graph(parse_config(_graph('{cases: "{cases}"}', "test_generator"), "g.yaml"))
    with pytest.raises(ConfigError, match=r"n.parameters.cases: expected >= 0, got -3 after filling placeholders"):
        node_launches(graph, tmp_path, tmp_path / "suite.parquet", -3)


@pytest.mark.parametrize("graph_file", GRAPHS)
def test_every_shipped_graph_builds_every_nodes_struct(repo_root: Path, tmp_path: Path, graph_file: str) -> None:
    """What a node of a shipped graph is started with builds its struct (the node's own check passes)."""
    launches = node_launches(load_graph(repo_root / "config" / graph_file), tmp_path, tmp_path / "s.parquet", 2)
    assert launches
    for launch in launches:
        values = {k: v for k, v in launch.parameters.items() if k != "use_sim_time"}
        built = NODE_PARAMETERS[launch.executable].from_values(values, node=launch.name)
        for key, value in values.items():
            assert getattr(built, key) == (tuple(value) if isinstance(value, list) else value), (launch.name, key)
