"""The task supervisor's ROS interface, served by the controller node (the supervisor runs in its control loop).

- ``/cosim/supervisor/state`` (cosim_validation_interfaces/SupervisorState): every step, stamped like the expected
  state of the setpoint it decided;
- ``/cosim/supervisor/transitions`` (SupervisorTransition): every transition taken;
- ``/cosim/supervisor/tip_wrench``, ``/cosim/supervisor/holder_wrench`` (geometry_msgs/WrenchStamped, base_link):
  the needle force model's axial force on the tip and at the holder, from the feeding robot's measurement;
- ``/cosim/supervisor/request`` (service SupervisorRequest): abort, recover, teleoperation, auto;
- ``/cosim/supervisor/teleoperation/twist`` (geometry_msgs/TwistStamped, tip in base_link) and
  ``/cosim/supervisor/teleoperation/joints`` (sensor_msgs/JointState): what TeleoperationMode follows when the
  supervisor's scenario has no teleoperation script.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from geometry_msgs.msg import TwistStamped, WrenchStamped
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.assembly.supervision import Decision, Supervision
from cosim_validation.exceptions import InputError
from cosim_validation.ros import convert
from cosim_validation.ros.qos import RESULT, STATE, to_rclpy
from cosim_validation.supervisor.needle_force import axial_force_vectors
from cosim_validation.supervisor.teleoperation_input import LatestTeleoperation
from cosim_validation_interfaces.msg import SupervisorState, SupervisorTransition
from cosim_validation_interfaces.srv import SupervisorRequest

PREFIX = "/cosim/supervisor"


class SupervisorIO:
    """Publishes each step of the supervised cases and takes requests and teleoperation commands.

    Args:
        node: The controller node.
        supervision: The assembly's supervisor.
        group: Callback group of the service and the teleoperation subscriptions.
    """

    def __init__(self, node: Node, supervision: Supervision, group: CallbackGroup) -> None:
        self.node = node
        self.supervision = supervision
        self.state_pub = node.create_publisher(SupervisorState, f"{PREFIX}/state", to_rclpy(STATE))
        self.transition_pub = node.create_publisher(SupervisorTransition, f"{PREFIX}/transitions", to_rclpy(RESULT))
        self.tip_pub = node.create_publisher(WrenchStamped, f"{PREFIX}/tip_wrench", to_rclpy(STATE))
        self.holder_pub = node.create_publisher(WrenchStamped, f"{PREFIX}/holder_wrench", to_rclpy(STATE))
        node.create_service(SupervisorRequest, f"{PREFIX}/request", self._on_request, callback_group=group)
        self.teleoperation: LatestTeleoperation | None = None
        if supervision.teleoperation is None:  # no script: follow the topics
            self.teleoperation = LatestTeleoperation(supervision.kinematics.n_joints)
            supervision.teleoperation = self.teleoperation
            qos = to_rclpy(STATE)
            node.create_subscription(TwistStamped, f"{PREFIX}/teleoperation/twist", self._on_twist, qos,
                                     callback_group=group)  # fmt: skip
            node.create_subscription(JointState, f"{PREFIX}/teleoperation/joints", self._on_joints, qos,
                                     callback_group=group)  # fmt: skip

    def publish(self, stamp_ns: int, decision: Decision) -> None:
        """The step that decided the setpoint stamped ``stamp_ns``: state, transition, needle wrenches."""
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
            self.node.get_logger().warning(f"ignored: {exc}")

    def _on_joints(self, msg: Any) -> None:
        assert self.teleoperation is not None
        try:
            sample = convert.joint_state_from_msg(msg, self.supervision.kinematics.joint_names)
            self.teleoperation.joints(np.asarray(sample.position))
        except InputError as exc:
            self.node.get_logger().warning(f"ignored: {exc}")
