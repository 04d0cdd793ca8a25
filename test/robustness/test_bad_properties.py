"""Bad property files and session graphs, generated from the shipped ``config/properties.yaml`` and
``config/digital_twin.yaml``: broken and unknown expressions, KPIs, machines, constants and keys (through
``cosim check`` and ``cosim replay``), and broken session graphs (through ``cosim session``, before any node
starts)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from cosim_validation.common.config import package_root
from test.robustness.harness import Case, Workspace, run_case

PROPERTIES = yaml.safe_load((package_root() / "config" / "properties.yaml").read_text())
GRAPH = yaml.safe_load((package_root() / "config" / "digital_twin.yaml").read_text())

Edit = Callable[[dict[str, Any]], str]  # mutates the tree, returns the key the error must name


def _set(*path: str | int, value: Any, key: str) -> Edit:
    def edit(tree: dict[str, Any]) -> str:
        node = tree
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
        return key

    return edit


def _nothing_to_check(tree: dict[str, Any]) -> str:
    """No property and no machine: nothing was checked, with exit code 0."""
    tree["properties"], tree["machines"] = {}, []
    return "properties"


def _property_edits() -> dict[str, Edit]:
    edits: dict[str, Edit] = {}
    for name in PROPERTIES["properties"]:
        key = f"properties.{name}.expression"
        edits[f"{name}:syntax"] = _set("properties", name, "expression", value="always (q[0] <", key=key)
        edits[f"{name}:unknown_signal"] = _set("properties", name, "expression", value="always warp_speed > 0", key=key)
        edits[f"{name}:unknown_key"] = _set(
            "properties", name, "severity", value="high", key=f"properties.{name}.severity"
        )
    for name in PROPERTIES["kpis"]:
        edits[f"kpi.{name}:kind"] = _set("kpis", name, "kind", value="bogus", key=f"kpis.{name}.kind")
    edits["kpi:signal"] = _set(
        "kpis", "deviation_frechet", "signal", value="elbow", key="kpis.deviation_frechet.signal"
    )
    edits["kpi:stages"] = _set(
        "kpis", "injection_extraction_frechet", "stages", value=["injection"], key="kpis.injection_extraction_frechet"
    )
    edits["machines:unknown"] = _set("machines", 1, value="no_such_machine", key="machines[1]")
    edits["machines:missing_file"] = _set("machines", 0, value="no_such_machine.yaml", key="machines[0]")
    # two machines of one name gave two rows of one verdict: the campaign stopped at its first case's storing
    edits["machines:twice"] = _set("machines", 2, value="stage_order", key="machines[2]")
    edits["properties:none"] = _nothing_to_check
    for name in PROPERTIES["constants"]:
        edits[f"constant.{name}:text"] = _set("constants", name, value="abc", key=f"constants.{name}")
    edits["root:unknown_key"] = _set("thresholds", value={}, key="thresholds")
    edits["robots:unknown"] = _set(
        "properties", "tip_follows_plan", "robots", value=["virtual", "hologram"], key="properties.tip_follows_plan"
    )
    # a property on no robot never gave a verdict; the same robot twice; a window no case reaches
    edits["robots:none"] = _set("properties", "tip_follows_plan", "robots", value=[], key="properties.tip_follows_plan")
    edits["robots:twice"] = _set(
        "properties", "tip_follows_plan", "robots", value=["virtual", "virtual"], key="properties.tip_follows_plan"
    )
    edits["window:1e300"] = _set(
        "properties",
        "tip_follows_plan",
        "expression",
        value="eventually[0, 1e300] x(tip) < 1",
        key="properties.tip_follows_plan.expression",
    )
    # a constant a name resolves past: 'always t < 50' read the time, never 't: 100'; one no expression can name
    for name in ("t", "tip", "injection", "stopped", "always", "target", "c m", "2nd_bound", "eps_\u03b5"):
        edits[f"constant:named_{name}"] = _set("constants", name, value=1.0, key=f"constants.{name}")
    edits["constant:unknown_in_expression"] = _set(
        "properties",
        "targeting_error_bound",
        "expression",
        value="kpi(targeting_error) < no_such_constant",
        key="properties.targeting_error_bound.expression",
    )
    edits["kpi:unknown_in_expression"] = _set(
        "properties",
        "targeting_error_bound",
        "expression",
        value="kpi(no_such_kpi) < 0.003",
        key="properties.targeting_error_bound.expression",
    )
    # a KPI is never negative: below a negative bound it never holds, above one always (both were judged)
    edits["kpi:negative_bound"] = _set(
        "properties",
        "targeting_error_bound",
        "expression",
        value="kpi(targeting_error) < -0.003",
        key="properties.targeting_error_bound.expression",
    )
    edits["kpi:negative_bound_constant"] = _set(
        "constants", "targeting_bound_m", value=-0.003, key="properties.targeting_error_bound.expression"
    )
    edits["supervisor:ordered"] = _set(
        "properties",
        "tip_follows_plan",
        "expression",
        value="always supervisor < stopped",
        key="properties.tip_follows_plan.expression",
    )
    edits["supervisor:unknown_mode"] = _set(
        "properties",
        "tip_follows_plan",
        "expression",
        value="always (supervisor == paused -> x(tip) < 1)",
        key="properties.tip_follows_plan.expression",
    )
    return edits


PROPERTY_EDITS = _property_edits()


@pytest.mark.parametrize("name", sorted(PROPERTY_EDITS))
def test_bad_properties(name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]) -> None:
    tree = yaml.safe_load(yaml.safe_dump(PROPERTIES))
    key = PROPERTY_EDITS[name](tree)
    path = tmp_path / "props.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    index = sorted(PROPERTY_EDITS).index(name)
    if index % 3 == 2:  # a third through cosim replay (of someone else's bag: its topics named), the rest check
        tree.setdefault("topics", {"virtual": {"joint_states": "/my_arm/joint_states"}})
        path.write_text(yaml.safe_dump(tree, sort_keys=False))
        argv = ["replay", str(workspace.bag), "--properties", str(path)]
    else:
        argv = ["check", str(workspace.records["virtual"]), "--properties", str(path)]
    run_case(Case(argv, ("props.yaml", key)), index % 2 == 1, capfd)


TOPIC_SECTIONS: dict[str, tuple[dict[str, Any], str]] = {
    "unknown_robot": ({"bogus": {"joint_states": "/arm/joint_states"}}, "topics.bogus"),
    "expected_robot": ({"expected": {"joint_states": "/arm/joint_states"}}, "topics.expected"),
    "not_a_text": ({"virtual": {"joint_states": 5}}, "topics.virtual.joint_states"),
    "unknown_stream": ({"virtual": {"joint_states": "/arm/joint_states", "wrench": "/w"}}, "topics.virtual"),
    # two robots on one stream: each was judged against the other's samples, and both "followed their plan"
    "two_robots_one_topic": (
        {"virtual": {"joint_states": "/arm/joint_states"}, "physical": {"joint_states": "/arm/joint_states"}},
        "topics.physical.joint_states",
    ),
    "joints_as_tip": (
        {"virtual": {"joint_states": "/arm/joint_states", "tip_pose": "/arm/joint_states"}},
        "topics.virtual.tip_pose",
    ),
    "marker_of_the_other_robot": (
        {
            "virtual": {"joint_states": "/arm/joint_states", "marker": "/tracker/marker"},
            "physical": {"joint_states": "/real/joint_states", "marker": "/tracker/marker"},
        },
        "topics.physical.marker",
    ),
}


@pytest.mark.parametrize("name", sorted(TOPIC_SECTIONS))
def test_bad_topics_section(name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]) -> None:
    """A replay's ``topics:`` section: each bad robot, stream or topic is one error naming the file and the key."""
    tree = yaml.safe_load(yaml.safe_dump(PROPERTIES))
    tree["topics"], key = TOPIC_SECTIONS[name]
    path = tmp_path / "props.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    argv = ["replay", str(workspace.bag), "--properties", str(path)]
    run_case(Case(argv, ("props.yaml", key)), sorted(TOPIC_SECTIONS).index(name) % 2 == 1, capfd)


