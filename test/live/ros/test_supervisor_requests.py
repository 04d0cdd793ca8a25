"""The task supervisor's ROS interface from a separate client, over DDS (issue 20): the controller node runs a
supervised case in real time while this test, another process's node, calls ``/cosim/supervisor/request`` (abort,
teleoperation, auto, recover) and drives the tip with ``TwistStamped`` on ``/cosim/supervisor/teleoperation/twist``.
One session, several checks: the supervisor is a node of its own in the graph (``/supervisor``, with the
service, the topics and its parameters), the request service's answers, the state and transition topics, the
robot holding after the abort and following the teleoperation command."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from cosim_validation.live.ros.action_goal import send_goal
from cosim_validation.live.ros.qos import RESULT, STATE, to_rclpy
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec

pytestmark = pytest.mark.ros

TIMEOUT_S = 60.0  # generous: a loaded machine slows the nodes, never makes a wrong state look right
UP_M_S = 0.02  # the teleoperation twist: the tip straight up at 2 cm/s


def _supervisor_config(folder: Path, repo_root: Path) -> Path:
    """The shipped supervisor configuration with room for a client's requests: a stopped or idle task ends the case
    only after 60 s (shipped: 1 s)."""
    shipped = repo_root / "config" / "supervisor"
    config = yaml.safe_load((shipped / "supervisor.yaml").read_text())
    body = config["supervisor"]
    body["machine"], body["needle_force"] = str(shipped / body["machine"]), str(shipped / body["needle_force"])
    body["loop"]["stopped_timeout_s"] = body["loop"]["teleoperation_idle_s"] = 60.0
    path = folder / "supervisor.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _wait(condition: Callable[[], bool], what: str, log: Callable[[], str]) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{log()}")
        time.sleep(0.02)


def _supervisor_is_a_node(node: Any, log: Callable[[], str]) -> None:
    """The graph, seen from this process: a node ``/supervisor`` (composed into the controller's process) serves
    the request service and publishes the supervisor's topics, the controller node neither; its parameters say
    what the controller loaded and its own setting."""
    from rcl_interfaces.srv import GetParameters
    from rclpy.node import NodeNameNonExistentError

    def services(name: str) -> dict[str, list[str]]:
        try:  # a node the graph does not know yet has no services (rclpy raises for it)
            return dict(node.get_service_names_and_types_by_node(name, "/"))
        except NodeNameNonExistentError:
            return {}

    request = "/cosim/supervisor/request"
    _wait(lambda: {"supervisor", "controller"} <= set(node.get_node_names()), "both nodes in the graph", log)
    _wait(lambda: request in services("supervisor"), "the supervisor node's request service", log)
    assert services("supervisor")[request] == ["cosim_validation_interfaces/srv/SupervisorRequest"]
    assert request not in services("controller")
    published = dict(node.get_publisher_names_and_types_by_node("supervisor", "/"))
    assert {"/cosim/supervisor/state", "/cosim/supervisor/transitions"} <= set(published)
    assert "/cosim/supervisor/state" not in dict(node.get_publisher_names_and_types_by_node("controller", "/"))
    client = node.create_client(GetParameters, "/supervisor/get_parameters")
    assert client.wait_for_service(timeout_sec=30)
    future = client.call_async(GetParameters.Request(names=["machine", "scenario", "teleoperation_stale_s"]))
    _wait(future.done, "the supervisor node's parameters", log)
    machine, scenario, stale = future.result().values
    assert (machine.string_value, scenario.string_value, stale.double_value) == ("needle_insertion", "", 0.5)


@pytest.mark.slow
def test_requests_and_teleoperation_from_another_node(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]
) -> None:
    from geometry_msgs.msg import Point, PoseStamped, TwistStamped
    from rclpy.action import ActionClient
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from cosim_validation.live.nodes.node_runtime import PoliteMultiThreadedExecutor
    from cosim_validation_interfaces.action import RunTestCase
    from cosim_validation_interfaces.msg import SupervisorState, SupervisorTransition
    from cosim_validation_interfaces.srv import SupervisorRequest

    config = repo_root / "config" / "needle_insertion.yaml"
    group = ProcessGroup(tmp_path, env=node_env)
    node = Node("surgeon", context=rclpy_context)
    executor = PoliteMultiThreadedExecutor(num_threads=2, context=rclpy_context)
    executor.add_node(node)
    states: list[Any] = []
    transitions: list[Any] = []
    commands: list[tuple[int, tuple[float, ...]]] = []  # (stamp, setpoint) sent to the robot
    tips: list[tuple[int, np.ndarray]] = []  # (stamp, the robot's tip)
    node.create_subscription(SupervisorState, "/cosim/supervisor/state", states.append, to_rclpy(STATE))
    node.create_subscription(
        SupervisorTransition, "/cosim/supervisor/transitions", transitions.append, to_rclpy(RESULT)
    )

    def stamp(msg: Any) -> int:
        return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)

    node.create_subscription(
        JointState, "/cosim/virtual/command", lambda m: commands.append((stamp(m), tuple(m.position))), to_rclpy(STATE)
    )
    node.create_subscription(
        PoseStamped,
        "/cosim/virtual/tip_pose",
        lambda m: tips.append((stamp(m), np.array([m.pose.position.x, m.pose.position.y, m.pose.position.z]))),
        to_rclpy(STATE),
    )
    requests = node.create_client(SupervisorRequest, "/cosim/supervisor/request")
    twist_pub = node.create_publisher(TwistStamped, "/cosim/supervisor/teleoperation/twist", to_rclpy(STATE))
    actions = ActionClient(node, RunTestCase, "/cosim/run_test_case")
    threading.Thread(target=executor.spin, daemon=True).start()

    def log() -> str:
        return group.log_tail("controller")

    def ask(request: str) -> Any:
        future = requests.call_async(SupervisorRequest.Request(request=request))
        _wait(future.done, f"the answer to {request!r}", log)
        return future.result()

    def state() -> str:
        return str(states[-1].state) if states else ""

    supervisor = _supervisor_config(tmp_path, repo_root)
    try:
        group.start(ProcessSpec("virtual_driver", "virtual_driver", ("-p", f"config:={config}")))
        params = (
            f"config:={config}",
            "robots:=[virtual]",
            f"supervisor:={supervisor}",
            "publish_clock:=false",
            "min_subscribers:=1",
            "subscriber_timeout_s:=2.0",
            "report_timeout_s:=0.5",
        )
        group.start(ProcessSpec("controller", "controller", tuple(a for p in params for a in ("-p", p))))
        group.wait_ready(["virtual_driver", "controller"], timeout_s=120)
        assert requests.wait_for_service(timeout_sec=30)
        _supervisor_is_a_node(node, log)
        idle = ask("abort")  # no case yet: refused, saying why
        assert (idle.accepted, idle.message) == (False, "no supervised case is running")

        assert actions.wait_for_server(timeout_sec=30)
        goal = RunTestCase.Goal(controller="straight")
        goal.test_case.test_id = "surgeon-1"
        goal.test_case.frame_id = "base_link"
        goal.test_case.source = Point(x=0.45, y=0.0, z=0.30)
        goal.test_case.target = Point(x=0.440, y=-0.056, z=-0.013)  # in the left lung, away from the heart
        handle = send_goal(actions, goal)
        assert handle.accepted
        _wait(lambda: state().endswith("MoveToSource") and len(states) > 5, "autonomous motion", log)

        unknown = ask("dance")
        assert not unknown.accepted
        assert "dance" in unknown.message
        aborted = ask("abort")
        assert aborted.accepted, aborted.message
        _wait(lambda: state().endswith("TaskStopped"), "TaskStopped after the abort", log)
        stop_ns = stamp(next(s for s in states if s.state.endswith("TaskStopped")))
        assert states[-1].mode == SupervisorState.STOPPED
        # five periods of holding, waited for by count (a loaded machine sends fewer per second of wall time)
        _wait(lambda: len([q for t, q in commands if t >= stop_ns]) >= 5, "five periods after the abort", log)
        held = [q for t, q in commands if t >= stop_ns]
        before = [q for t, q in commands if t < stop_ns][-1]
        assert len(held) >= 5
        assert all(q == before for q in held)  # not one motion command after the abort

        assert ask("teleoperation").accepted
        _wait(lambda: state().endswith("TeleoperationMode"), "TeleoperationMode", log)
        teleop_ns = stamp(next(s for s in states if s.state.endswith("TeleoperationMode")))
        start_tip = [p for t, p in tips if t <= teleop_ns][-1]
        twist = TwistStamped()
        twist.header.frame_id, twist.twist.linear.z = "base_link", UP_M_S
        for _ in range(30):  # 1.5 s of a surgeon's device at 20 Hz
            twist.header.stamp = node.get_clock().now().to_msg()
            twist_pub.publish(twist)
            time.sleep(0.05)
        moved = tips[-1][1] - start_tip
        assert states[-1].mode == SupervisorState.TELEOPERATION
        assert moved[2] > 0.01  # the tip went up (2 cm/s for about 1.5 s, less the follower's start)
        assert np.linalg.norm(moved[:2]) < 0.2 * moved[2]  # and only up

        assert ask("auto").accepted
        _wait(lambda: state().endswith("TaskStopped") and stamp(states[-1]) > teleop_ns, "TaskStopped again", log)
        # no teleoperation command any more: the robot holds where teleoperation left it (three periods of it,
        # waited for by count, not by wall time: on a loaded machine 0.5 s held only two)
        back_ns = stamp(next(s for s in states if s.state.endswith("TaskStopped") and stamp(s) > teleop_ns))
        _wait(lambda: len([q for t, q in commands if t >= back_ns]) >= 3, "three periods after auto", log)
        after = [q for t, q in commands if t >= back_ns]
        assert len(after) >= 3
        assert len(set(after)) == 1

        recovered = ask("recover")
        assert recovered.accepted
        _wait(lambda: "InsertionTask" in state() and stamp(states[-1]) > back_ns, "the task resumed", log)
        handle.cancel_goal_async()
    finally:
        group.stop()
        executor.shutdown()
        node.destroy_node()
    taken = [(str(t.source), str(t.target)) for t in transitions]
    stops = [i for i, (_, target) in enumerate(taken) if target.endswith("TaskStopped")]
    assert len(stops) == 2  # the abort, and auto back from teleoperation
    assert taken[stops[0] + 1][1].endswith("TeleoperationMode")
    assert "InsertionTask" in taken[stops[1] + 1][1]  # recovered: the task goes on
    assert "e_TaskAborted" in transitions[stops[0]].events
