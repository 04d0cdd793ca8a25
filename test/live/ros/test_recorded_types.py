"""The recorder takes only well-formed types of the packages it knows that its typestore defines."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.live.ros.bag import project_typestore
from cosim_validation.live.ros.recorded_types import (
    OWN_TOPIC_TYPES,
    RECORDED_PACKAGES,
    foreign_file,
    foreign_types,
    skip_reason,
    skipped_file,
)


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


@pytest.mark.parametrize(
    ("topic", "types", "foreign"),
    [
        ("/cosim/expected", ["std_msgs/msg/String"], ["std_msgs/msg/String"]),  # a stranger came first
        (
            "/cosim/expected",
            ["cosim_validation_interfaces/msg/RobotState", "std_msgs/msg/String"],
            ["std_msgs/msg/String"],
        ),
        ("/cosim/expected", ["cosim_validation_interfaces/msg/RobotState"], []),
        ("/clock", ["std_msgs/msg/Header"], ["std_msgs/msg/Header"]),
        ("/cosim/virtual/joint_states", ["std_msgs/msg/String"], ["std_msgs/msg/String"]),
        ("/cosim/physical/tip_pose", ["geometry_msgs/msg/PoseStamped"], []),
        ("/cosim/markers/targets", ["visualization_msgs/msg/MarkerArray"], []),  # a topic of free type
        (
            "/cosim/markers/targets",
            ["visualization_msgs/msg/MarkerArray", "std_msgs/msg/String"],
            ["visualization_msgs/msg/MarkerArray", "std_msgs/msg/String"],
        ),
    ],
)
def test_a_topic_of_ours_with_a_type_that_is_not_ours_is_foreign(
    topic: str, types: list[str], foreign: list[str]
) -> None:
    assert foreign_types(topic, types) == foreign


def test_own_types_are_in_the_typestore_and_the_foreign_file_sits_beside_the_bag() -> None:
    assert set(OWN_TOPIC_TYPES.values()) <= set(project_typestore().types)
    assert foreign_file(Path("/r/session.mcap")) == Path("/r/session.foreign.json")
