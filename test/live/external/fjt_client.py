"""An external controller under test, in its own process: sends FollowJointTrajectory goals and a streamed
JointTrajectory to an ArmServer (controller ``arm``, joints j1..j3) and prints one JSON line per outcome.

Run by test_arm_server.py with ROS_DOMAIN_ID set; exits 0 when every step ran (the test judges the outcomes).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

import rclpy
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from control_msgs.msg import JointTolerance
from geometry_msgs.msg import PoseStamped
from rclpy.action import ActionClient
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from cosim_validation.live.ros.action_goal import send_goal, wait_result

NAMES = ["j1", "j2", "j3"]


def _duration(t_s: float) -> Duration:
    return Duration(sec=int(t_s), nanosec=round((t_s - int(t_s)) * 1e9))


def trajectory(names: list[str], points: list[tuple[float, list[float]]]) -> JointTrajectory:
    """A JointTrajectory of (time_from_start s, positions rad) points."""
    msg = JointTrajectory(joint_names=names)
    msg.points = [JointTrajectoryPoint(positions=p, time_from_start=_duration(t)) for t, p in points]
    return msg


def goal(names: list[str], points: list[tuple[float, list[float]]], **tolerances: float) -> Any:
    """A goal with the same path/goal position tolerance for every joint and a goal time, when given."""
    request = FollowJointTrajectory.Goal(trajectory=trajectory(names, points))
    if "path" in tolerances:
        request.path_tolerance = [JointTolerance(name=n, position=tolerances["path"]) for n in NAMES]
    if "goal" in tolerances:
        request.goal_tolerance = [JointTolerance(name=n, position=tolerances["goal"]) for n in NAMES]
    request.goal_time_tolerance = _duration(tolerances.get("goal_time", 0.0))
    return request


def emit(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}), flush=True)


def outcome(client: ActionClient, request: Any) -> dict[str, Any]:
    """Send ``request``; its acceptance, and when accepted its status, error code and string."""
    handle = send_goal(client, request)
    if not handle.accepted:
        return {"accepted": False}
    answer = wait_result(handle, timeout_s=60.0)
    return {
        "accepted": True,
        "status": answer.status,
        "code": answer.result.error_code,
        "text": answer.result.error_string,
    }


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("fjt_client")
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    seen: dict[str, Any] = {}
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    node.create_subscription(String, "/robot_description", lambda m: seen.setdefault("description", m.data), latched)
    node.create_subscription(JointState, "/joint_states", lambda m: seen.__setitem__("joints", m), 10)
    node.create_subscription(Clock, "/clock", lambda m: seen.__setitem__("clock", m), 10)
    node.create_subscription(PoseStamped, "/arm/measured_cp", lambda m: seen.__setitem__("tip", m), 10)
    client = ActionClient(node, FollowJointTrajectory, "/arm/follow_joint_trajectory")
    if not client.wait_for_server(timeout_sec=30.0):
        emit("no_server")
        return 1

    emit("wrong_names", **outcome(client, goal(["j1", "j2", "x"], [(1.0, [0.1, 0.1, 0.1])])))
    emit("times", **outcome(client, goal(NAMES, [(1.0, [0.1, 0.1, 0.1]), (1.0, [0.2, 0.2, 0.2])])))
    emit("limits", **outcome(client, goal(NAMES, [(1.0, [0.1, 1.5, 0.1])])))
    # 0.8 rad in 0.4 s: the arm (0.5 rad/s) lags more than 0.05 rad
    emit("too_fast", **outcome(client, goal(NAMES, [(0.4, [0.8, 0.8, 0.8])], path=0.05)))
    emit("good", **outcome(client, goal(NAMES, [(3.0, [0.2, -0.2, 0.1])], path=0.3, goal=0.01, goal_time=1.0)))
    emit("reached", position=list(seen["joints"].position))

    # a newer goal preempts the active one, which is aborted; a cancel stops the arm where it is
    first = send_goal(client, goal(NAMES, [(20.0, [0.6, 0.6, 0.6])]))
    time.sleep(1.0)
    second = send_goal(client, goal(NAMES, [(20.0, [-0.6, -0.6, -0.6])]))
    preempted = wait_result(first, timeout_s=30.0)
    emit("preempted", status=preempted.status, code=preempted.result.error_code, text=preempted.result.error_string)
    time.sleep(1.0)
    second.cancel_goal_async()
    canceled = wait_result(second, timeout_s=30.0)
    time.sleep(1.0)
    held = list(seen["joints"].position)
    time.sleep(1.0)
    emit("canceled", status=canceled.status, held=held, later=list(seen["joints"].position))

    stream = node.create_publisher(JointTrajectory, "/arm/joint_trajectory", 10)
    deadline = time.monotonic() + 20.0
    while stream.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    stream.publish(trajectory(NAMES, [(1.0, [0.0, 0.1, 0.0]), (2.0, [-0.3, 0.3, 0.05])]))
    target = [-0.3, 0.3, 0.05]
    while time.monotonic() < deadline:
        if max(abs(a - b) for a, b in zip(seen["joints"].position, target, strict=True)) < 0.01:
            break
        time.sleep(0.05)
    joints, tip, clock = seen["joints"], seen.get("tip"), seen.get("clock")
    emit("streamed", position=list(joints.position), names=list(joints.name))
    emit(
        "topics",
        description=seen.get("description"),
        clock_s=None if clock is None else clock.clock.sec + clock.clock.nanosec * 1e-9,
        tip_frame=None if tip is None else tip.header.frame_id,
        tip_x=None if tip is None else tip.pose.position.x,
    )
    executor.shutdown(timeout_sec=5.0)
    spinner.join(timeout=5.0)
    client.destroy()
    node.destroy_node()
    rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
