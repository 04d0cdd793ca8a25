"""controller_manager_emulator: an emulated ER3 Pro behind a ros2_control controller manager's interfaces.

The stand-in for rokae_ros2 (public repository RokaeRobot/rokae_ros2) on the arm: a backend of the registry
(``emulated`` by default, the perturbed twin of the physical driver) served as rokae_ros2 serves the real arm:

- ``<controller_manager>/list_controllers`` (controller_manager_msgs/srv/ListControllers):
  ``joint_state_broadcaster`` and the trajectory controller (``arm_controller``), both ``active``, the latter a
  ``joint_trajectory_controller/JointTrajectoryController`` claiming ``<joint>/position`` of every joint;
- the trajectory controller's ``/<controller>/joint_trajectory`` and ``/<controller>/follow_joint_trajectory``:
  :class:`~cosim_validation.live.external.arm_server.ArmServer` (validation, following and tolerances as
  ros2_controllers' JTC; goal tolerance and goal_time of rokae_ros2's controllers by default);
- ``/joint_states`` (sensor_msgs/JointState): the broadcaster's state at the end of each command; while no command
  comes, every 0.1 s of wall time, the arm at rest before the first case (stamped 0: the arm's time starts with
  the first case), after it the last state again with its own stamp (so the next client's start check finds the
  joints, and no later setpoint takes it for its answer);
- the optical tracker under ``tracker_namespace``: ``tip/measured_cp`` (PoseStamped, base_link), ``marker``.

The update loop (:class:`~cosim_validation.live.ros.ros2_control.UpdateLoop`) runs in the session's time: when a
command reaches past the arm's time, the updates (one every ``1 / update_rate_hz`` s) run up to its end. One
emulation-only service a real controller manager does not have, ``<controller_manager>/emulation/reset``
(ResetRobot): reseed the emulated errors with a case's seed and rest the arm at the case's first setpoint.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from controller_manager_msgs.msg import ControllerState
from controller_manager_msgs.srv import ListControllers
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.assembly import BackendPort
from cosim_validation.assembly.robots import build_robot
from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError
from cosim_validation.live.external.arm_server import ArmServer
from cosim_validation.live.external.trajectory_follow import Tolerances
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.nodes.robot_driver import answer_reset
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.crtk_messages import joint_state
from cosim_validation.live.ros.qos import STATE, to_rclpy
from cosim_validation.live.ros.ros2_control import ACTIVE, COMMAND_INTERFACE, JTC_TYPE
from cosim_validation.live.ros.update_loop import UpdateLoop
from cosim_validation.live.session.node_parameters import ControllerManagerEmulatorParams
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.robot_backend import BackendSample
from cosim_validation_interfaces.srv import ResetRobot

IDLE_PERIOD_S = 0.1  # [s] the broadcaster's period while no command comes
BROADCASTER = ("joint_state_broadcaster", "joint_state_broadcaster/JointStateBroadcaster")


class _LockstepArmServer(ArmServer):
    """The ArmServer, and after each command it took (or refused) the update loop runs to that command's end."""

    def __init__(self, *args: Any, on_command: Any, **kwargs: Any) -> None:
        self._on_command = on_command
        super().__init__(*args, **kwargs)

    def _on_stream(self, msg: Any, info: Any) -> None:
        late = self.late_commands
        super()._on_stream(msg, info)
        if self.late_commands == late:  # not a command of the case before the last reset
            self._on_command(msg)

    def _on_accepted(self, goal_handle: Any) -> None:
        super()._on_accepted(goal_handle)
        self._on_command(goal_handle.request.trajectory)


