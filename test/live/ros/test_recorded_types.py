"""The recorder takes only well-formed types of the packages it knows that its typestore defines."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.live.ros.bag import project_typestore
from cosim_validation.live.ros.recorded_types import RECORDED_PACKAGES, skip_reason, skipped_file


@pytest.mark.parametrize(
    "msgtype",
    [
        "sensor_msgs/msg/JointState",
        "geometry_msgs/msg/PoseStamped",
        "rosgraph_msgs/msg/Clock",
        "diagnostic_msgs/msg/DiagnosticArray",
        "visualization_msgs/msg/MarkerArray",
        "cosim_validation_interfaces/msg/CaseStatus",
        "cosim_validation_interfaces/msg/Verdict",
    ],
)
def test_types_the_session_publishes_are_recorded(msgtype: str) -> None:
    assert skip_reason([msgtype], project_typestore().types) is None


@pytest.mark.parametrize(
    ("types", "reason"),
    [
        (["lifecycle_msgs/msg/State"], "not of a package the recorder knows"),
        (["os/msg/System"], "not of a package the recorder knows"),
        (["sensor_msgs/srv/SetCameraInfo"], "not a message type name"),
        (["sensor_msgs/msg/../../os"], "not a message type name"),
        (["sensor_msgs.msg/JointState"], "not a message type name"),
        (["sensor_msgs/msg/NoSuchMessage"], "not defined in the recorder's typestore"),
        (["sensor_msgs/msg/JointState", "std_msgs/msg/String"], "published with 2 types"),
        ([], "published with 0 types"),
    ],
)
def test_other_types_are_skipped_with_a_reason(types: list[str], reason: str) -> None:
    found = skip_reason(types, project_typestore().types)
    assert found is not None
    assert reason in found


def test_every_known_package_is_in_the_typestore() -> None:
    packages = {name.split("/")[0] for name in project_typestore().types}
    assert packages >= RECORDED_PACKAGES


def test_skipped_file_sits_beside_the_bag() -> None:
    assert skipped_file(Path("/r/session.mcap")) == Path("/r/session.skipped.json")
