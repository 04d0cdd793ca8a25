"""``cosim doctor`` says whether a ros2_control controller manager answers on this shell's ROS domain (the real arm's
rokae_ros2) or only the stand-in is available, within its bounded wait."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from cosim_validation.cli.doctor import check_controller_manager

pytestmark = pytest.mark.ros


@pytest.fixture(params=[False, True], ids=["real", "stand_in"])
def manager(rclpy_context: Any, request: pytest.FixtureRequest) -> Iterator[bool]:
    """A controller manager answering /controller_manager/list_controllers with an active arm_controller; as the
    project's emulator does, also serving /controller_manager/emulation/reset (``request.param``)."""
    from controller_manager_msgs.msg import ControllerState
    from controller_manager_msgs.srv import ListControllers
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from cosim_validation_interfaces.srv import ResetRobot

    node = Node("controller_manager", context=rclpy_context)

    def answer(request: Any, response: Any) -> Any:
        response.controller = [ControllerState(name="arm_controller", state="active")]
        return response

    node.create_service(ListControllers, "/controller_manager/list_controllers", answer)
    if request.param:
        node.create_service(ResetRobot, "/controller_manager/emulation/reset", lambda req, res: res)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    threading.Thread(target=executor.spin, daemon=True).start()
    try:
        yield bool(request.param)
    finally:
        executor.shutdown()
        node.destroy_node()


def test_with_no_controller_manager_only_the_stand_in_is_named(ros_domain: int) -> None:
    finding = check_controller_manager()  # its wait is bounded by the 1.5 s the detail names
    assert (finding.found, finding.required) == (False, False)
    assert finding.detail == (
        f"no /controller_manager/list_controllers answered on ROS_DOMAIN_ID {ros_domain} within 1.5 s: only the "
        "stand-in (controller_manager_emulator, config/er3pro_ros2_control.yaml)"
    )


def test_a_controller_manager_that_answers_is_found_with_its_controllers(manager: bool, ros_domain: int) -> None:
    # the wait is what doctor allows; finding the manager is the point, however long discovery takes under load (a
    # loaded CI machine took more than the default 1.5 s)
    finding = check_controller_manager(timeout_s=30.0)
    assert finding.found
    stand_in = " (the project's stand-in, controller_manager_emulator: not rokae_ros2)" if manager else ""
    assert finding.detail == f"ROS_DOMAIN_ID {ros_domain}: arm_controller active{stand_in}"
