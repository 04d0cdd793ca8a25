"""tip_servo_node: a controller under test as a standalone ROS 2 node (rclpy and message packages only).

The closed-loop needle insertion of ``tip_servo`` written as an external node (README.md, "The example node").
Run it with ``use_sim_time:=true``: the framework publishes ``/clock`` once per control period, and every
period of the node is one tick of a timer on that clock.

Subscribes: ``/joint_states`` (sensor_msgs/JointState, measured), ``/<controller>/measured_cp``
(geometry_msgs/PoseStamped, the tracked needle tip in base_link), ``/robot_description`` (std_msgs/String,
transient local). Publishes ``/<controller>/joint_trajectory`` (trajectory_msgs/JointTrajectory, one point one
period ahead, stamp zero = now). Serves ``/run_test_case`` (cosim_validation_interfaces/action/RunTestCase).
"""

from __future__ import annotations

import gc
import sys
from typing import Any

import numpy as np
import rclpy
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import PoseStamped
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.exceptions import InvalidParameterTypeException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.task import Future
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cosim_controller_example.case_plan import UnreachableError, plan_case
from cosim_controller_example.insertion_case import STAGE_NAMES, InsertionCase, ServoSettings
from cosim_controller_example.resolved_rate import RateLimits
from cosim_controller_example.urdf_chain import UrdfChain, UrdfChainError, parse_chain
from cosim_validation_interfaces.action import RunTestCase

Result = RunTestCase.Result
#: xCore SDK real-time velocity limits of the xMate ER3 Pro [rad/s] (config/needle_insertion.yaml robot.limits)
ER3_PRO_VELOCITY = [2.175, 2.175, 2.175, 2.175, 2.610, 2.610, 2.610]


#: Control periods a goal waits for /robot_description and /joint_states before it fails.
WAIT_PERIODS = 50
#: Joint states kept by stamp, for a tracked tip stamped near one of them that comes later.
JOINT_HISTORY = 20
#: A joint state stamped more than this after the one before is a case's first [ns]: the framework starts each case
#: one second of simulated time after the last one ended, and within a case states come one control period apart
#: (this needs a period under half a second, sampling_rate_hz > 2).
CASE_START_GAP_NS = 500_000_000
#: The longest one wait of the executor lasts before the node looks whether it was shut down (a signal) [s].
WAIT_S = 0.5


class ActiveCase:
    """The case being run: its goal, its motion once planned, its start time and the outcome once it is over."""

    def __init__(self, goal_handle: Any, source_m: np.ndarray, target_m: np.ndarray) -> None:
        self.goal_handle, self.source_m, self.target_m = goal_handle, source_m, target_m
        self.motion: InsertionCase | None = None
        self.periods, self.start_ns, self.waited = 1, 0, 0
        self.result: Any = None
        self.over = Future()  # done when the case is over: the action's execute callback awaits it


class ParameterValueError(ValueError):
    """A node parameter out of its range (the message names it and what was expected)."""


def _check_parameters(values: dict[str, Any]) -> None:
    """Raise :class:`ParameterValueError` for the first parameter out of its range."""
    positive = ("needle_length_m", "sampling_rate_hz", "approach_speed_m_s", "injection_speed_m_s")
    for name in positive:
        if not (np.isfinite(values[name]) and values[name] > 0.0):
            raise ParameterValueError(f"parameter {name}: expected a number > 0, got {values[name]!r}")
    if not 0.0 <= values["gain"] <= 1.0:
        raise ParameterValueError(f"parameter gain: expected a number in [0, 1], got {values['gain']!r}")
    if not 0.0 < values["joint_velocity_scale"] <= 1.0:
        raise ParameterValueError(
            f"parameter joint_velocity_scale: expected a number in (0, 1], got {values['joint_velocity_scale']!r}"
        )
    velocity = np.asarray(values["joint_velocity_limits"], float)
    if velocity.ndim != 1 or velocity.size == 0 or not (np.isfinite(velocity).all() and (velocity > 0).all()):
        given = [float(v) for v in velocity]
        raise ParameterValueError(
            f"parameter joint_velocity_limits: expected one speed > 0 per joint [rad/s], got {given}"
        )


