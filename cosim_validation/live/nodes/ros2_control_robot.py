"""The ``ros2_control`` robot: the physical arm behind a ros2_control controller manager, for a campaign or run-case.

A robot of the registry (:mod:`cosim_validation.robots.registry`, found by import path: the ROS-free core does not
import it) that drives the arm over DDS from the process that runs the cases, with the same arm code as the
session's ``ros2_control_driver`` (:class:`~cosim_validation.live.nodes.ros2_control_arm.ControllerManagerArm`):
every setpoint goes to the joint trajectory controller as the trajectory from the previous one, and the answer is
the first ``/joint_states`` (with the tracker's tip and marker) not older than it. Its settings are the
``backends.ros2_control`` section, the driver's parameters by the same names::

    backends:
      ros2_control:
        controller_manager: /controller_manager   # rokae_ros2's names are the defaults
        controller: arm_controller
        command_interface: stream                 # or action (follow_joint_trajectory goals)
        tracker_namespace: /tracker               # '' = no tracker: the actual tip is unknown (NaN)
        emulated: true                            # a controller_manager_emulator: reset through it

Stamps: a case's first setpoint is stamped 1 s after the newest stamp heard from the arm or sent to it, each later
one the setpoint interval later, so no earlier message answers a case's setpoint. An emulated arm (its time starts
at 0) runs to each stamp as the command comes, so a case costs DDS round trips, not real time; a real arm stamps
its joint states with its clock and answers at its own pace, so a case takes its duration.
"""

from __future__ import annotations

import threading

import numpy as np
import rclpy
from numpy.typing import ArrayLike
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.ros2_control_arm import ControllerManagerArm
from cosim_validation.live.ros.ros2_control import ArmSilentError, ControllerManagerError
from cosim_validation.live.session.node_parameters import Ros2ControlDriverParams, ros2_control_settings
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample, JointSet, RobotBackend
from cosim_validation.robots.virtual.backends_config import BackendsConfig
from cosim_validation_interfaces.srv import ResetRobot

SECTION = "ros2_control"
CASE_GAP_NS = 1_000_000_000  # [ns] a case's first setpoint is stamped this long after any earlier stamp


class _Answers:
    """The arm's answers to the setpoints sent, by stamp, until taken."""

    def __init__(self) -> None:
        self._done = threading.Condition()
        self._by_stamp: dict[int, BackendSample] = {}

    def publish(self, stamp_ns: int, sample: BackendSample) -> None:
        with self._done:
            self._by_stamp[int(stamp_ns)] = sample
            self._done.notify_all()

    def take(self, stamp_ns: int, timeout_s: float) -> BackendSample | None:
        with self._done:
            self._done.wait_for(lambda: stamp_ns in self._by_stamp, timeout=timeout_s)
            return self._by_stamp.pop(stamp_ns, None)

    def clear(self) -> None:
        with self._done:
            self._by_stamp.clear()


