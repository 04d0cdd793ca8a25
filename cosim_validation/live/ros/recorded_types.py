"""Which message types the recorder subscribes to: the project's interfaces and the standard packages it uses.

Topic types come from DDS discovery, that is from any participant in the session's domain. The recorder
imports a type's Python module to subscribe, so it only takes types it knows: well-formed
``package/msg/Name`` names of the packages below that the bag's typestore (ROS 2 Kilted + the project's
interfaces and crtk_msgs) defines. Any other topic is skipped and reported (log and ``summary.json``).
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


def skipped_file(bag: Path) -> Path:
    """Where the recorder lists the topics it skipped: ``<bag stem>.skipped.json`` beside the bag."""
    return bag.with_name(f"{bag.stem}.skipped.json")
