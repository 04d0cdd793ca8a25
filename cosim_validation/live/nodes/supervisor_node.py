"""supervisor: the task supervisor's ROS node, composed into the controller's process (docs/SUPERVISOR.md).

The supervisor decides every setpoint inside the controller's control loop (no latency between a measurement
and the hold); this node is its face in the ROS graph: a node of its own named ``supervisor`` (``ros2 node list``
shows ``/supervisor``), built by the controller node, spun by the same executor in the same process (like ROS 2
composition), and called in-process by the loop once per period. It owns:

- ``/cosim/supervisor/state`` (cosim_validation_interfaces/SupervisorState): every step, stamped like the expected
  state of the setpoint it decided;
- ``/cosim/supervisor/transitions`` (SupervisorTransition): every transition taken;
- ``/cosim/supervisor/tip_wrench``, ``/cosim/supervisor/holder_wrench`` (geometry_msgs/WrenchStamped, base_link):
  the needle force model's axial force on the tip and at the holder, from the feeding robot's measurement;
- ``/cosim/supervisor/request`` (service SupervisorRequest): abort, recover, teleoperation, auto;
- ``/cosim/supervisor/teleoperation/twist`` (geometry_msgs/TwistStamped, tip in base_link) and
  ``/cosim/supervisor/teleoperation/joints`` (sensor_msgs/JointState): what TeleoperationMode follows when the
  supervisor's scenario has no teleoperation script;
- its parameters: ``teleoperation_stale_s`` (a teleoperation command older than this, wall time, is no command;
  default 0.5 s) and, read-only, what the controller's assembly loaded: ``configuration``, ``machine``,
  ``scenario`` (the controller's ``supervisor`` and ``supervisor_scenario`` parameters choose them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from geometry_msgs.msg import TwistStamped, WrenchStamped
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.assembly.supervision import Decision, Supervision
from cosim_validation.common.exceptions import InputError
from cosim_validation.live.nodes.node_runtime import declare_parameters
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import RESULT, STATE, to_rclpy
from cosim_validation.live.session.node_parameters import SupervisorParams
from cosim_validation.live.session.parameter_struct import NodeParameterError
from cosim_validation.supervisor.needle_force import axial_force_vectors
from cosim_validation.supervisor.teleoperation_input import LatestTeleoperation
from cosim_validation_interfaces.msg import SupervisorState, SupervisorTransition
from cosim_validation_interfaces.srv import SupervisorRequest

PREFIX = "/cosim/supervisor"
NAME = "supervisor"


class SupervisorNode(Node):
    """Publishes each step of the supervised cases and takes requests and teleoperation commands.

    Args:
        supervision: The controller's assembly's supervisor.
        context: The controller's rclpy context (same process, same executor).
        cli_args: This node's own ROS arguments (``["--ros-args", "-p", ...]``), as composition gives them.

    Raises:
        NodeParameterError: A bad parameter (``teleoperation_stale_s`` is not a positive double, or an unknown one).
    """

    def __init__(self, supervision: Supervision, context: Any = None, cli_args: list[str] | None = None) -> None:
        super().__init__(NAME, context=context, cli_args=cli_args)
        try:  # checked first: a bad value is the node's error, whatever was loaded
            stale_s = declare_parameters(self, SupervisorParams).teleoperation_stale_s
        except NodeParameterError:
            self.destroy_node()
            raise
        self.supervision = supervision
        scenario = supervision.scenario_path
        loaded = {
            "configuration": str(supervision.config_path),
            "machine": supervision.machine.name,
            "scenario": str(scenario) if scenario is not None else "",
        }
        for name, value in loaded.items():
            descriptor = ParameterDescriptor(read_only=True, description="loaded by the controller (read-only)")
            self.declare_parameter(name, value, descriptor)
        group = MutuallyExclusiveCallbackGroup()  # requests and teleoperation, answered while a case runs
        self.state_pub = self.create_publisher(SupervisorState, f"{PREFIX}/state", to_rclpy(STATE))
        self.transition_pub = self.create_publisher(SupervisorTransition, f"{PREFIX}/transitions", to_rclpy(RESULT))
        self.tip_pub = self.create_publisher(WrenchStamped, f"{PREFIX}/tip_wrench", to_rclpy(STATE))
        self.holder_pub = self.create_publisher(WrenchStamped, f"{PREFIX}/holder_wrench", to_rclpy(STATE))
        self.create_service(SupervisorRequest, f"{PREFIX}/request", self._on_request, callback_group=group)
        self.teleoperation: LatestTeleoperation | None = None
        if supervision.teleoperation is None:  # no script: follow the topics
            self.teleoperation = LatestTeleoperation(supervision.kinematics.n_joints, stale_s)
            supervision.teleoperation = self.teleoperation
            qos = to_rclpy(STATE)
            self.create_subscription(
                TwistStamped, f"{PREFIX}/teleoperation/twist", self._on_twist, qos, callback_group=group
            )
            self.create_subscription(
                JointState, f"{PREFIX}/teleoperation/joints", self._on_joints, qos, callback_group=group
            )

    def publish(self, stamp_ns: int, decision: Decision) -> None:
        """The step that decided the setpoint stamped ``stamp_ns``: state, transition, needle wrenches.

        Args:
            stamp_ns: The setpoint's stamp [ns], which stamps every message.
            decision: The supervisor's :class:`~cosim_validation.assembly.supervision.Decision` of that step; nothing is
                published while no supervised case runs.
        """
        case = self.supervision.current
        if case is None:
            return
        status = decision.status
        header = convert.time_to_msg(stamp_ns)
        msg = SupervisorState(
            test_id=case.test_id,
            machine=self.supervision.machine.name,
            state=status.state,
            mode=int(status.mode),
            stage=int(status.stage) if status.stage is not None else 0,
            exception_cleared=status.exception_cleared,
            conditions=list(status.conditions),
            events=list(status.events),
            robot=case.robot.label if case.robot is not None else "",
            clearance_m=case.clearance_m,
            tip_force_n=case.tip_force_n,
            holder_force_n=case.holder_force_n,
            tip_tracked=case.tip_tracked,
        )
        msg.header.stamp, msg.header.frame_id = header, "base_link"
        self.state_pub.publish(msg)
        if status.transition:
            transition = SupervisorTransition(
                test_id=case.test_id,
                source=status.previous_state,
                target=status.state,
                transition=status.transition,
                events=list(status.events),
                commands=list(status.commands),
            )
            transition.header.stamp = header
            self.transition_pub.publish(transition)
        for publisher, force_n in ((self.tip_pub, case.tip_force_n), (self.holder_pub, case.holder_force_n)):
            vector = axial_force_vectors([force_n], case.holder_m, case.tip_m)[0]
            wrench = WrenchStamped()
            wrench.header.stamp, wrench.header.frame_id = header, "base_link"
            wrench.wrench.force.x, wrench.wrench.force.y, wrench.wrench.force.z = (float(v) for v in vector)
            publisher.publish(wrench)

    def _on_request(self, request: Any, response: Any) -> Any:
        case = self.supervision.current
        if case is None:
            response.accepted, response.message = False, "no supervised case is running"
            return response
        try:
            case.request(str(request.request))
        except InputError as exc:
            response.accepted, response.message = False, str(exc)
            return response
        response.accepted, response.state = True, case.status.state
        response.message = f"{request.request} is an event of the next step of {case.test_id}"
        return response

    def _on_twist(self, msg: Any) -> None:
        assert self.teleoperation is not None
        linear, angular = msg.twist.linear, msg.twist.angular
        try:
            self.teleoperation.twist([linear.x, linear.y, linear.z], [angular.x, angular.y, angular.z])
        except InputError as exc:
            self.get_logger().warning(f"ignored: {exc}")

    def _on_joints(self, msg: Any) -> None:
        assert self.teleoperation is not None
        try:
            sample = convert.joint_state_from_msg(msg, self.supervision.kinematics.joint_names)
            self.teleoperation.joints(np.asarray(sample.position))
        except InputError as exc:
            self.get_logger().warning(f"ignored: {exc}")
