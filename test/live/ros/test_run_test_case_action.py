"""Two real nodes in two processes over DDS: a RunTestCase goal gets stage feedback and a result."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.live.ros.action_goal import ActionTimeoutError, send_goal, wait_result
from cosim_validation.live.ros.qos import STATE, to_rclpy
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec

pytestmark = pytest.mark.ros


@pytest.mark.slow
def test_goal_feedback_and_result(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]
) -> None:
    from geometry_msgs.msg import Point
    from rclpy.action import ActionClient
    from rclpy.node import Node
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    from cosim_validation.live.nodes.node_runtime import PoliteMultiThreadedExecutor
    from cosim_validation_interfaces.action import RunTestCase
    from cosim_validation_interfaces.msg import RobotState

    config = repo_root / "config" / "needle_insertion.yaml"
    group = ProcessGroup(tmp_path, env=node_env)
    node = Node("client", context=rclpy_context)
    executor = PoliteMultiThreadedExecutor(num_threads=2, context=rclpy_context)
    executor.add_node(node)
    expected: list[Any] = []
    node.create_subscription(RobotState, "/cosim/expected", expected.append, to_rclpy(STATE))
    client = ActionClient(node, RunTestCase, "/cosim/run_test_case")
    # rclpy's ActionClient drops a goal's feedback callback once its result arrives, and feedback (a topic) and
    # result (a service reply) are not ordered; the action's feedback topic itself shows every message
    feedback: list[Any] = []
    node.create_subscription(
        RunTestCase.Impl.FeedbackMessage,
        "/cosim/run_test_case/_action/feedback",
        lambda m: feedback.append(m.feedback),
        QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE),
    )
    threading.Thread(target=executor.spin, daemon=True).start()
    try:
        group.start(ProcessSpec("virtual_driver", "virtual_driver", ("-p", f"config:={config}")))
        group.start(
            ProcessSpec(
                "controller",
                "controller",
                (
                    "-p",
                    f"config:={config}",
                    "-p",
                    "robots:=[virtual]",
                    "-p",
                    "min_subscribers:=1",
                    "-p",
                    "report_timeout_s:=0.5",
                ),
            )
        )
        group.wait_ready(["virtual_driver", "controller"], timeout_s=120)
        assert client.wait_for_server(timeout_sec=30)
        goal = RunTestCase.Goal(controller="straight")
        goal.test_case.test_id = "two-nodes-1"
        goal.test_case.frame_id = "base_link"
        goal.test_case.source = Point(x=0.45, y=0.0, z=0.30)  # testgen.source_region's centre
        goal.test_case.target = Point(x=0.440, y=-0.056, z=-0.013)  # in the left lung, away from the heart
        # a goal sent while discovery is still matching endpoints can go unanswered: it is sent again
        handle = send_goal(client, goal)
        assert handle.accepted
        try:
            result = wait_result(handle, timeout_s=120).result
        except ActionTimeoutError as exc:
            raise AssertionError(group.log_tail("controller")) from exc
        # the expected stream and the feedback are topics, the result a service reply: let the last samples land
        n = round(result.duration_s * 10.0) + 1
        deadline = time.monotonic() + 10
        while (len(expected) < n or not feedback or feedback[-1].progress < 1.0) and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        group.stop()
        executor.shutdown()
        node.destroy_node()
    assert result.outcome == RunTestCase.Result.COMPLETED, result.message
    assert "the monitor did not report this case" in result.message  # no monitor node in this graph
    stages = [f.stage for f in feedback]
    assert stages == sorted(stages)  # stages come in order
    assert set(stages) == {1, 2, 3, 4, 5}
    progress = [f.progress for f in feedback]
    assert progress == sorted(progress)
    assert progress[-1] == pytest.approx(1.0)
    assert {f.sample_count for f in feedback} == {n}
    assert result.duration_s > 1.0
    assert len(expected) == n
    assert [m.sample_index for m in expected] == list(range(n))
    np.testing.assert_allclose([m.header.stamp.nanosec % 100_000_000 for m in expected], 0)  # on the 10 Hz grid
