"""A slow monitor delays the case report, never drops it; a dead one ends the wait after the quiet time, a stuck one
once its heartbeat says its callbacks have not run for ``report_stuck_s``.

Real nodes over DDS: the virtual driver, the controller (``report_timeout_s`` 3 s, ``report_stuck_s`` 4 s,
``report_limit_s`` 120 s) and the monitor double of ``slow_monitor.py``, which publishes each case report 8 s late
while its heartbeat goes on, dies at the case's end, or never returns from the callback that concluded it. Before
the heartbeat the controller gave up after ``report_timeout_s`` whatever the monitor did, and the late case lost
its verdicts.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.live.ros.action_goal import send_goal, wait_result
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec

pytestmark = pytest.mark.ros

QUIET_S = 3.0  # the controller's report_timeout_s here (the heartbeat comes once a second)
DELAY_S = 8.0  # the slow monitor's delay: well past QUIET_S
STUCK_S = 4.0  # the controller's report_stuck_s here
LIMIT_S = 120.0  # the controller's report_limit_s here: a wait that ends for another reason says so


@dataclass(frozen=True)
class DoubleSpec(ProcessSpec):
    """A node process from a test module instead of cosim_validation.live.nodes."""

    def command(self) -> list[str]:
        return [sys.executable, "-m", f"test.live.ros.{self.executable}", "--ros-args", *self.ros_args]


def _run_case(tmp_path: Path, repo_root: Path, context: Any, env: dict[str, str], monitor_env: dict[str, str]) -> Any:
    """One case through driver, controller and the monitor double; the action result and the wall time of the
    wait for it after the robots stopped."""
    from geometry_msgs.msg import Point
    from rclpy.action import ActionClient
    from rclpy.node import Node

    from cosim_validation.live.nodes.node_runtime import PoliteMultiThreadedExecutor
    from cosim_validation_interfaces.action import RunTestCase

    config = repo_root / "config" / "needle_insertion.yaml"
    group = ProcessGroup(tmp_path, env=env)
    node = Node("client", context=context)
    executor = PoliteMultiThreadedExecutor(num_threads=2, context=context)
    executor.add_node(node)
    client: Any = ActionClient(node, RunTestCase, "/cosim/run_test_case")
    threading.Thread(target=executor.spin, daemon=True).start()
    common = ("-p", f"config:={config}", "-p", "robots:=[virtual]")
    try:
        group.start(ProcessSpec("virtual_driver", "virtual_driver", ("-p", f"config:={config}")))
        group.start(DoubleSpec("monitor", "slow_monitor", common, env=monitor_env))
        timeouts = (
            *("-p", f"report_timeout_s:={QUIET_S}", "-p", f"report_stuck_s:={STUCK_S}"),
            *("-p", f"report_limit_s:={LIMIT_S}", "-p", "min_subscribers:=1"),
        )
        group.start(ProcessSpec("controller", "controller", (*common, *timeouts)))
        group.wait_ready(["virtual_driver", "monitor", "controller"], timeout_s=180)
        assert client.wait_for_server(timeout_sec=30)
        goal = RunTestCase.Goal(controller="straight")
        goal.test_case.test_id = "slow-monitor-1"
        goal.test_case.frame_id = "base_link"
        goal.test_case.source = Point(x=0.45, y=0.0, z=0.30)
        goal.test_case.target = Point(x=0.440, y=-0.056, z=-0.013)
        handle = send_goal(client, goal)
        assert handle.accepted
        sent = time.monotonic()
        result = wait_result(handle, timeout_s=180).result
        return result, time.monotonic() - sent, group.log_tail("controller", lines=40)
    finally:
        group.stop()
        executor.shutdown()
        node.destroy_node()


@pytest.mark.slow
def test_a_slow_monitor_delays_the_report(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]
) -> None:
    result, took_s, log = _run_case(
        tmp_path, repo_root, rclpy_context, node_env, {"SLOW_MONITOR_REPORT_DELAY_S": str(DELAY_S)}
    )
    assert "did not report" not in result.message, log
    assert len(result.verdicts) > 0  # the verdicts the test generator stores
    assert {v.test_id for v in result.verdicts} == {"slow-monitor-1"}
    assert took_s > DELAY_S  # the report did come late


@pytest.mark.slow
def test_a_dead_monitor_ends_the_wait_after_the_quiet_time(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]
) -> None:
    result, _took_s, log = _run_case(tmp_path, repo_root, rclpy_context, node_env, {"SLOW_MONITOR_DIE": "1"})
    assert f"the monitor did not report this case: the monitor sent no heartbeat for {QUIET_S:g} s" in result.message
    assert len(result.verdicts) == 0
    assert "no case report from the monitor" in log


@pytest.mark.slow
def test_a_stuck_monitor_ends_the_wait_once_its_callbacks_stop(
    tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]
) -> None:
    """Its heartbeat goes on from its own thread; before the heartbeat said what the monitor was doing, the controller
    waited the whole report_limit_s (600 s as shipped) for a report that could not come."""
    result, _took_s, log = _run_case(tmp_path, repo_root, rclpy_context, node_env, {"SLOW_MONITOR_STUCK": "1"})
    message = result.message
    assert "the monitor did not report this case: the monitor's callbacks have not run for" in message, log
    idle_s = float(message.split("have not run for ")[1].split(" s")[0])
    assert STUCK_S <= idle_s < LIMIT_S, message
    assert len(result.verdicts) == 0
    assert "no case report from the monitor" in log
