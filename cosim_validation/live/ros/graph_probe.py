"""The look at a domain's graph for :mod:`cosim_validation.live.session.domain_probe`, in a process of its own.

``python -m cosim_validation.live.ros.graph_probe [WINDOW_S]`` creates one node in the domain of its environment
(``ROS_DOMAIN_ID``, ``ROS_AUTOMATIC_DISCOVERY_RANGE``) and prints, as one JSON list, the other nodes and the topics
with an endpoint of another node seen within WINDOW_S seconds (wall time), stopping at the first.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

import rclpy
from rclpy.context import Context

PROBE_NODE = "_cosim_domain_probe"
DEFAULT_WINDOW_S = 5.0


def _look(window_s: float) -> None:
    """In the probe process: print the other nodes and topics seen within ``window_s`` (empty if none).

    The answer is printed before the node and the context are taken down, so that a crash of the middleware's
    teardown (seen once on a loaded machine: SIGSEGV) loses nothing.
    """
    context = Context()
    rclpy.init(context=context, domain_id=int(os.environ.get("ROS_DOMAIN_ID", "0") or 0))
    try:
        node = rclpy.create_node(PROBE_NODE, context=context, enable_rosout=False, start_parameter_services=False)
        deadline = time.monotonic() + window_s
        while True:
            found = _others(node)
            if found or time.monotonic() >= deadline:
                print(json.dumps(found), flush=True)
                node.destroy_node()
                return
            time.sleep(0.05)
    finally:
        context.try_shutdown()


def _others(node: Any) -> list[str]:
    """Nodes other than the probe, and topics with an endpoint of another node."""
    found = [f"node {ns.rstrip('/')}/{name}" for name, ns in node.get_node_names_and_namespaces() if name != PROBE_NODE]
    for topic, _types in node.get_topic_names_and_types():
        endpoints = node.get_publishers_info_by_topic(topic) + node.get_subscriptions_info_by_topic(topic)
        if any(e.node_name != PROBE_NODE for e in endpoints):
            found.append(f"topic {topic}")
    return found


def main(argv: list[str] | None = None) -> int:
    """``python -m cosim_validation.live.ros.graph_probe [WINDOW_S]``: one JSON list on stdout.

    Args:
        argv: The arguments, ``[WINDOW_S]`` at most; None: the command line's.
    """
    args = sys.argv[1:] if argv is None else argv
    _look(float(args[0]) if args else DEFAULT_WINDOW_S)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