class Ros2ControlRobot(JointSet):
    """The arm behind a controller manager, as a :class:`~cosim_validation.robots.robot_backend.RobotBackend`.

    Args:
        p: Which controller manager, controller and topics; the time limits (``backends.ros2_control``).
        kinematics: The nominal arm (its joint names are the controller's).

    Raises:
        ControllerManagerError: No controller manager, no active trajectory controller over the arm's joints, or
            no joint states naming them (the start check of the session's driver).
    """

    def __init__(self, p: Ros2ControlDriverParams, kinematics: Kinematics) -> None:
        self._p = p
        self._joint_names, self._joint_units = kinematics.joint_names, kinematics.joint_units
        self._q_lower, self._q_upper = kinematics.q_lower.copy(), kinematics.q_upper.copy()
        self._context = Context()
        # the campaign has its own Ctrl-C handling; rclpy's handlers would be a thread of their own in every worker
        rclpy.init(context=self._context, signal_handler_options=SignalHandlerOptions.NO)
        self._node = Node("cosim_ros2_control_robot", context=self._context)
        self._answers = _Answers()
        self._arm = ControllerManagerArm(self._node, p, self._joint_names, ReentrantCallbackGroup())
        self._executor: SingleThreadedExecutor | None = None
        try:
            self._arm.check_start()
        except BaseException:
            self.close()
            raise
        self._arm.deliver_to(self._answers)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        self._spinner = threading.Thread(target=self._executor.spin, name="ros2_control_robot", daemon=True)
        self._spinner.start()
        self._seed = 0
        self._start_ns = 0  # the stamp of the case's first setpoint (the reset)
        self._now_ns = 0  # the arm's time: the stamp of the next setpoint
        self._target: np.ndarray | None = None
        self._sample: BackendSample | None = None

    @property
    def name(self) -> str:
        """``ros2_control``."""
        return SECTION

    @property
    def role(self) -> RobotRole:
        """The physical robot."""
        return RobotRole.PHYSICAL

    def reseed(self, case_seed: int) -> None:
        """The case's seed, passed on with the next reset (an emulated arm reseeds its errors with it).

        Args:
            case_seed: The case's seed.
        """
        self._seed = int(case_seed)

    def reset(self, q0: ArrayLike) -> None:
        """Rest the arm at ``q0`` (J,) [rad] and read it there (the answer to the case's first setpoint).

        Args:
            q0: Joint positions, shape (J,), in [rad].

        Raises:
            ControllerManagerError: The arm did not get there, or refused; ArmSilentError when it did not answer.
        """
        q = np.asarray(q0, dtype=np.float64)
        request = ResetRobot.Request(
            joint_names=list(self._joint_names), position=[float(v) for v in q], seed=self._seed % 2**64
        )
        self._arm.reset(request, q)
        self._answers.clear()
        # a second after anything the arm said: no earlier message answers this case's setpoints
        self._start_ns = self._now_ns = max(self._now_ns, self._arm.newest_ns) + CASE_GAP_NS
        self._target = None
        self._sample = self._exchange(q)

    def command(self, q_setpoint: ArrayLike, duration_s: float) -> None:
        """The next setpoint, due when the arm's time has advanced (sent by :meth:`read`).

        Args:
            q_setpoint: Joint positions, shape (J,), in [rad].
            duration_s: The setpoint interval [s] (the controller ramps over it: the trajectory's two points).
        """
        self._target = np.asarray(q_setpoint, dtype=np.float64)

    def advance(self, dt_s: float) -> None:
        """Let ``dt_s`` [s] of the arm's time pass: the next setpoint's stamp.

        Args:
            dt_s: The setpoint interval, > 0, in [s].
        """
        self._now_ns += round(float(dt_s) * 1e9)

    def read(self) -> BackendSample:
        """Send the setpoint commanded since the last read, if any, and wait for the arm's answer to it.

        Raises:
            ArmSilentError: The arm did not answer within ``reset_timeout_s`` (it is lost: a campaign stops).
        """
        if self._target is not None:
            target, self._target = self._target, None
            self._sample = self._exchange(target)
        if self._sample is None:
            raise ControllerManagerError("the ros2_control robot was read before any reset")
        return self._sample

    def _exchange(self, q: np.ndarray) -> BackendSample:
        self._arm.send(self._now_ns, q)
        sample = self._answers.take(self._now_ns, self._p.reset_timeout_s)
        if sample is None:
            raise ArmSilentError(
                f"{self._arm.manager}: no {self._p.joint_states_topic} answered the setpoint stamped {self._now_ns} ns "
                f"within {self._p.reset_timeout_s:.1f} s (is the arm still running?)"
            )
        return sample._replace(t_s=(self._now_ns - self._start_ns) / 1e9)

    def close(self) -> None:
        """Leave the ROS graph (idempotent)."""
        if self._executor is not None:
            self._executor.shutdown()
            self._spinner.join(timeout=5.0)
            self._executor = None
        if self._context.ok():
            self._node.destroy_node()
            rclpy.shutdown(context=self._context)


def build(node: ConfigNode, shared: BackendsConfig, kinematics: Kinematics, seed: int | None) -> RobotBackend:
    """The registry's builder of the ``ros2_control`` robot (see :data:`cosim_validation.robots.registry.ENGINES`).

    Args:
        node: The ``backends`` section (its ``ros2_control`` part is read).
        shared: The shared backend settings (not used: the arm's own controller runs it).
        kinematics: The nominal arm.
        seed: Not used: an emulated arm's errors are its emulator's (its ``seed`` parameter).

    Raises:
        ConfigError: A bad ``backends.ros2_control``.
        ControllerManagerError: The start check failed.
    """
    return Ros2ControlRobot(ros2_control_settings(node.get(SECTION)), kinematics)
