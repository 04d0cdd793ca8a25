"""The client side of move_group's four services, with timeouts that end in a refusal, never a hang."""

from __future__ import annotations

import contextlib
import os
import time
from typing import Any

import rclpy
from moveit_msgs.srv import ApplyPlanningScene, GetCartesianPath, GetMotionPlan, GetPlanningScene
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from cosim_validation.controllers.moveit_spec import MoveItSettings
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.live.ros.service_call import call_spinning, spin_until

#: The services the controller calls, by the names move_group serves them under (its default capabilities
#: MoveGroupPlanService, MoveGroupCartesianPathService, ApplyPlanningSceneService and
#: MoveGroupGetPlanningSceneService).
SERVICES = {
    "plan": ("plan_kinematic_path", GetMotionPlan),
    "cartesian": ("compute_cartesian_path", GetCartesianPath),
    "scene": ("apply_planning_scene", ApplyPlanningScene),
    "get_scene": ("get_planning_scene", GetPlanningScene),
}
#: Parameters only the project's stand-in move_group has (its test switches: every Cartesian path cut to a fraction,
#: every joint-space request answered with an error code)
STAND_IN_PARAMETERS = ("cartesian_fraction", "plan_error")


class MoveGroupClient:
    """A ROS context, a node and the four service clients in move_group's domain.

    Args:
        settings: Namespace, domain and timeouts.
    """

    def __init__(self, settings: MoveItSettings) -> None:
        self.settings = settings
        env_domain = os.environ.get("ROS_DOMAIN_ID", "0")
        self.domain_id = settings.domain_id if settings.domain_id is not None else int(env_domain or 0)
        self.ros = Context()
        rclpy.init(context=self.ros, domain_id=self.domain_id)
        self.node = Node("cosim_moveit_planner_client", context=self.ros)
        self.executor = SingleThreadedExecutor(context=self.ros)
        self.executor.add_node(self.node)
        self.clients: dict[str, Any] = {
            key: self.node.create_client(kind, settings.service(name)) for key, (name, kind) in SERVICES.items()
        }
        self._ready = False

    def wait(self) -> None:
        """Wait for every service (at most ``service_timeout_s`` in all).

        Raises:
            PlanningError: ``move_group_unavailable``, naming the first service not served in time.
        """
        if self._ready:
            return
        deadline = time.monotonic() + self.settings.service_timeout_s
        for client in self.clients.values():
            if not spin_until(self.executor, client.service_is_ready, deadline):
                raise PlanningError(
                    f"move_group is not there: service {client.srv_name} not available within "
                    f"{self.settings.service_timeout_s:g} s (ROS_DOMAIN_ID {self.domain_id})",
                    "move_group_unavailable",
                )
        self._ready = True

    def call(self, key: str, request: Any) -> Any:
        """Send ``request`` to the service ``key`` (``plan``, ``cartesian``, ``scene``, ``get_scene``) and wait.

        Args:
            key: Which service: ``plan`` (GetMotionPlan), ``cartesian`` (GetCartesianPath), ``scene``
                (ApplyPlanningScene) or ``get_scene`` (GetPlanningScene).
            request: The service's request message (a ``Request`` of that service type).

        Raises:
            PlanningError: ``move_group_unavailable`` (services not there), ``move_group_timeout`` (no answer in
                ``call_timeout_s``; the services are looked up again before the next call).
        """
        self.wait()
        client = self.clients[key]
        future = client.call_async(request)
        if not spin_until(self.executor, future.done, time.monotonic() + self.settings.call_timeout_s):
            client.remove_pending_request(future)
            self._ready = False
            raise PlanningError(
                f"move_group did not answer {client.srv_name} within {self.settings.call_timeout_s:g} s",
                "move_group_timeout",
            )
        return future.result()

    def is_stand_in(self, timeout_s: float = 1.5) -> bool:
        """Whether the move_group answering is this project's stand-in: its node has the stand-in's parameters.

        MoveIt's move_group has none of :data:`STAND_IN_PARAMETERS`; the stand-in declares them (its test switches).

        Args:
            timeout_s: Longest wait for move_group's ``list_parameters`` and its answer [s, wall].
        """
        from rcl_interfaces.srv import ListParameters

        client: Any = self.node.create_client(ListParameters, self.settings.service("move_group/list_parameters"))
        try:
            answer = call_spinning(client, self.executor, ListParameters.Request(), time.monotonic() + timeout_s)
            return answer is not None and set(STAND_IN_PARAMETERS) <= set(answer.result.names)
        finally:
            self.node.destroy_client(client)

    def service_name(self, key: str) -> str:
        """The full name of the service ``key`` (``/robot1/get_planning_scene``), for messages.

        Args:
            key: Which service (see :meth:`call`).
        """
        return str(self.clients[key].srv_name)

    def close(self) -> None:
        """Leave the domain (never raises)."""
        with contextlib.suppress(Exception):
            self.executor.shutdown(timeout_sec=1.0)
        with contextlib.suppress(Exception):
            self.node.destroy_node()
        with contextlib.suppress(Exception):
            rclpy.shutdown(context=self.ros)
