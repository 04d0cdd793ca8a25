"""The session graph, described once as data (config/digital_twin.yaml).

``cosim session`` starts it as one process per node; ``launch/digital_twin.launch.py`` builds the same
nodes for ``ros2 launch``. Both go through :func:`load_graph` and
:func:`cosim_validation.live.session.session_plan.node_launches`, so parameter names and types are checked
against the nodes' declarations (:mod:`cosim_validation.live.session.node_parameters`) before anything starts.
An empty list is never passed to a node: a parameter whose default is ``[]`` is left out unless given.

Parameter values may hold placeholders filled in when the session starts: ``{run_dir}`` (the run
directory), ``{suite}`` (the suite file, "" for the embedded default suite), ``{cases}`` (the number of
cases, 0 = all), ``{package}`` (the folder holding config/ and urdf/).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.common.ros_names import ros_name_problem
from cosim_validation.live.session.node_parameters import NODE_PARAMETERS, parameters_of


@dataclass(frozen=True)
class NodeSpec:
    """One node of the graph."""

    name: str
    executable: str
    parameters: Mapping[str, Any]
    remappings: tuple[tuple[str, str], ...] = ()
    required: bool = True  # the session stops if a required node dies
    console: bool = False  # its stdout is shown (progress lines of the test generator)

    def value(self, name: str) -> Any:
        """Parameter ``name`` as the node will have it: its value in the graph, else the default its node declares.

        Args:
            name: A parameter the node's executable declares (:mod:`~.node_parameters`).

        Raises:
            KeyError: The executable declares no parameter ``name``.
        """
        if name in self.parameters:
            return self.parameters[name]
        spec = next((s for s in parameters_of(self.executable) if s.name == name), None)
        if spec is None:
            raise KeyError(f"{self.executable} has no parameter {name!r}")
        return spec.default


@dataclass(frozen=True)
class SessionSettings:
    """Session-wide settings."""

    use_sim_time: bool = True
    ready_timeout_s: float = 90.0
    shutdown_grace_s: float = 3.0


@dataclass(frozen=True)
class GraphSpec:
    """All nodes of a session."""

    source: str
    settings: SessionSettings
    nodes: tuple[NodeSpec, ...] = field(default_factory=tuple)

    def node(self, name: str) -> NodeSpec:
        """The node called ``name``.

        Args:
            name: The node's name in the graph.

        Raises:
            ConfigError: No node of that name.
        """
        for spec in self.nodes:
            if spec.name == name:
                return spec
        raise ConfigError(self.source, "nodes", f"no node {name!r}; nodes: {', '.join(n.name for n in self.nodes)}")

    def resolved(self, values: Mapping[str, str]) -> GraphSpec:
        """A copy with ``{placeholder}`` strings in parameter values filled from ``values``.

        A parameter that is only a placeholder takes its declared type (``cases: "{cases}"`` becomes an int).

        Args:
            values: Placeholder name -> text (``run_dir``, ``suite``, ``cases``, ``package``: see
                :func:`~cosim_validation.live.session.session_plan.session_values`).

        Raises:
            ConfigError: A filled placeholder that is not of its parameter's type, or not a valid value of it.
        """
        nodes = []
        for n in self.nodes:
            declared = {p.name: p for p in parameters_of(n.executable)}
            params = {}
            for key, value in n.parameters.items():
                filled = _fill(value, values)
                spec = declared.get(key)
                if _is_placeholder(value) and spec is not None:
                    where = f"{n.name}.parameters.{key}"
                    if spec.kind in (int, float, bool):
                        filled = _coerce(filled, spec.kind, self.source, where)
                    problem = spec.problem(filled)
                    if problem is not None:
                        raise ConfigError(self.source, where, f"{problem} after filling placeholders")
                params[key] = filled
            nodes.append(NodeSpec(n.name, n.executable, params, n.remappings, n.required, n.console))
        return GraphSpec(self.source, self.settings, tuple(nodes))

    def with_robot_filters(self, robot: str, filters: list[str]) -> GraphSpec:
        """A copy with a proxy node in front of ``robot``'s driver, applying ``filters`` (``KIND:OPTIONS``).

        The proxy is a ``hazard_injector`` when every filter is of kind ``hazards`` (its events then go to
        ``/cosim/hazards/events``), else a ``robot_proxy``; a proxy the graph already has for ``robot`` (a
        ``robot_proxy``, ``hazard_injector`` or ``error_injector`` node in the YAML) gets the filters outside its
        own. The driver's topics and reset service move under ``/cosim/<robot>/raw/``
        (remapped); the proxy serves the usual names. Nothing changes without filters.

        Args:
            robot: The robot whose driver gets the proxy: ``virtual`` or ``physical``.
            filters: Robot filters ``KIND:OPTIONS``, innermost first; empty: the graph as it is.

        Raises:
            ConfigError: The graph has no driver node for ``robot``.
        """
        if not filters:
            return self
        existing = next((n for n in self.nodes if _proxy_robot(n) == robot), None)
        if existing is not None:
            merged = [*existing.parameters.get("filters", []), *filters]
            params = {**existing.parameters, "filters": merged}
            node = NodeSpec(existing.name, existing.executable, params, existing.remappings, existing.required)
            return GraphSpec(self.source, self.settings, tuple(node if n is existing else n for n in self.nodes))
        driver = _driver_of(self, robot, filters)
        executable = "hazard_injector" if all(f.startswith("hazards:") for f in filters) else "robot_proxy"
        params = {"config": driver.value("config"), "robot": robot}
        proxy = NodeSpec(
            name=f"{robot}_{executable.removeprefix('robot_')}",
            executable=executable,
            parameters={**params, "filters": list(filters)},
            required=driver.required,
        )
        nodes: list[NodeSpec] = []
        for n in self.nodes:
            nodes += [n, proxy] if n is driver else [n]
        return GraphSpec(self.source, self.settings, tuple(nodes)).with_proxies_wired()

    def with_proxies_wired(self) -> GraphSpec:
        """A copy in which the driver of every robot with a proxy node is moved under ``/cosim/<robot>/raw/``."""
        proxied = {robot for n in self.nodes if (robot := _proxy_robot(n)) is not None}
        nodes = []
        for n in self.nodes:
            robot = driver_robot(n)
            if robot is not None and robot in proxied:
                moved = tuple((f"/cosim/{robot}/{t}", f"/cosim/{robot}/raw/{t}") for t in PROXIED_TOPICS)
                remaps = (*n.remappings, *(m for m in moved if m not in n.remappings))
                n = NodeSpec(n.name, n.executable, n.parameters, remaps, n.required, n.console)
            nodes.append(n)
        return GraphSpec(self.source, self.settings, tuple(nodes))

    def with_parameters(self, executable: str, overrides: Mapping[str, Any]) -> GraphSpec:
        """A copy in which every node running ``executable`` gets ``overrides`` (command-line choices).

        Args:
            executable: The node executable (e.g. ``controller``).
            overrides: Parameter name -> value, in place of the graph's values of those parameters.
        """
        nodes = tuple(
            NodeSpec(n.name, n.executable, {**n.parameters, **overrides}, n.remappings, n.required, n.console)
            if n.executable == executable
            else n
            for n in self.nodes
        )
        return GraphSpec(self.source, self.settings, nodes)


#: Executables that stand in front of a robot's driver (robot filters), and their default robot.
#: The proxy executables (a robot seen through filters); each declares which robot it stands in front of by default.
PROXIES = ("robot_proxy", "hazard_injector", "error_injector")
#: The names a proxy serves in place of the driver (the driver's move under ``/cosim/<robot>/raw/``).
PROXIED_TOPICS = ("command", "joint_states", "tip_pose", "marker", "reset")


def _proxy_robot(node: NodeSpec) -> str | None:
    """The robot a proxy node stands in front of (None: not a proxy)."""
    if node.executable not in PROXIES:
        return None
    return str(node.value("robot"))


def driver_robot(node: NodeSpec) -> str | None:
    """Return the robot a driver node drives; None: not a driver.

    A ``virtual_driver`` or ``physical_driver`` drives the robot of its name, a ``crtk_driver`` or a
    ``ros2_control_driver`` the one of its ``robot`` parameter.

    Args:
        node: A node of the graph.
    """
    if node.executable in ("crtk_driver", "ros2_control_driver"):
        return str(node.value("robot"))
    if node.executable in ("virtual_driver", "physical_driver"):
        return node.executable.removesuffix("_driver")
    return None


def _driver_of(graph: GraphSpec, robot: str, filters: list[str]) -> NodeSpec:
    driver = next((n for n in graph.nodes if driver_robot(n) == robot), None)
    if driver is None:
        raise ConfigError(graph.source, "nodes", f"no {robot}_driver node to put the filters {filters} in front of")
    return driver


def _fill(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for key, replacement in values.items():
            value = value.replace("{" + key + "}", replacement)
        return value
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    return value


def _is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("{") and value.endswith("}") and value.count("{") == 1


def _coerce(text: str, kind: type, source: str, key: str) -> Any:
    try:
        return {"true": True, "false": False}[text.lower()] if kind is bool else kind(text)
    except (KeyError, ValueError):
        raise ConfigError(source, key, f"expected {kind.__name__}, got {text!r} after filling placeholders") from None


def _check_value(node: ConfigNode, kind: type) -> Any:
    if _is_placeholder(node.value):
        return node.value
    if kind is bool:
        return node.to_bool()
    if kind is int:
        return node.to_int()
    if kind is float:
        return node.to_float()
    if kind is str:
        return node.to_str()
    return [item.to_str() for item in node.elements()]


def _topic(node: ConfigNode) -> str:
    """A remapping's topic name, checked as rcl will check it when the node starts."""
    name = node.to_str()
    problem = ros_name_problem(name)
    if problem is not None:
        raise node.error(problem)
    return name


