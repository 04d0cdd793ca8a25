"""tip_servo_node as a process on its own ROS_DOMAIN_ID, against a tiny harness that plays the framework.

The harness publishes /clock one control period at a time, /robot_description (latched), /joint_states equal to
the node's last command (a perfect arm) and /arm_controller/measured_cp from cosim_validation's forward
kinematics, sends one RunTestCase goal and checks the result, the stages and where the tip ended.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.live.external.goal_result import GoalResult
from cosim_validation.live.ros.action_goal import send_goal
from cosim_validation.robots.model.kinematics import Kinematics
from test.examples.conftest import EXAMPLE

pytestmark = pytest.mark.ros

HOME = [0.0, -0.4, 0.0, 1.46, 0.0, 1.3, 0.0]
ELSEWHERE = [0.5, -0.2, 0.0, 1.3, 0.0, 1.3, 0.0]  # another start pose, away from where a case from HOME stops
SOURCE, TARGET = (0.45, 0.0, 0.30), (0.444073, 0.001077, 0.073978)  # case 0 of the demo grid suite, near the heart


class Harness:
    """The framework side of the contract, stepped by hand."""

    def __init__(self, context: Any, urdf: Path) -> None:
        from rclpy.node import Node
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState
        from std_msgs.msg import String
        from trajectory_msgs.msg import JointTrajectory

        from cosim_validation_interfaces.action import RunTestCase

        self.node = Node("harness", context=context)
        self.kinematics = Kinematics.from_urdf(urdf, 0.3)
        self.q, self.t_ns, self.commands, self.result_requests = np.array(HOME), 0, 0, 0
        self.closest_m = np.inf  # how near the commanded arm's tip came to TARGET
        self.commanded: list[np.ndarray] = []  # every command received, in order
        latched = QoSProfile(
            depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE
        )
        self.node.create_publisher(String, "/robot_description", latched).publish(String(data=urdf.read_text()))
        self.clock = self.node.create_publisher(Clock, "/clock", 10)
        self.joints = self.node.create_publisher(JointState, "/joint_states", 10)
        from geometry_msgs.msg import PoseStamped

        self.tip = self.node.create_publisher(PoseStamped, "/arm_controller/measured_cp", 10)
        self.node.create_subscription(JointTrajectory, "/arm_controller/joint_trajectory", self._on_command, 10)
        self.feedback: list[int] = []
        self.node.create_subscription(
            RunTestCase.Impl.FeedbackMessage,
            "/run_test_case/_action/feedback",
            lambda m: self.feedback.append(int(m.feedback.stage)),
            QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE),
        )

    def _on_command(self, msg: Any) -> None:
        assert list(msg.joint_names) == [f"joint{i}" for i in range(1, 8)]
        assert len(msg.points) == 1
        self.q, self.commands = np.array(msg.points[0].positions), self.commands + 1
        self.commanded.append(self.q)
        self.closest_m = min(self.closest_m, float(np.linalg.norm(self.tip_m() - np.array(TARGET))))

    def publish_state(self) -> None:
        """/joint_states (the last command), measured_cp (its tip) and /clock of the current period."""
        from geometry_msgs.msg import PoseStamped
        from rosgraph_msgs.msg import Clock
        from sensor_msgs.msg import JointState

        stamp = Clock().clock
        stamp.sec, stamp.nanosec = divmod(self.t_ns, 10**9)
        joints = JointState(name=[f"joint{i}" for i in range(1, 8)], position=[float(v) for v in self.q])
        joints.header.stamp = stamp
        self.joints.publish(joints)
        tip = PoseStamped()
        tip.header.stamp, tip.header.frame_id = stamp, "base_link"
        tip.pose.position.x, tip.pose.position.y, tip.pose.position.z = (float(v) for v in self.tip_m())
        self.tip.publish(tip)
        self.clock.publish(Clock(clock=stamp))

    def tip_m(self) -> np.ndarray:
        return np.asarray(self.kinematics.tip_pose(self.q).pos_m)

    def step(self, executor: Any, over: Any = lambda: False, patience_s: float = 1.0) -> None:
        """One control period: advance the clock, publish the arm, wait for the node's command (or ``over()``).

        The clock waits for the node (lockstep), as the framework's does: a harness that went on after 1 s moved the
        clock without the arm on a loaded machine. ``patience_s`` bounds the wait where no command may come.
        """
        before = self.commands
        self.t_ns += 100_000_000  # 10 Hz
        self.publish_state()
        period_end = time.monotonic() + patience_s
        while self.commands == before and not over() and time.monotonic() < period_end:
            executor.spin_once(timeout_sec=0.01)

    def run_goal(
        self,
        client: Any,
        executor: Any,
        target: tuple[float, ...],
        cancel_after: int = 0,
        start_late: int = 0,
        frame: str = "base_link",
    ) -> Any:
        """Send a case from SOURCE to ``target``, step the periods until its result (cancel after that many).

        As the framework does, the case starts one second after the last one ended, with a joint state of its start
        pose; ``start_late`` periods of /clock alone come first, that state after them (the goal overtook it).
        """
        from geometry_msgs.msg import Point
        from rosgraph_msgs.msg import Clock

        from cosim_validation_interfaces.action import RunTestCase
        from cosim_validation_interfaces.msg import TestCase

        case = TestCase(test_id="t0", frame_id=frame, source=Point(x=SOURCE[0], y=SOURCE[1], z=SOURCE[2]))
        case.target = Point(x=target[0], y=target[1], z=target[2])

        def spin_until(done: Any, deadline: float) -> bool:
            while not done() and time.monotonic() < deadline:
                executor.spin_once(timeout_sec=0.05)
            return bool(done())

        # as the framework sends it: an answer that discovery dropped is asked for again (a first goal on a loaded
        # machine went unanswered once); the bounds are on the waits, not properties
        self.t_ns += 1_000_000_000
        if not start_late:
            self.publish_state()
        handle = send_goal(client, RunTestCase.Goal(test_case=case), answer_timeout_s=30.0, wait=spin_until)
        assert handle.accepted
        result = GoalResult(handle)
        for _ in range(start_late):  # the clock runs on; the node holds only the last case's joint states
            self.t_ns += 100_000_000
            stamp = Clock().clock
            stamp.sec, stamp.nanosec = divmod(self.t_ns, 10**9)
            self.clock.publish(Clock(clock=stamp))
            spin_until(lambda: False, time.monotonic() + 0.2)
        deadline, periods, commands_before = time.monotonic() + 240, 0, self.commands
        while not result.done() and time.monotonic() < deadline:
            # lockstep once the node commands; before its first command (waiting for its model, its start pose, or
            # refusing the case at its next period) the arm stands still and the clock may go on: a 30 s wait there
            # was spent whenever the node's first period came before the latched /robot_description
            started = self.commands > commands_before
            self.step(executor, result.done, patience_s=30.0 if started else 1.0)
            periods += 1
            if periods == cancel_after:
                handle.cancel_goal_async()
        if not result.done():
            raise AssertionError(
                f"no result within 240 s: goal status {handle.status}, {result.requests} result requests, "
                f"{periods} periods, {self.commands} commands, {len(self.feedback)} feedback messages"
            )
        self.result_requests += result.requests
        return result.result()


def _stop(process: subprocess.Popen[str], log: Path) -> tuple[str, int | None]:
    """SIGTERM, 60 s to exit, else :func:`_stacks`: the node's output and exit code (None when it had to be
    stopped by force)."""
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        return _stacks(process, log), None
    return log.read_text(errors="replace"), process.returncode


def _stacks(process: subprocess.Popen[str], log: Path) -> str:
    """SIGABRT, which has the node's faulthandler print every thread's stack, then SIGKILL: its output."""
    process.send_signal(signal.SIGABRT)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return log.read_text(errors="replace")


@pytest.mark.slow
def test_node_runs_cases_against_a_perfect_arm(
    repo_root: Path, rclpy_context: Any, node_env: dict[str, str], tmp_path: Path
) -> None:
    """A far target is refused, a case completes on the target, a cancelled case ends and stops commanding."""
    from action_msgs.msg import GoalStatus
    from rclpy.action import ActionClient
    from rclpy.executors import SingleThreadedExecutor

    from cosim_validation_interfaces.action import RunTestCase

    Result = RunTestCase.Result
    harness = Harness(rclpy_context, repo_root / "urdf" / "xmate_er3_pro.urdf")
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(harness.node)
    env = dict(
        node_env, PYTHONFAULTHANDLER="1", PYTHONPATH=os.pathsep.join([str(EXAMPLE), node_env.get("PYTHONPATH", "")])
    )
    module = "cosim_controller_example.tip_servo_node"
    command = [sys.executable, "-m", module, "--ros-args", "-p", "use_sim_time:=true"]
    log = tmp_path / "node.log"  # a file, not a pipe: a pipe nobody reads during the run fills and blocks the node
    with log.open("w") as sink:
        process = subprocess.Popen(command, env=env, stdout=sink, stderr=subprocess.STDOUT, text=True)
    try:
        client = ActionClient(harness.node, RunTestCase, "/run_test_case")
        deadline = time.monotonic() + 30
        while not client.server_is_ready() and time.monotonic() < deadline:
            harness.publish_state()
            executor.spin_once(timeout_sec=0.1)
        assert client.server_is_ready(), "the node's action server did not appear in 30 s"
        refused = harness.run_goal(client, executor, (1.8, 0.0, 0.1)).result
        commands_before = harness.commands
        harness.feedback.clear()
        done = harness.run_goal(client, executor, TARGET)
        # the result and the case's last commands (the reset to the source, then its hold there) are separate DDS
        # entities: they may come after the result, and then after the arm was taken home below. The node commands
        # once per period it ran, and its result names how many periods that was: wait for that many (the bound is
        # on the wait: the count is asserted after). Waiting until the commanded tip was back at the source was not
        # enough: the hold's commands, at the source too, still came after the arm was taken home (CI, loaded)
        counted = re.search(r"of (\d+) periods", done.result.message)
        periods = int(counted.group(1)) if counted else 0
        deadline = time.monotonic() + 30
        while harness.commands < commands_before + periods and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        commands_in_case = harness.commands - commands_before
        closest_m = harness.closest_m
        tip_after_reset = harness.tip_m()
        # the arm back home, a goal refused before planning (a frame the node does not take) with its start pose
        # there, then a goal before its own start pose's joint state: the node plans from home, not from the reset
        # pose it last saw
        harness.q = np.array(HOME)
        wrong_frame = harness.run_goal(client, executor, TARGET, frame="world").result
        first_late = len(harness.commanded)
        cancelled = harness.run_goal(client, executor, TARGET, cancel_after=20, start_late=3)
        harness.step(executor)  # the hold the node sent as the case ended may come after the result: it comes here
        commands_at_cancel = harness.commands
        for _ in range(5):
            harness.step(executor)
        commands_after_cancel = harness.commands
        # that case's own start pose came after it was planned (from the refused goal's): it is that case's, not one
        # left pending for the next, which would then start at once from where the cancelled case stopped
        harness.q = np.array(ELSEWHERE)
        first_elsewhere = len(harness.commanded)
        harness.run_goal(client, executor, TARGET, cancel_after=3, start_late=3)
        harness.step(executor)
    except BaseException as exc:  # the node's output and its threads' stacks say where it was
        raise AssertionError(f"{exc}\n--- the node's output, stacks at SIGABRT ---\n{_stacks(process, log)}") from exc
    output, code = _stop(process, log)
    assert code == 0, output  # SIGTERM ends it quietly
    assert "Traceback" not in output, output
    assert refused.outcome == Result.REFUSED, refused.message
    assert refused.message == "target 1.803 m from the base, beyond the arm's reach (1.732 m)", refused.message
    assert commands_before == 0  # a refused case never moves the arm
    result = done.result
    assert done.status == GoalStatus.STATUS_SUCCEEDED
    assert result.outcome == Result.COMPLETED, (result.message, output)
    assert 15.0 <= result.duration_s <= 35.0, result.duration_s
    stages = [s for i, s in enumerate(harness.feedback) if i == 0 or s != harness.feedback[i - 1]]
    assert stages[:5] == [1, 2, 3, 4, 5], stages
    assert "from the target at the end of the injection" in result.message
    # the arm's tip came within 1 mm of the target (at the end of the injection); the node's own report is of the
    # tracked tip it last saw, which on a loaded machine can be the one of the period before (its tick came before
    # that period's measurement): at most one period of insertion behind (1.4 mm seen), within the 3 mm bound
    assert closest_m < 1e-3, closest_m
    off_mm = float(result.message.split("tracked tip ")[1].split(" mm")[0])
    assert off_mm < 3.0, result.message
    assert commands_in_case == periods, (commands_in_case, periods)  # one command per period it ran
    assert np.linalg.norm(tip_after_reset - np.array(SOURCE)) < 1e-3  # after the reset, back at the source
    assert cancelled.status == GoalStatus.STATUS_CANCELED
    assert (cancelled.result.outcome, cancelled.result.message) == (Result.ABORTED, "cancelled")
    assert commands_after_cancel == commands_at_cancel  # nothing commanded after the case ended
    # its first command is one period of joint motion from home at most (the gain halves the step), where planned
    # from the reset pose it would jump back to it
    first_step = np.abs(harness.commanded[first_late] - np.array(HOME))
    assert first_step.max() <= 0.5 * 2.61 * 0.1 + 1e-6, first_step
    assert (wrong_frame.outcome, wrong_frame.message) == (
        Result.REFUSED,
        "test_case.frame_id is 'world'; expected base_link",
    )
    first_step = np.abs(harness.commanded[first_elsewhere] - np.array(ELSEWHERE))
    assert first_step.max() <= 0.5 * 2.61 * 0.1 + 1e-6, first_step


@pytest.mark.parametrize(
    ("parameter", "message"),
    [
        ("sampling_rate_hz:=0.0", "parameter sampling_rate_hz: expected a number > 0, got 0.0"),
        ("sampling_rate_hz:=10", "parameter 'sampling_rate_hz' to '10' of type 'INTEGER', expecting type 'DOUBLE'"),
        ("needle_length_m:=-0.3", "parameter needle_length_m: expected a number > 0, got -0.3"),
        ("gain:=2.0", "parameter gain: expected a number in [0, 1], got 2.0"),
        ("joint_velocity_limits:=[1.0,-2.0]", "expected one speed > 0 per joint [rad/s], got [1.0, -2.0]"),
    ],
)
def test_bad_parameter_is_one_error_line(parameter: str, message: str, node_env: dict[str, str]) -> None:
    env = dict(node_env, PYTHONPATH=os.pathsep.join([str(EXAMPLE), node_env.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "cosim_controller_example.tip_servo_node", "--ros-args", "-p", parameter]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    # Fast DDS's own log lines ("<time> [RTPS_TRANSPORT_SHM Error] ... -> Function ...", e.g. a shared-memory port
    # whose lock another process on a loaded machine holds) are the middleware's, not the node's
    lines = [line for line in done.stderr.strip().splitlines() if " -> Function " not in line]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: tip_servo_node: ")
    assert message in lines[0]


#: Run in a process of its own: the node's main() with an executor whose wait starts after the context was shut
#: down, as when SIGTERM comes between the loop's rclpy.ok() and spin_once.
SIGNAL_IN_THE_GAP = """
import rclpy
from cosim_controller_example import tip_servo_node

class LateSignal(tip_servo_node.SingleThreadedExecutor):
    calls = 0
    def spin_once(self, timeout_sec=None):
        LateSignal.calls += 1
        if LateSignal.calls == 3:
            rclpy.shutdown()  # what rclpy's SIGTERM handler does
        super().spin_once(timeout_sec=timeout_sec)

tip_servo_node.SingleThreadedExecutor = LateSignal
raise SystemExit(tip_servo_node.main([]))
"""


def test_signal_between_check_and_wait_ends_quietly(node_env: dict[str, str]) -> None:
    env = dict(node_env, PYTHONPATH=os.pathsep.join([str(EXAMPLE), node_env.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_IN_THE_GAP], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
