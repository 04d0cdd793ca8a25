"""Which message types the recorder subscribes to: the project's interfaces and the standard packages it uses.

Topic types come from DDS discovery, that is from any participant in the session's domain. The recorder
imports a type's Python module to subscribe, so it only takes types it knows: well-formed
``package/msg/Name`` names of the packages below that the bag's typestore (ROS 2 Kilted + the project's
interfaces and crtk_msgs) defines. Any other topic is skipped and reported (log and ``summary.json``).

A topic of the session's own (:func:`foreign_types`: ``/clock``, ``/cosim/expected``, a robot's
``joint_states`` ...) offered with a type that is not the one the session's nodes publish there is not a skip but
a stranger on the domain: the recorder stops the session with an error (``<bag stem>.foreign.json``) instead of
writing a bag that replay refuses.
"""

from __future__ import annotations

import re
from collections.abc import Container
from pathlib import Path

RECORDED_PACKAGES = frozenset(
    {
        "cosim_validation_interfaces",
        "builtin_interfaces",
        "std_msgs",
        "geometry_msgs",
        "sensor_msgs",
        "trajectory_msgs",
        "visualization_msgs",
        "diagnostic_msgs",
        "rosgraph_msgs",
        "crtk_msgs",  # the CRTK arms' operating_state and state_command (docs/CRTK.md)
    }
)
_IFACE = "cosim_validation_interfaces/msg"
#: The type the session's nodes publish on each fixed topic of theirs.
OWN_TOPIC_TYPES = {
    "/clock": "rosgraph_msgs/msg/Clock",
    "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray",
    "/cosim/expected": f"{_IFACE}/RobotState",
    "/cosim/case_status": f"{_IFACE}/CaseStatus",
    "/cosim/case_reports": f"{_IFACE}/CaseReport",
    "/cosim/verdicts": f"{_IFACE}/Verdict",
    "/cosim/kpis": f"{_IFACE}/Kpi",
    "/cosim/alerts": f"{_IFACE}/Alert",
}
#: The type of a robot's topics ``/cosim/<robot>/<name>`` (sample topics and setpoints).
OWN_ROBOT_TOPIC_TYPES = {
    "joint_states": "sensor_msgs/msg/JointState",
    "tip_pose": "geometry_msgs/msg/PoseStamped",
    "marker": f"{_IFACE}/TrackedMarker",
    "command": "sensor_msgs/msg/JointState",
}
_ROBOT_TOPIC = re.compile(r"^/cosim/[^/]+/([a-z_]+)$")
_MESSAGE_TYPE = re.compile(r"^([a-z][a-z0-9_]*)/msg/([A-Z][A-Za-z0-9]*)$")


def skip_reason(types: list[str], known: Container[str]) -> str | None:
    """Why a topic offered with ``types`` is not recorded, or None if it is.

    Args:
        types: The type names discovery reports for the topic (one, unless publishers disagree).
        known: The type names the bag writer can embed (its typestore).
    """
    if len(types) != 1:
        return f"published with {len(types)} types ({', '.join(types)})"
    match = _MESSAGE_TYPE.match(types[0])
    if match is None:
        return f"type {types[0]!r} is not a message type name (package/msg/Name)"
    if match.group(1) not in RECORDED_PACKAGES:
        return f"type {types[0]!r} is not of a package the recorder knows ({', '.join(sorted(RECORDED_PACKAGES))})"
    if types[0] not in known:
        return f"type {types[0]!r} is not defined in the recorder's typestore"
    return None


def own_type(topic: str) -> str | None:
    """The type the session's nodes publish on ``topic``, or None for a topic whose type is not fixed.

    Args:
        topic: The topic's full name.
    """
    if topic in OWN_TOPIC_TYPES:
        return OWN_TOPIC_TYPES[topic]
    match = _ROBOT_TOPIC.match(topic)
    return OWN_ROBOT_TOPIC_TYPES.get(match.group(1)) if match else None


def foreign_types(topic: str, types: list[str]) -> list[str]:
    """The types offered on ``topic`` that no node of the session publishes there (empty if all are ours).

    On a topic of fixed type, every other type is foreign; on any other topic of ours, publishers that disagree
    on the type mean one of them is not ours, so all its types are named.

    Args:
        topic: The topic's full name.
        types: The type names discovery reports for it.
    """
    expected = own_type(topic)
    if expected is not None:
        return [t for t in types if t != expected]
    return list(types) if len(types) > 1 else []


def skipped_file(bag: Path) -> Path:
    """Where the recorder lists the topics it skipped: ``<bag stem>.skipped.json`` beside the bag.

    Args:
        bag: The bag's path (``session.mcap``).
    """
    return bag.with_name(f"{bag.stem}.skipped.json")


def foreign_file(bag: Path) -> Path:
    """Where the recorder lists topics of ours offered with a foreign type: ``<bag stem>.foreign.json``.

    Args:
        bag: The bag's path (``session.mcap``).
    """
    return bag.with_name(f"{bag.stem}.foreign.json")
