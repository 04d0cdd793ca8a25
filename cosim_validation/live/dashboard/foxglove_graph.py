"""Adding the Foxglove bridge node to a session graph (``cosim session --foxglove [PORT]``)."""

from __future__ import annotations

from dataclasses import replace

from cosim_validation.common.exceptions import InputError
from cosim_validation.live.dashboard.foxglove_layout import session_robots
from cosim_validation.live.session.graph import GraphSpec, NodeSpec
from cosim_validation.live.session.node_parameters import defaults_of

BRIDGE = "foxglove_bridge"
DEFAULT_PORT = 8765


def with_foxglove_bridge(graph: GraphSpec, port: int = DEFAULT_PORT, host: str = "127.0.0.1") -> GraphSpec:
    """Return ``graph`` plus a ``foxglove_bridge`` node serving on ``host:port``.

    The node is not required (the session goes on if it dies once up); it is given the robots of the session
    and the monitor's configuration file.

    Args:
        graph: The session graph to extend (it is not changed; a copy is returned).
        port: TCP port the bridge serves on, 1..65535 (the session prints the address; a graph that wants any free
            port sets the node's ``port`` parameter to 0, and the node's log names the port it got).
        host: Address the bridge listens on (the default serves this machine only).

    Raises:
        InputError: A port outside 1..65535, or a graph that already has a node named foxglove_bridge.
    """
    if not 1 <= port <= 65535:
        raise InputError(f"--foxglove port must be within 1..65535, got {port}")
    if any(n.name == BRIDGE for n in graph.nodes):
        raise InputError(f"{graph.source}: already has a node named {BRIDGE!r}; drop --foxglove or rename it")
    config = next((n.parameters["config"] for n in graph.nodes if "config" in n.parameters), None)
    params = {**defaults_of(BRIDGE), "host": host, "port": port, "robots": session_robots(graph)}
    if config is not None:
        params["config"] = config
    node = NodeSpec(BRIDGE, BRIDGE, params, required=False)
    return replace(graph, nodes=(*graph.nodes, node))
