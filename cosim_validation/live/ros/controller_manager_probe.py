"""Whether a ros2_control controller manager answers on this ROS domain (for ``cosim doctor``).

One bounded call of ``<controller_manager>/list_controllers`` from a node of its own, torn down afterwards.
"""

from __future__ import annotations

import time
from typing import Any

from cosim_validation.live.ros.ros2_control import ListedController

PROBE_TIMEOUT_S = 1.5


def probe_controller_manager(
    manager: str = "/controller_manager", timeout_s: float = PROBE_TIMEOUT_S
) -> list[ListedController] | None:
    """The controllers ``manager`` lists, or None if nothing answers within ``timeout_s`` [s].

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
        deadline = time.monotonic() + timeout_s
        while not client.service_is_ready() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        if not client.service_is_ready():
            return None
        future = client.call_async(ListControllers.Request())
        while not future.done() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        answer = future.result() if future.done() else None
        if answer is None:
            return None
        return [ListedController(c.name, c.state, c.type, tuple(c.claimed_interfaces)) for c in answer.controller]
    finally:
        context.try_shutdown()