GRAPH_EDITS: dict[str, Edit] = {
    "root:unknown_key": _set("launch", value=1, key="launch"),
    "session:unknown_key": _set("session", "speed", value=2, key="session.speed"),
    "session:ready_timeout_text": _set("session", "ready_timeout_s", value="soon", key="session.ready_timeout_s"),
    "session:grace_negative": _set("session", "shutdown_grace_s", value=-1, key="session.shutdown_grace_s"),
    "session:sim_time_text": _set("session", "use_sim_time", value="maybe", key="session.use_sim_time"),
    "node:unknown_key": _set("nodes", 0, "priority", value=1, key="nodes[0].priority"),
    "node:unknown_executable": _set("nodes", 1, "executable", value="oracle", key="nodes[1].executable"),
    "node:name_number": _set("nodes", 2, "name", value=7, key="nodes[2].name"),
    "node:unknown_parameter": _set("nodes", 3, "parameters", "speed", value=2, key="nodes[3].parameters.speed"),
    "node:parameter_kind": _set(
        "nodes", 5, "parameters", "validate_setpoints", value="yes please", key="nodes[5].parameters.validate_setpoints"
    ),
    "node:parameter_range": _set(
        "nodes", 5, "parameters", "stale_timeout_s", value=-1.0, key="nodes[5].parameters.stale_timeout_s"
    ),
    "node:parameter_choice": _set(
        "nodes", 1, "parameters", "robots", value=["virtual", "robot3"], key="nodes[1].parameters.robots"
    ),
    "node:required_text": _set("nodes", 3, "required", value="no", key="nodes[3].required"),
    "node:duplicate_name": _set("nodes", 2, "name", value="monitor", key="nodes"),
    "node:missing_config": _set(
        "nodes", 1, "parameters", "config", value="no/such/config.yaml", key="nodes[1].parameters.config"
    ),
    "node:missing_properties": _set(
        "nodes", 1, "parameters", "properties", value="no/such/props.yaml", key="nodes[1].parameters.properties"
    ),
    # the session reads the bag and the results from the run directory (a bag written elsewhere lost the trajectories)
    "node:recorder_elsewhere": _set(
        "nodes", 0, "parameters", "output", value="elsewhere.mcap", key="nodes[0].parameters.output"
    ),
    "node:results_elsewhere": _set(
        "nodes", 6, "parameters", "results", value="{suite}", key="nodes[6].parameters.results"
    ),
    "nodes:two_recorders": lambda tree: (tree["nodes"].append(dict(tree["nodes"][0], name="recorder2")), "nodes[7]")[1],
    "nodes:empty": _set("nodes", value=[], key="nodes"),
    "nodes:no_console": _set("nodes", 6, "console", value=False, key="console"),
}


