"""controller_manager_msgs' ListControllers is available after `make setup`: built from the vendored public
definitions (third_party/controller_manager_msgs, ros2_control 2.54.0 of the humble branch) only when no ROS 2
install provides it, so exactly one controller_manager_msgs is on the ament path, with the fields the driver reads."""

from __future__ import annotations

import os
from pathlib import Path

# ros2_control 2.54.0, controller_manager_msgs/msg/ControllerState.msg and ChainConnection.msg
CONTROLLER_STATE = {
    "name": "string",
    "state": "string",
    "type": "string",
    "claimed_interfaces": "sequence<string>",
    "required_command_interfaces": "sequence<string>",
    "required_state_interfaces": "sequence<string>",
    "is_chainable": "boolean",
    "is_chained": "boolean",
    "reference_interfaces": "sequence<string>",
    "chain_connections": "sequence<controller_manager_msgs/ChainConnection>",
}


def test_list_controllers_has_its_documented_fields() -> None:
    from controller_manager_msgs.msg import ChainConnection, ControllerState
    from controller_manager_msgs.srv import ListControllers

    assert ListControllers.Request.get_fields_and_field_types() == {}
    assert ListControllers.Response.get_fields_and_field_types() == {
        "controller": "sequence<controller_manager_msgs/ControllerState>"
    }
    assert ControllerState.get_fields_and_field_types() == CONTROLLER_STATE
    assert ChainConnection.get_fields_and_field_types() == {
        "name": "string",
        "reference_interfaces": "sequence<string>",
    }


def test_exactly_one_controller_manager_msgs_is_on_the_ament_path() -> None:
    prefixes = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    providers = [p for p in prefixes if (Path(p) / "share" / "controller_manager_msgs" / "package.xml").is_file()]
    assert len(providers) == 1, providers


def test_the_vendored_definitions_are_the_cited_release(repo_root: Path) -> None:
    vendored = repo_root / "third_party" / "controller_manager_msgs"
    assert "Apache License" in (vendored / "LICENSE").read_text()
    source = (vendored / "SOURCE.md").read_text()
    assert "052a054b76a43544e719ae0cad0f4b10ca81bd4a" in source
    assert "tag `2.54.0`" in source
    assert "<version>2.54.0</version>" in (vendored / "package.xml").read_text()