class ControllerManagerEmulator(Node):
    """One emulated arm behind a controller manager, its trajectory controller and its broadcaster."""

    def __init__(self, executable: str = "controller_manager_emulator") -> None:
        super().__init__(executable)
        params = declare_parameters(self, ControllerManagerEmulatorParams)
        config = load_case_config(resolve_resource(params.config))
        kin = RobotConfig.from_config(config["robot"]).kinematics
        self._names = kin.joint_names
        seed = None if params.seed < 0 else params.seed
        self._loop = UpdateLoop(BackendPort(build_robot(config, params.backend, seed=seed)), params.update_rate_hz)
        self._controller = params.controller
        n = len(self._names)
        tolerances = Tolerances(np.zeros(n), np.full(n, params.goal_tolerance_rad), params.goal_time_s)
        urdf = kin.chain.urdf_path.read_text(encoding="utf-8")
        self._server = _LockstepArmServer(
            self,
            params.controller,
            self._names,
            kin.q_lower,
            kin.q_upper,
            tolerances,
            urdf,
            on_command=self._run,
            units=kin.joint_units,
        )
        self._joints_pub = self.create_publisher(JointState, "/joint_states", to_rclpy(STATE))
        tracker = params.tracker_namespace
        self._tip_pub = self.create_publisher(convert.pose_stamped_msg_type(), f"{tracker}/tip/measured_cp", 100)
        self._marker_pub = self.create_publisher(convert.marker_msg_type(), f"{tracker}/marker", 100)
        manager = params.controller_manager.rstrip("/")
        self.create_service(ListControllers, f"{manager}/list_controllers", self._on_list)
        self.create_service(ResetRobot, f"{manager}/emulation/reset", self._on_reset)
        # until the first case the broadcaster publishes the arm at rest (a driver checks the joints at start);
        # from then on once per command, so that a case's readings draw the emulated noise as in batch, and while
        # no command comes the last reading again, with its own stamp: it answers no later setpoint, and the next
        # client's start check finds the joints (a campaign after a campaign, a session after a campaign)
        self._cased = False
        self._last: tuple[int, BackendSample] | None = None
        self._last_wall_s = 0.0  # steady time of the last publication
        self._idle = self.create_timer(IDLE_PERIOD_S, self._publish_idle, clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(
            f"emulated {kin.chain.urdf_path.name} under {manager}: {params.controller} at {params.update_rate_hz} Hz"
        )

    def _on_list(self, request: Any, response: Any) -> Any:
        position = [f"{j}/{COMMAND_INTERFACE}" for j in self._names]
        state = [*position, *(f"{j}/velocity" for j in self._names)]
        response.controller = [
            ControllerState(name=BROADCASTER[0], state=ACTIVE, type=BROADCASTER[1], required_state_interfaces=state),
            ControllerState(
                name=self._controller,
                state=ACTIVE,
                type=JTC_TYPE,
                claimed_interfaces=position,
                required_command_interfaces=position,
                required_state_interfaces=state,
            ),
        ]
        return response

    def _publish_idle(self) -> None:
        if time.monotonic() - self._last_wall_s < IDLE_PERIOD_S:
            return
        if not self._cased:  # stamped 0: the arm's time starts with the first case
            self._publish(0, self._loop.port.backend.read())
        elif self._last is not None:
            self._publish(*self._last)

    def _on_reset(self, request: Any, response: Any) -> Any:
        self._cased, self._last = True, None  # nothing again until this case's first answer
        self._server.reset()
        answer = answer_reset(self._loop.port, self._names, request, response)
        if answer.success:
            self._loop.reset()
        return answer

    def _run(self, trajectory: Any) -> None:
        """Run the updates to the end of ``trajectory`` (header stamp + last point), then publish the state."""
        if not trajectory.points:
            return
        end_ns = convert.time_from_msg(trajectory.header.stamp) + _duration_ns(trajectory.points[-1].time_from_start)
        try:
            sample = self._loop.run_until(end_ns, self._server.setpoint)
        except CosimError as exc:  # a bad command is logged, never fatal to the arm
            self.get_logger().error(f"{self._controller}: {exc}")
            return
        if sample is not None:
            self._publish(end_ns, sample)

    def _publish(self, stamp_ns: int, sample: BackendSample) -> None:
        self._last, self._last_wall_s = (stamp_ns, sample), time.monotonic()
        self._joints_pub.publish(joint_state(stamp_ns, self._names, sample.q_measured))
        tip = convert.StampedPose(stamp_ns, "base_link", sample.actual_tip_pos_m, sample.actual_tip_quat_wxyz)
        self._tip_pub.publish(convert.pose_stamped_to_msg(tip))
        marker = convert.MarkerFrame(stamp_ns, sample.marker_pos_m, sample.marker_quat_wxyz, sample.marker_error_m)
        self._marker_pub.publish(convert.marker_to_msg(marker))

    def close(self) -> None:
        """Release the engine."""
        self._loop.port.backend.close()


def _duration_ns(duration: Any) -> int:
    return int(duration.sec) * 1_000_000_000 + int(duration.nanosec)


def main(args: list[str] | None = None) -> int:
    """Run the ``controller_manager_emulator`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation controller_manager_emulator --ros-args -p config:=config/needle_insertion.yaml

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(ControllerManagerEmulator, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
