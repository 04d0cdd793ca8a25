"""Whether a ros2_control controller manager answers on this ROS domain (for ``cosim doctor``).

One bounded call of ``<controller_manager>/list_controllers`` from a node of its own, torn down afterwards.
"""

from __future__ import annotations

import time
from typing import Any, NamedTuple

from cosim_validation.live.ros.ros2_control import ListedController
from cosim_validation.live.ros.service_call import call_spinning

PROBE_TIMEOUT_S = 1.5


class ManagerAnswer(NamedTuple):
    """What a controller manager said.

    Attributes:
        controllers: The controllers it lists.
        stand_in: Whether it is this project's emulator (it serves ``<manager>/emulation/...``), not a real stack.
    """

    controllers: list[ListedController]
    stand_in: bool


def probe_controller_manager(
    manager: str = "/controller_manager", timeout_s: float = PROBE_TIMEOUT_S
) -> ManagerAnswer | None:
    """The controllers ``manager`` lists and whether it is the stand-in; None if nothing answers in time.

    The wait is at most ``timeout_s``.

    Args:
        manager: The controller manager's node name; its ``list_controllers`` service is called.
        timeout_s: How long to wait for the service and its answer, in all [s, wall].

    Raises:
        ImportError: rclpy or controller_manager_msgs is not importable.
    """
    import rclpy
    from controller_manager_msgs.srv import ListControllers
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    context = Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("cosim_doctor_probe", context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        client: Any = node.create_client(ListControllers, f"{manager.rstrip('/')}/list_controllers")
        answer = call_spinning(client, executor, ListControllers.Request(), time.monotonic() + timeout_s)
        if answer is None:
            return None
        listed = [ListedController(c.name, c.state, c.type, tuple(c.claimed_interfaces)) for c in answer.controller]
        return ManagerAnswer(listed, serves_emulation(node, manager))  # its services came with list_controllers
    finally:
        context.try_shutdown()


def serves_emulation(node: Any, prefix: str) -> bool:
    """Whether a service under ``<prefix>/emulation/`` is in ``node``'s graph: the mark of this project's stand-ins.

    The controller manager emulator serves ``emulation/reset``; rokae_ros2 and the dVRK serve nothing there.

    Args:
        node: An rclpy node in the domain to look at.
        prefix: The manager's or arm's name, e.g. ``/controller_manager``.
    """
    mark = f"{prefix.rstrip('/')}/emulation/"
    return any(name.startswith(mark) for name, _ in node.get_service_names_and_types())