class TipServoNode(Node):
    """Action server ``/run_test_case`` driving the arm along the source-to-target line on the tracked tip."""

    def __init__(self) -> None:
        super().__init__("tip_servo_node")
        self.prefix = str(self.declare_parameter("controller", "arm_controller").value)
        self.mount_frame = str(self.declare_parameter("mount_frame", "needle_mount").value)
        defaults: dict[str, Any] = {
            "needle_length_m": 0.3,
            "sampling_rate_hz": 10.0,
            "joint_velocity_limits": ER3_PRO_VELOCITY,
            "joint_velocity_scale": 0.5,
            "approach_speed_m_s": 0.05,
            "injection_speed_m_s": 0.02,
            "gain": 0.3,
        }
        try:
            values = {name: self.declare_parameter(name, value).value for name, value in defaults.items()}
        except InvalidParameterTypeException as exc:  # e.g. sampling_rate_hz:=10 (an integer) or :=abc
            raise ParameterValueError(str(exc.args[0]) if exc.args else str(exc)) from exc
        _check_parameters(values)
        self.needle_length_m, self.rate_hz = float(values["needle_length_m"]), float(values["sampling_rate_hz"])
        self.velocity = np.asarray(values["joint_velocity_limits"], float)
        self.settings = ServoSettings(
            approach_speed_m_s=float(values["approach_speed_m_s"]),
            injection_speed_m_s=float(values["injection_speed_m_s"]),
            gain=float(values["gain"]),
        )
        scale = float(values["joint_velocity_scale"])
        self.limits = RateLimits(1.0 / self.rate_hz, self.settings.approach_speed_m_s, 0.5, scale * self.velocity)
        self.chain: UrdfChain | None = None
        self.chain_error = "no /robot_description received yet"
        self.joint_positions: dict[str, float] = {}  # the last measured position of every joint by name
        self.tip_m: np.ndarray | None = None  # the tracked tip received since the last period, if any
        self.tip_stamp_ns = 0  # when it was measured, on the node's clock [ns]
        self.joints_at: dict[int, dict[str, float]] = {}  # the last joint states by stamp [ns], oldest first
        self.start_stamp_ns = -1  # the stamp of the newest case's first joint state [ns]
        self.planned_from_ns = -1  # the start_stamp_ns the last case was planned from [ns]
        self.case: ActiveCase | None = None
        latched = QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        self.create_subscription(String, "/robot_description", self._on_description, latched)
        self.create_subscription(JointState, "/joint_states", self._on_joints, 10)
        self.create_subscription(PoseStamped, f"/{self.prefix}/measured_cp", self._on_tip, 10)
        self.command_pub = self.create_publisher(JointTrajectory, f"/{self.prefix}/joint_trajectory", 10)
        self.create_timer(1.0 / self.rate_hz, self._tick)
        ActionServer(
            self,
            RunTestCase,
            "/run_test_case",
            self._execute,
            goal_callback=lambda _: GoalResponse.REJECT if self.case is not None else GoalResponse.ACCEPT,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
        )

    def _on_description(self, msg: Any) -> None:
        try:
            self.chain = parse_chain(msg.data, self.needle_length_m, "base_link", self.mount_frame)
            self.chain_error = ""
        except UrdfChainError as exc:
            self.chain, self.chain_error = None, str(exc)
            self.get_logger().error(str(exc))

    def _on_joints(self, msg: Any) -> None:
        stamp_ns = Time.from_msg(msg.header.stamp).nanoseconds
        newest_ns = next(reversed(self.joints_at), None)  # the stamp of the joint state before this one
        if newest_ns is None or stamp_ns - newest_ns > CASE_START_GAP_NS:
            self.start_stamp_ns = stamp_ns  # a case's start pose
            if self.case is not None and self.case.motion is not None:
                # the running case's own start pose, come after the case was planned from the one before (where the
                # arm was, a refused case's start): it is taken, not left waiting to start the next case
                self.planned_from_ns = stamp_ns
        self.joint_positions.update(zip(msg.name, msg.position, strict=False))
        self.joints_at[stamp_ns] = dict(self.joint_positions)
        while len(self.joints_at) > JOINT_HISTORY:
            del self.joints_at[next(iter(self.joints_at))]  # the oldest

    def _q_measured(self) -> np.ndarray | None:
        """The last measured joint vector in the chain's order, None while a joint was never measured."""
        assert self.chain is not None
        names = self.chain.names
        return np.array([self.joint_positions[n] for n in names]) if set(names) <= set(self.joint_positions) else None

    def _on_tip(self, msg: Any) -> None:
        p = msg.pose.position
        self.tip_m = np.array([p.x, p.y, p.z])
        self.tip_stamp_ns = Time.from_msg(msg.header.stamp).nanoseconds

    async def _execute(self, goal_handle: Any) -> Any:
        """Start the case (or answer at once why it cannot run) and wait until the timer has finished it.

        A coroutine: while it awaits the case's end, the one thread of the executor runs the timer and the
        subscriptions (a blocking wait here would need a second thread, and rclpy's multi-threaded executor spins
        through its queue while a callback runs: a core busy and the node's answers up to a second late).
        """
        result = self._start(goal_handle)
        if result is not None:
            goal_handle.abort()
            return result
        case = self.case
        assert case is not None
        await case.over
        return case.result

    def _start(self, goal_handle: Any) -> Any:
        """Take the goal: None when it is accepted as the running case, else the result that refuses it."""
        goal = goal_handle.request
        case = goal.test_case
        source = np.array([case.source.x, case.source.y, case.source.z])
        target = np.array([case.target.x, case.target.y, case.target.z])
        problem = self._goal_problem(goal, source, target)
        if problem:
            return Result(outcome=Result.REFUSED, message=problem)
        self.case = ActiveCase(goal_handle, source, target)
        return None

    def _plan(self, case: ActiveCase) -> InsertionCase | None:
        """Plan the case once the arm's model and its start pose are known (None while waiting, or once it ended).

        The start pose is the joint state the framework publishes before it sends the goal, but topics and the action
        are separate DDS entities: on a loaded machine the goal can come first, while the newest joint state is still
        where the last case ended. Planned from there, the first command would swing the arm back towards that pose
        (2.9 rad on a joint in one period, in the node's test where the goal comes first). So a case waits for a
        start pose newer than the one the last case was planned from. (A goal refused before planning does not take
        its start pose: if the next goal then overtakes its own, it plans from the refused case's start, where the
        arm stayed, and its own start pose, when it comes, is taken as that case's: ``_on_joints``.)
        """
        q_measured = self._q_measured() if self.chain is not None else None
        started = self.start_stamp_ns > self.planned_from_ns
        if self.chain is None or q_measured is None or not started:
            case.waited += 1
            if case.waited > WAIT_PERIODS:
                if self.chain is None:
                    missing = self.chain_error
                elif q_measured is None:
                    missing = "no /joint_states with joints " + ", ".join(self.chain.names)
                else:
                    missing = "no /joint_states of the case's start pose (stamped a second after the last case's end)"
                self._finish(case, Result.FAILED, f"cannot start after {WAIT_PERIODS} periods: {missing}")
            return None
        self.planned_from_ns = self.start_stamp_ns
        if self.velocity.size != self.chain.n_joints:
            message = (
                f"parameter joint_velocity_limits has {self.velocity.size} speeds; the chain base_link -> "
                f"{self.mount_frame} has {self.chain.n_joints} joints"
            )
            self._finish(case, Result.FAILED, message)
            return None
        try:
            case.motion, case.periods = plan_case(
                self.chain, self.limits, self.settings, case.source_m, case.target_m, q_measured
            )
        except UnreachableError as exc:
            self._finish(case, Result.REFUSED, str(exc))
            return None
        case.start_ns = self.get_clock().now().nanoseconds
        self.get_logger().info(f"{case.goal_handle.request.test_case.test_id}: {case.periods} periods planned")
        return case.motion

    def _goal_problem(self, goal: Any, source: np.ndarray, target: np.ndarray) -> str:
        frame = goal.test_case.frame_id
        if frame not in ("", "base_link"):
            return f"test_case.frame_id is {frame!r}; expected base_link"
        if not (np.isfinite(source).all() and np.isfinite(target).all()):
            return "test_case.source and test_case.target must be finite points [m]"
        if np.linalg.norm(target - source) < 1e-3:
            return "test_case.target is within 1 mm of test_case.source: no needle axis"
        if goal.sampling_rate_hz and goal.sampling_rate_hz != self.rate_hz:
            return f"goal sampling_rate_hz {goal.sampling_rate_hz!r} differs from this node's {self.rate_hz!r}"
        if goal.needle_length_m and goal.needle_length_m != self.needle_length_m:
            return f"goal needle_length_m {goal.needle_length_m!r} differs from this node's {self.needle_length_m!r}"
        return ""

    def _tick(self) -> None:
        """One control period: the next command of the running case, its feedback, and its end."""
        case = self.case
        if case is None:
            return
        if case.goal_handle.is_cancel_requested:
            if case.motion is not None:
                self._publish(case.motion.q)  # hold where the arm was sent last
            self._finish(case, Result.ABORTED, "cancelled")
            return
        motion = case.motion or self._plan(case)
        if motion is None:
            return
        step = motion.step(self.tip_m, self._joints_at_tip())
        self.tip_m = None  # not seen again until the tracker publishes again
        self._publish(step.q)
        feedback = RunTestCase.Feedback(
            stage=step.stage,
            stage_name=STAGE_NAMES[step.stage],
            progress=min(1.0, motion.ticks / case.periods),
            sample_index=motion.ticks,
            sample_count=case.periods,
        )
        case.goal_handle.publish_feedback(feedback)
        if step.done:
            outcome = Result.ABORTED if motion.failure else Result.COMPLETED
            self._finish(case, outcome, motion.failure or _completed_message(motion))

    def _joints_at_tip(self) -> np.ndarray | None:
        """The joints measured with the tracked tip: the joint state stamped nearest the tip, if within half a period.

        The tip and the joints of one instant are separate topics: on a loaded machine either can reach the node a
        period after the other, so they are paired by stamp, never by arrival (a tracker of its own clocks its
        stamps apart from the arm's: nearest, not equal). None if no joint state is that near.
        """
        if self.tip_m is None or self.chain is None:
            return None
        return joints_nearest(self.joints_at, self.tip_stamp_ns, 0.5e9 / self.rate_hz, self.chain.names)

    def _publish(self, q: np.ndarray) -> None:
        assert self.chain is not None
        nanoseconds = round(1e9 / self.rate_hz)
        point = JointTrajectoryPoint(positions=[float(v) for v in q], time_from_start=Duration(nanosec=nanoseconds))
        self.command_pub.publish(JointTrajectory(joint_names=list(self.chain.names), points=[point]))

    def _finish(self, case: ActiveCase, outcome: int, message: str) -> None:
        started = case.motion is not None
        duration = (self.get_clock().now().nanoseconds - case.start_ns) * 1e-9 if started else 0.0
        stage = case.motion.stage if case.motion is not None else 0
        case.result = Result(outcome=outcome, message=message, last_stage=stage, duration_s=duration)
        if outcome == Result.COMPLETED:
            case.goal_handle.succeed()
        elif case.goal_handle.is_cancel_requested:
            case.goal_handle.canceled()
        else:
            case.goal_handle.abort()
        self.case = None
        case.over.set_result(True)


