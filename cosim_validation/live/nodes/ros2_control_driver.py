"""ros2_control_driver: a robot's driver in the session graph that talks ros2_control to the arm (rokae_ros2).

Towards the controller it is a driver like ``physical_driver`` (``/cosim/<robot>/reset``, ``command``,
``joint_states``, ``tip_pose``, ``marker``); towards the arm it speaks to a ros2_control controller manager and
its joint trajectory controller (by default rokae_ros2's names: public repository RokaeRobot/rokae_ros2,
``rokae_hardware/config``): a start check, the setpoints as trajectories and their answers, and resets, as
:class:`~cosim_validation.live.nodes.ros2_control_arm.ControllerManagerArm` describes (the same arm code as the
``ros2_control`` robot of a campaign). A start check that fails is one error: the node exits 1 before it is ready
(the session fails cleanly).
"""

from __future__ import annotations

from typing import Any

from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.nodes.robot_driver import reset_joints
from cosim_validation.live.nodes.ros2_control_arm import ControllerManagerArm
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import COMMAND, to_rclpy
from cosim_validation.live.ros.sample_topics import SamplePublisher
from cosim_validation.live.session.node_parameters import Ros2ControlDriverParams
from cosim_validation.robots.model import RobotConfig
from cosim_validation_interfaces.srv import ResetRobot


class Ros2ControlDriver(Node):
    """One robot of the graph, driven through a ros2_control joint trajectory controller."""

    def __init__(self, executable: str = "ros2_control_driver") -> None:
        super().__init__(executable)
        p = declare_parameters(self, Ros2ControlDriverParams)
        self._names = RobotConfig.from_config(
            load_case_config(resolve_resource(p.config))["robot"]
        ).kinematics.joint_names
        self._role = RobotRole.parse(p.robot)
        prefix = f"/cosim/{self._role.label}"
        group = ReentrantCallbackGroup()
        self._arm = ControllerManagerArm(self, p, self._names, group)
        self._arm.check_start()  # before the driver's own topics: never ready for a case without the arm
        self._arm.deliver_to(SamplePublisher(self, prefix, self._names))
        sub = self.create_subscription
        sub(JointState, f"{prefix}/command", self._on_command, to_rclpy(COMMAND), callback_group=group)
        self.create_service(ResetRobot, f"{prefix}/reset", self._on_reset, callback_group=group)
        self.get_logger().info(
            f"{self._role.label} robot: {p.controller} of {self._arm.manager} ({p.command_interface})"
        )

    def _on_reset(self, request: Any, response: Any) -> Any:
        try:
            position = self._arm.reset(request, reset_joints(request, self._names))
        except CosimError as exc:
            response.success, response.message = False, str(exc)
            return response
        response.success = True
        response.position = [float(v) for v in position]
        return response

    def _on_command(self, msg: JointState) -> None:
        try:
            command = convert.joint_state_from_msg(msg, self._names)
        except CosimError as exc:
            self.get_logger().error(str(exc))
            return
        self._arm.send(command.t_ns, command.position)


def main(args: list[str] | None = None) -> int:
    """Run the ``ros2_control_driver`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation ros2_control_driver --ros-args -p config:=config/needle_insertion.yaml

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(Ros2ControlDriver, args, threads=3)


if __name__ == "__main__":
    raise SystemExit(main())
