"""The driver node shared by virtual_driver and physical_driver: one RobotBackend behind ROS topics.

- ``~/reset`` (cosim_validation_interfaces/ResetRobot): reseed the robot's noise with the case's seed and put
  the arm at rest at the case's first setpoint.
- ``/cosim/<robot>/command`` (sensor_msgs/JointState): stream setpoints; each is reached linearly by its
  stamp (first-order hold, as the backend's real-time joint interface) by the same
  :class:`~cosim_validation.assembly.BackendPort` the batch runner drives: the first command after a reset
  only samples.
- ``/cosim/<robot>/joint_states`` (sensor_msgs/JointState): measured joints, stamped like the command;
  ``tip_pose`` (geometry_msgs/PoseStamped): actual tip (simulator ground truth or tracker); ``marker``
  (TrackedMarker): the tool's marker as an optical tracker saw it: one of each per sample, NaN where unknown
  (ros/sample_topics.py), so whoever joins them never waits for a message that will not come.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.assembly import BackendPort
from cosim_validation.assembly.robots import build_robot
from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.node_runtime import declare_parameters
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import COMMAND, RESULT, to_rclpy
from cosim_validation.live.ros.sample_topics import SamplePublisher
from cosim_validation.live.session.node_parameters import DriverParams, params_type
from cosim_validation_interfaces.msg import Alert
from cosim_validation_interfaces.srv import ResetRobot


class RobotDriver(Node):
    """Wraps the backend named by the ``backend`` parameter."""

    def __init__(self, executable: str, role: RobotRole) -> None:
        super().__init__(executable)
        params = declare_parameters(self, params_type(executable, DriverParams))
        self.role = role
        config = load_case_config(resolve_resource(params.config))
        seed = None if params.seed < 0 else params.seed
        self._backend = build_robot(config, params.backend, seed=seed)
        self._port = BackendPort(self._backend, role)
        self._names = self._backend.joint_names
        prefix = f"/cosim/{role.label}"
        self._samples = SamplePublisher(self, prefix, self._names)
        self._alerts = self.create_publisher(Alert, "/cosim/alerts", to_rclpy(RESULT))
        self.create_subscription(JointState, f"{prefix}/command", self._on_command, to_rclpy(COMMAND))
        self.create_service(ResetRobot, f"{prefix}/reset", self._on_reset)
        self.get_logger().info(f"{role.label} robot: backend {self._backend.name!r}, joints {list(self._names)}")

    def _on_reset(self, request: Any, response: Any) -> Any:
        return answer_reset(self._port, self._names, request, response)

    def _on_command(self, msg: JointState) -> None:
        try:
            command = convert.joint_state_from_msg(msg, self._names)
            self._port.send(command.t_ns, command.position)
        except CosimError as exc:  # a bad command is reported, never fatal to the graph
            self._alert(str(exc))
            return
        self._samples.publish(command.t_ns, self._port.latest)

    def _alert(self, message: str) -> None:
        self.get_logger().error(message)
        self._alerts.publish(
            Alert(level=Alert.ERROR, robot=int(self.role), source=self.get_name(), code="bad_command", message=message)
        )

    def close(self) -> None:
        """Release the engine."""
        self._backend.close()


def reset_joints(request: Any, names: Sequence[str]) -> np.ndarray:
    """The joints a ResetRobot request asks for, in the order of ``names`` (rad, or m for a prismatic joint).

    Args:
        request: The ResetRobot request: joint names and positions [rad] (or [m] for a prismatic joint).
        names: The robot's joint names, in the order wanted.

    Raises:
        InputError: A joint of ``names`` is missing, or the request gives another number of positions than of
            joint names.
    """
    as_state = JointState(name=list(request.joint_names), position=list(request.position))
    return convert.joint_state_from_msg(as_state, tuple(names)).position


def answer_reset(port: BackendPort, names: Sequence[str], request: Any, response: Any) -> Any:
    """Reset the robot behind ``port`` as a ResetRobot request asks and fill in the response.

    The request gives joints by name and the case's seed. The response holds success and the joints the robot
    rests at, or the error's message (the driver lives on).

    Args:
        port: The port of the robot's backend.
        names: The robot's joint names, in the port's order.
        request: The ResetRobot request: the case's id and seed, joints by name [rad] (or [m] for a prismatic joint).
        response: The ResetRobot response to fill in and return.
    """
    try:
        q = reset_joints(request, names)
        port.reset(str(request.test_id), q, int(request.seed))
    except CosimError as exc:
        response.success, response.message = False, str(exc)
        return response
    rest = port.reset_sample
    assert rest is not None
    response.success = True
    response.position = [float(v) for v in rest.q_measured]
    return response