def joints_nearest(
    history: dict[int, dict[str, float]], stamp_ns: int, within_ns: float, names: tuple[str, ...]
) -> np.ndarray | None:
    """The joints (in ``names``' order) of the joint state stamped nearest ``stamp_ns``, if within ``within_ns``.

    Args:
        history: Joint positions by their message's stamp [ns].
        stamp_ns: The stamp to match (a tracked tip's) [ns].
        within_ns: The largest stamp difference accepted [ns].
        names: The joints wanted; None if the nearest state lacks one of them, or none is near enough.
    """
    if not history:
        return None
    stamp = min(history, key=lambda s: abs(s - stamp_ns))
    measured = history[stamp]
    if abs(stamp - stamp_ns) > within_ns or not set(names) <= set(measured):
        return None
    return np.array([measured[n] for n in names])


def _completed_message(motion: InsertionCase) -> str:
    tip = motion.tip_at_end_of_injection
    if tip is None:
        return "completed; the tracker did not see the tip at the end of the injection"
    off = 1e3 * float(np.linalg.norm(tip - (motion.source + motion.length_m * motion.axis)))
    return (
        f"completed; tracked tip {off:.3f} mm from the target at the end of the injection "
        f"({motion.unseen} of {motion.ticks} periods without a tracked tip)"
    )