def _parse_node(node: ConfigNode) -> NodeSpec:
    node.reject_unknown(["name", "executable", "parameters", "remappings", "required", "console"])
    name = node["name"].to_str()
    problem = ros_name_problem(name)
    if problem is not None or "/" in name:  # rcl refuses it at the node's start: one traceback in its log
        raise node["name"].error(problem or f"expected a node name (no '/'), got {name!r}")
    executable = node["executable"].to_str(choices=sorted(NODE_PARAMETERS))
    declared = {p.name: p for p in parameters_of(executable)}
    # an empty list has no type on the way to a node (launch_ros refuses it, rclpy would infer BYTE_ARRAY), and
    # None means "unset: the node reads the configuration": such parameters are left out
    params: dict[str, Any] = {p.name: p.default for p in declared.values() if p.default not in ([], None)}
    given = node.get("parameters")
    for spec in declared.values():  # a required parameter (an error injector's model) must be given
        if spec.rule.not_empty and not spec.default and (given is None or not given.has(spec.name)):
            raise node.error(f"node {name!r} ({executable}): parameter {spec.name!r} is required ({spec.description})")
    if given is not None:
        given.reject_unknown([*declared, "use_sim_time"])
        for key, value in given.items():
            if key == "use_sim_time":
                params[key] = value.to_bool()
                continue
            checked = _check_value(value, declared[key].kind)
            problem = None if _is_placeholder(checked) else declared[key].problem(checked)
            if problem is not None:
                raise value.error(problem)
            if checked == [] and declared[key].default != []:
                raise value.error("expected a non-empty list (leave the key out for the node's default)")
            if checked == []:
                params.pop(key, None)
            else:
                params[key] = checked
    remaps = node.get("remappings")
    remappings = tuple((_topic(r["from"]), _topic(r["to"])) for r in remaps.elements()) if remaps else ()
    required = node["required"].to_bool() if node.has("required") else True
    console = node["console"].to_bool() if node.has("console") else False
    return NodeSpec(name, executable, params, remappings, required, console)


