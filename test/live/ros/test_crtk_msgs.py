"""crtk_msgs is available after `make setup`: the public CRTK definitions (third_party/crtk_msgs, release 1.3.0),
built only when no ROS 2 install provides them, so exactly one crtk_msgs is on the ament path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Field names and ROS types of the CRTK interfaces the drivers use, as documented upstream
# (collaborative-robotics/crtk_msgs msg/OperatingState.msg, msg/StringStamped.msg, srv/TriggerOperatingState.srv;
# ../shared/ROBOTS.md section 2.2).
DOCUMENTED_FIELDS = {
    "OperatingState": {"header": "std_msgs/Header", "state": "string", "is_homed": "boolean", "is_busy": "boolean"},
    "StringStamped": {"header": "std_msgs/Header", "string": "string"},
    "CartesianState": {
        "header": "std_msgs/Header",
        "pose": "geometry_msgs/Pose",
        "pose_is_valid": "std_msgs/Bool",
        "twist": "geometry_msgs/Twist",
        "twist_is_valid": "std_msgs/Bool",
        "wrench": "geometry_msgs/Wrench",
        "wrench_is_valid": "std_msgs/Bool",
    },
    "SetpointMode": {"value": "uint8"},
}


@pytest.mark.parametrize("name", sorted(DOCUMENTED_FIELDS))
def test_the_crtk_messages_import_with_their_documented_fields(name: str) -> None:
    import crtk_msgs.msg

    msg_type = getattr(crtk_msgs.msg, name)
    assert msg_type.get_fields_and_field_types() == DOCUMENTED_FIELDS[name]


def test_an_operating_state_round_trips_through_the_wire_format() -> None:
    from crtk_msgs.msg import OperatingState
    from rclpy.serialization import deserialize_message, serialize_message

    sent = OperatingState(state="ENABLED", is_homed=True, is_busy=False)
    sent.header.frame_id = "PSM1"
    got = deserialize_message(serialize_message(sent), OperatingState)
    assert (got.state, got.is_homed, got.is_busy, got.header.frame_id) == ("ENABLED", True, False, "PSM1")
    assert OperatingState().state == ""  # no default state: a peer that never published is told apart


def test_the_trigger_service_answers_an_operating_state() -> None:
    from crtk_msgs.srv import TriggerOperatingState

    assert TriggerOperatingState.Request.get_fields_and_field_types() == {}
    assert TriggerOperatingState.Response.get_fields_and_field_types() == {
        "operating_state": "crtk_msgs/OperatingState"
    }


def test_exactly_one_crtk_msgs_is_on_the_ament_path() -> None:
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    providers = [p for p in prefixes if (Path(p) / "share" / "crtk_msgs" / "package.xml").is_file()]
    assert len(providers) == 1, providers


def test_the_vendored_definitions_are_the_cited_release(repo_root: Path) -> None:
    vendored = repo_root / "third_party" / "crtk_msgs"
    assert "MIT License" in (vendored / "LICENSE").read_text()
    assert "14b04fcf0d5f3fe32d2b4d0dddd3d247a60e37c3" in (vendored / "SOURCE.md").read_text()
    built = sorted(p.name for p in [*vendored.glob("msg/*.msg"), *vendored.glob("srv/*.srv")])
    listed = (vendored / "CMakeLists.txt").read_text()
    assert len(built) == 11
    assert all(f'/{name}"' in listed for name in built)
