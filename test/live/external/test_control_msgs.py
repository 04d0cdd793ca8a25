"""control_msgs' FollowJointTrajectory is available after `make setup`: built from the vendored public definitions
(third_party/control_msgs, release 6.8.0) only when no ROS 2 install provides control_msgs, so exactly one
control_msgs is on the ament path, and its result codes are trajectory_follow's."""

from __future__ import annotations

import os
from pathlib import Path

from cosim_validation.live.external import trajectory_follow

# control_msgs 6.8.0, action/FollowJointTrajectory.action and msg/JointTolerance.msg
GOAL_FIELDS = {
    "trajectory": "trajectory_msgs/JointTrajectory",
    "multi_dof_trajectory": "trajectory_msgs/MultiDOFJointTrajectory",
    "path_tolerance": "sequence<control_msgs/JointTolerance>",
    "component_path_tolerance": "sequence<control_msgs/JointComponentTolerance>",
    "goal_tolerance": "sequence<control_msgs/JointTolerance>",
    "component_goal_tolerance": "sequence<control_msgs/JointComponentTolerance>",
    "goal_time_tolerance": "builtin_interfaces/Duration",
}
CODES = (
    "SUCCESSFUL",
    "INVALID_GOAL",
    "INVALID_JOINTS",
    "OLD_HEADER_TIMESTAMP",
    "PATH_TOLERANCE_VIOLATED",
    "GOAL_TOLERANCE_VIOLATED",
)


def test_the_action_has_its_documented_fields_and_codes() -> None:
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance

    assert FollowJointTrajectory.Goal.get_fields_and_field_types() == GOAL_FIELDS
    assert FollowJointTrajectory.Result.get_fields_and_field_types() == {
        "error_code": "int32",
        "error_string": "string",
    }
    assert JointTolerance.get_fields_and_field_types() == {
        "name": "string",
        "position": "double",
        "velocity": "double",
        "acceleration": "double",
    }
    for name in CODES:
        assert getattr(FollowJointTrajectory.Result, name) == getattr(trajectory_follow, name), name


def test_exactly_one_control_msgs_is_on_the_ament_path() -> None:
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    providers = [p for p in prefixes if (Path(p) / "share" / "control_msgs" / "package.xml").is_file()]
    assert len(providers) == 1, providers


def test_the_vendored_definitions_are_the_cited_release(repo_root: Path) -> None:
    vendored = repo_root / "third_party" / "control_msgs"
    assert "Redistribution and use in source and binary forms" in (vendored / "LICENSE").read_text()
    assert "13dacdd8748264b6cd7cbbc9893c18c90e24be00" in (vendored / "SOURCE.md").read_text()
    built = sorted(p.name for p in [*vendored.glob("msg/*.msg"), *vendored.glob("action/*.action")])
    listed = (vendored / "CMakeLists.txt").read_text()
    assert built == ["FollowJointTrajectory.action", "JointComponentTolerance.msg", "JointTolerance.msg"]
    assert all(f'/{name}"' in listed for name in built)