def parse_graph(root: ConfigNode) -> GraphSpec:
    """A :class:`GraphSpec` from the root of a graph YAML.

    Args:
        root: The root of a graph YAML (its ``session`` and ``nodes`` sections).

    Raises:
        ConfigError: An unknown key, a bad value, a repeated node name, no node, or a proxy without a driver to
            stand in front of (or two for one robot).
    """
    root.reject_unknown(["session", "nodes"])
    settings = SessionSettings()
    section = root.get("session")
    if section is not None:
        section.reject_unknown(["use_sim_time", "ready_timeout_s", "shutdown_grace_s"])
        settings = SessionSettings(
            use_sim_time=section["use_sim_time"].to_bool() if section.has("use_sim_time") else True,
            ready_timeout_s=section["ready_timeout_s"].to_float(exclusive_minimum=0)
            if section.has("ready_timeout_s")
            else 90.0,
            shutdown_grace_s=section["shutdown_grace_s"].to_float(minimum=0)
            if section.has("shutdown_grace_s")
            else 3.0,
        )
    nodes = tuple(_parse_node(n) for n in root["nodes"].elements())
    names = [n.name for n in nodes]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(root.source, "nodes", f"node names must be unique; repeated: {', '.join(duplicates)}")
    if not nodes:
        raise ConfigError(root.source, "nodes", "expected at least one node")
    proxies: dict[str, str] = {}
    for n in nodes:
        robot = _proxy_robot(n)
        if robot is None:
            continue
        if not any(driver_robot(d) == robot for d in nodes):
            raise ConfigError(root.source, "nodes", f"node {n.name!r}: no {robot}_driver node to stand in front of")
        if robot in proxies:
            message = f"{n.name} and {proxies[robot]} both stand in front of the {robot} robot"
            raise ConfigError(root.source, "nodes", f"{message}; give one of them all its filters")
        proxies[robot] = n.name
    return GraphSpec(root.source, settings, nodes).with_proxies_wired()