@pytest.mark.parametrize("name", sorted(GRAPH_EDITS))
def test_bad_session_graph(name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]) -> None:
    """Found before any node starts (item 13: a bad --suite was found only after all seven nodes started)."""
    tree = yaml.safe_load(yaml.safe_dump(GRAPH))
    key = GRAPH_EDITS[name](tree)
    path = tmp_path / "graph.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    out = tmp_path / "run"
    argv = ["session", "--config", str(path), "--suite", str(workspace.suite), "--cases", "1", "--out", str(out)]
    run_case(Case(argv, ("graph.yaml", key), (out / "session.mcap", out / "results.sqlite")), False, capfd)
    assert not (out / "logs").exists(), "a node was started"


@pytest.mark.parametrize("kind", ["symlink_loop", "fifo"])
def test_a_machine_file_that_is_no_file_says_what_it_is(
    kind: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    """A ``machines:`` entry naming a loop of symbolic links or a FIFO says so (it said "does not exist")."""
    import os

    machine = tmp_path / "mine.yaml"
    if kind == "fifo":
        os.mkfifo(machine)
    else:
        os.symlink(tmp_path / "other.yaml", machine)
        os.symlink(machine, tmp_path / "other.yaml")
    tree = yaml.safe_load(yaml.safe_dump(PROPERTIES))
    tree["machines"] = ["mine.yaml"]
    path = tmp_path / "props.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    says = "loop of symbolic links" if kind == "symlink_loop" else "FIFO"
    argv = ["check", str(workspace.records["virtual"]), "--properties", str(path)]
    run_case(Case(argv, ("props.yaml", "machines[0]", "mine.yaml", says)), kind == "fifo", capfd)
