"""The driver node shared by virtual_driver and physical_driver: one RobotBackend behind ROS topics.

- ``~/reset`` (cosim_validation_interfaces/ResetRobot): put the arm at rest at the case's first setpoint.
- ``/cosim/<robot>/command`` (sensor_msgs/JointState): stream setpoints; each is reached linearly by its
  stamp (first-order hold, as the backend's real-time joint interface), exactly as the batch runner's
  :func:`cosim_validation.sim.execute.run_samples` does: the first command after a reset only samples.
- ``/cosim/<robot>/joint_states`` (sensor_msgs/JointState): measured joints, stamped like the command.
- ``/cosim/<robot>/tip_pose`` (geometry_msgs/PoseStamped): actual tip (simulator ground truth or tracker).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.config import load_case_config, resolve_resource
from cosim_validation.exceptions import CosimError
from cosim_validation.nodes.node_runtime import declare_parameters
from cosim_validation.record import RobotRole
from cosim_validation.robot import RobotConfig
from cosim_validation.ros import convert
from cosim_validation.ros.qos import COMMAND, RESULT, STATE, to_rclpy
from cosim_validation.sim import make_backend
from cosim_validation_interfaces.msg import Alert
from cosim_validation_interfaces.srv import ResetRobot


class RobotDriver(Node):
    """Wraps the backend named by the ``backend`` parameter."""

    def __init__(self, executable: str, role: RobotRole) -> None:
        super().__init__(executable)
        params = declare_parameters(self, executable)
        self.role = role
        config = load_case_config(resolve_resource(params["config"]))
        self._kin = RobotConfig.from_config(config["robot"]).kinematics
        seed = int(params["seed"])
        self._backend = make_backend(params["backend"], config, self._kin, seed=None if seed < 0 else seed)
        self._names = self._backend.joint_names
        self._last_ns: int | None = None
        self._first: Any = None  # the sample read at reset, not yet handed out
        prefix = f"/cosim/{role.label}"
        self._joints_pub = self.create_publisher(JointState, f"{prefix}/joint_states", to_rclpy(STATE))
        self._tip_pub = self.create_publisher(convert.pose_stamped_msg_type(), f"{prefix}/tip_pose", to_rclpy(STATE))
        self._alerts = self.create_publisher(Alert, "/cosim/alerts", to_rclpy(RESULT))
        self.create_subscription(JointState, f"{prefix}/command", self._on_command, to_rclpy(COMMAND))
        self.create_service(ResetRobot, f"{prefix}/reset", self._on_reset)
        self.get_logger().info(f"{role.label} robot: backend {self._backend.name!r}, joints {list(self._names)}")

    def _on_reset(self, request: Any, response: Any) -> Any:
        try:
            q = convert.joint_state_from_msg(_as_joint_state(request), self._names).position_rad
            self._backend.reset(q)
        except CosimError as exc:
            response.success, response.message = False, str(exc)
            return response
        self._first = self._backend.read()  # sample 0, handed out with the first command (as the batch runner)
        self._last_ns = None
        response.success = True
        response.position = [float(v) for v in self._first.q_measured_rad]
        return response

    def _on_command(self, msg: JointState) -> None:
        try:
            command = convert.joint_state_from_msg(msg, self._names)
            if self._first is not None:
                sample, self._first = self._first, None
            else:
                if self._last_ns is None:
                    raise CosimError("command before any reset: call the reset service first")
                dt_s = (command.t_ns - self._last_ns) / 1e9
                if dt_s <= 0:
                    raise CosimError(f"command stamped {command.t_ns} ns is not after the previous one")
                self._backend.command(command.position_rad, dt_s)
                self._backend.advance(dt_s)
                sample = self._backend.read()
        except CosimError as exc:  # a bad command is reported, never fatal to the graph
            self._alert(str(exc))
            return
        self._last_ns = command.t_ns
        empty = np.zeros(0)
        self._joints_pub.publish(
            convert.joint_state_to_msg(convert.JointSample(command.t_ns, self._names, sample.q_measured_rad, empty))
        )
        if np.isfinite(sample.actual_tip_pos_m).all():
            self._tip_pub.publish(
                convert.pose_stamped_to_msg(
                    convert.StampedPose(command.t_ns, "base_link", sample.actual_tip_pos_m, sample.actual_tip_quat_wxyz)
                )
            )

    def _alert(self, message: str) -> None:
        self.get_logger().error(message)
        self._alerts.publish(
            Alert(level=Alert.ERROR, robot=int(self.role), source=self.get_name(), code="bad_command", message=message)
        )

    def close(self) -> None:
        """Release the engine."""
        self._backend.close()


def _as_joint_state(request: Any) -> Any:
    """A JointState-like view of a ResetRobot request (names and positions, no stamp)."""
    state = JointState(name=list(request.joint_names), position=list(request.position))
    return state