def main(args: list[str] | None = None) -> int:
    """Run the tip servo node until Ctrl-C or shutdown.

    Example: ``ros2 run cosim_controller_example tip_servo_node --ros-args -p use_sim_time:=true``.
    """
    rclpy.init(args=args)
    try:
        node: TipServoNode | None = TipServoNode()
    except ParameterValueError as exc:
        print(f"error: tip_servo_node: {exc}", file=sys.stderr)
        node = None
    if node is None:
        # the half-built node is in a reference cycle (its subscriptions hold its methods): freed now, while the
        # context is valid (out of the except block, whose exception holds it), not by the garbage collector in the
        # middle of the shutdown
        gc.collect()
        rclpy.try_shutdown()
        return 2
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        # not executor.spin(): rclpy's handler shuts the context down on SIGINT/SIGTERM, but a wait already in the
        # middleware was seen to stay there for good (a node that ignored `ros2 launch`'s SIGTERM for a minute under
        # load); a bounded wait looks at rclpy.ok() again at least every WAIT_S
        while rclpy.ok():
            executor.spin_once(timeout_sec=WAIT_S)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        # a signal that comes between rclpy.ok() and the wait shuts the context down under spin_once, which then
        # raises "context is not valid"; that is the end asked for, anything else is a fault
        if rclpy.ok():
            raise
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