def load_graph(path: str | Path) -> GraphSpec:
    """Read and check a graph YAML.

    Args:
        path: The graph YAML file.
    """
    return parse_graph(load_config(path))


def graph_inputs(graph: GraphSpec) -> dict[str, Path]:
    """Return the files a session of ``graph`` is made with (role -> path).

    They are the graph, the case-study configuration (the monitor's, else the first node's ``config``), the
    property file (the monitor's, else the configuration's ``campaign.properties``) and, when the controller
    runs a supervisor (its ``supervisor`` parameter, else ``campaign.supervisor``), the supervisor's files
    (``run_inputs.supervision_files``).

    Args:
        graph: The session graph.
    """
    from cosim_validation.assembly.campaign_config import CampaignConfig
    from cosim_validation.common.config import resolve_resource
    from cosim_validation.runs.run_inputs import supervision_files

    monitor = next((n for n in graph.nodes if n.executable == "monitor"), None)
    holders = ([monitor] if monitor is not None else []) + [n for n in graph.nodes if "config" in n.parameters]
    files: dict[str, Path] = {"graph": Path(graph.source)}
    if not holders:
        return files
    config_path = resolve_resource(str(holders[0].value("config")))
    files["config"] = config_path
    given = monitor.value("properties") if monitor is not None else ""
    if given:
        files["properties"] = resolve_resource(str(given))
    else:
        files["properties"] = CampaignConfig.from_config(load_config(config_path)["campaign"]).properties_path
    controller = next((n for n in graph.nodes if n.executable == "controller"), None)
    if controller is None:
        return files
    supervisor = controller.value("supervisor")
    if supervisor is None:
        supervisor = CampaignConfig.from_config(load_config(config_path)["campaign"]).supervisor_path
    return files | supervision_files(supervisor, controller.value("supervisor_scenario"))
