"""The monitor node concludes a case like the in-process CaseMonitor and reports a silent robot as stale."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.common.config import load_config
from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import DIAGNOSTICS, LATCHED, RESULT, STATE, to_rclpy
from cosim_validation.live.session.node_parameters import defaults_of
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec
from cosim_validation.robots.model import RobotConfig
from test.live.ros.ros_harness import spin_until
from test.live.session.test_stream_assembler import DT_NS, START_NS, make_record

pytestmark = pytest.mark.ros


class FakeController:
    """Publishes a case as the controller and drivers would (from the test process)."""

    def __init__(self, node: Any, needle_length_m: float) -> None:
        self.needle_length_m = needle_length_m
        from geometry_msgs.msg import PoseStamped
        from sensor_msgs.msg import JointState

        from cosim_validation_interfaces.msg import CaseStatus, RobotState

        self.status = node.create_publisher(CaseStatus, "/cosim/case_status", to_rclpy(LATCHED))
        self.expected = node.create_publisher(RobotState, "/cosim/expected", to_rclpy(STATE))
        self.joints = node.create_publisher(JointState, "/cosim/virtual/joint_states", to_rclpy(STATE))
        self.tips = node.create_publisher(PoseStamped, "/cosim/virtual/tip_pose", to_rclpy(STATE))

    def matched(self) -> bool:
        return all(p.get_subscription_count() > 0 for p in (self.status, self.expected, self.joints, self.tips))

    def status_msg(self, event: int, test_id: str, target: np.ndarray, n: int) -> Any:
        from geometry_msgs.msg import Point

        from cosim_validation_interfaces.msg import CaseStatus

        msg = CaseStatus(
            event=event, sample_count=n, needle_length_m=self.needle_length_m, robots=["virtual"], controller="straight"
        )
        msg.test_case.test_id = test_id
        msg.test_case.target = Point(x=float(target[0]), y=float(target[1]), z=float(target[2]))
        return msg


@pytest.fixture
def monitor_graph(tmp_path: Path, repo_root: Path, rclpy_context: Any, node_env: dict[str, str]) -> Any:
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    group = ProcessGroup(tmp_path, env=node_env)
    node = Node("fake_controller", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    group.start(
        ProcessSpec(
            "monitor",
            "monitor",
            (
                "-p",
                f"config:={repo_root / 'config' / 'needle_insertion.yaml'}",
                "-p",
                f"properties:={repo_root / 'config' / 'properties.yaml'}",
                "-p",
                "robots:=[virtual]",
            ),
        )
    )
    try:
        group.wait_ready(["monitor"], timeout_s=120)
        yield node, executor, group
    finally:
        group.stop()
        executor.shutdown()
        node.destroy_node()


def test_monitor_node_concludes_a_case(monitor_graph: Any, repo_root: Path) -> None:
    from cosim_validation_interfaces.msg import CaseReport, CaseStatus

    node, executor, group = monitor_graph
    config = load_config(repo_root / "config" / "needle_insertion.yaml")
    kin = RobotConfig.from_config(config["robot"]).kinematics
    n = 30
    expected = make_record(kin, RobotRole.EXPECTED, n, 3, with_tip=False)
    virtual = make_record(kin, RobotRole.VIRTUAL, n, 3, with_tip=True)
    reports: list[Any] = []
    node.create_subscription(CaseReport, "/cosim/case_reports", reports.append, to_rclpy(RESULT))
    fake = FakeController(node, kin.needle_length_m)
    assert spin_until(node, executor, fake.matched, timeout_s=30)
    target = expected.tip_pos_m[-1]
    fake.status.publish(fake.status_msg(CaseStatus.STARTED, "case-a", target, n))
    spin_until(node, executor, lambda: False, timeout_s=0.3)
    for k in range(n):
        stamp = START_NS + k * DT_NS
        state = convert.ExpectedState(
            stamp, "case-a", int(expected.stage[k]), k, kin.joint_names, expected.q_setpoint[k]
        )
        fake.expected.publish(convert.expected_state_to_msg(state, expected.tip_pos_m[k], expected.tip_quat_wxyz[k]))
        fake.joints.publish(
            convert.joint_state_to_msg(convert.JointSample(stamp, kin.joint_names, virtual.q_measured[k], np.zeros(0)))
        )
        fake.tips.publish(
            convert.pose_stamped_to_msg(
                convert.StampedPose(stamp, "base_link", virtual.actual_tip_pos_m[k], virtual.actual_tip_quat_wxyz[k])
            )
        )
    fake.status.publish(fake.status_msg(CaseStatus.COMPLETED, "case-a", target, n))
    assert spin_until(node, executor, lambda: bool(reports), timeout_s=30), group.log_tail("monitor")
    (report,) = reports
    assert report.test_id == "case-a"
    assert report.outcome == CaseStatus.COMPLETED
    assert dict(zip(report.robots, report.samples, strict=True)) == {0: n, 1: n}

    # the same samples through the in-process monitor give the same verdicts and KPIs
    from cosim_validation.assembly.monitor_world import load_monitor_world
    from cosim_validation.live.session.case_monitor import CaseMonitor

    world = load_monitor_world(repo_root / "config" / "needle_insertion.yaml", repo_root / "config" / "properties.yaml")
    reference = CaseMonitor(world, {RobotRole.VIRTUAL: True}, target_m=target)
    for k in range(n):
        stamp = START_NS + k * DT_NS
        reference.add_expected(stamp, Stage(int(expected.stage[k])), expected.q_setpoint[k])
        reference.add_joints(RobotRole.VIRTUAL, stamp, virtual.q_measured[k])
        reference.add_tip(RobotRole.VIRTUAL, stamp, virtual.actual_tip_pos_m[k], virtual.actual_tip_quat_wxyz[k])
    conclusion = reference.finish()
    live = [convert.verdict_from_msg(v)[1] for v in report.verdicts]
    assert len(live) == len(conclusion.verdicts)
    for got, want in zip(live, conclusion.verdicts, strict=True):
        assert got.same_outcome(want), (got, want)
    assert [convert.kpi_from_msg(k)[1].name for k in report.kpis] == [k.name for k in conclusion.kpis]


def test_silent_robot_is_stale_at_the_first_check_past_its_timeout(monitor_graph: Any, repo_root: Path) -> None:
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    from cosim_validation_interfaces.msg import Alert, CaseStatus

    node, executor, group = monitor_graph
    kin = RobotConfig.from_config(load_config(repo_root / "config" / "needle_insertion.yaml")["robot"]).kinematics
    alerts: list[Any] = []
    diagnostics: list[Any] = []
    node.create_subscription(Alert, "/cosim/alerts", alerts.append, to_rclpy(RESULT))
    node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, to_rclpy(DIAGNOSTICS))
    fake = FakeController(node, kin.needle_length_m)
    assert spin_until(node, executor, fake.matched, timeout_s=30)
    fake.status.publish(fake.status_msg(CaseStatus.STARTED, "case-b", np.zeros(3), 10))
    spin_until(node, executor, lambda: False, timeout_s=0.3)
    q = np.array([0.0, 0.3, 0.0, 1.6, 0.0, 1.2, 0.0])
    state = convert.ExpectedState(START_NS, "case-b", int(Stage.INITIALIZATION), 0, kin.joint_names, q)
    fake.expected.publish(convert.expected_state_to_msg(state, np.zeros(3), np.array([1.0, 0, 0, 0])))
    # the robot never answers this sample

    def stale_alert() -> bool:
        return any(a.code == "robot_stale" and a.robot == 1 for a in alerts)

    assert spin_until(node, executor, stale_alert, timeout_s=30), group.log_tail("monitor")
    # the promise in the monitor's own clock (a loaded machine may delay its timer, not the rule): reported at the
    # first liveness check after stale_timeout_s that judged, never before it; a check that came late (its process
    # starved) judges nothing and says so in the report, and then the check before it came before the timeout
    timeout_s = float(defaults_of("monitor")["stale_timeout_s"])
    message = next(a.message for a in alerts if a.code == "robot_stale")
    owed_s, since_check_s, *deferred_gap_s = (float(v) for v in re.findall(r"(\d+\.\d+) s", message))
    assert owed_s > timeout_s, message
    assert owed_s - since_check_s - sum(deferred_gap_s) <= timeout_s + 2e-3, message
    assert ("it was deferred" in message) == bool(deferred_gap_s), message
    assert all(gap > timeout_s / 2 for gap in deferred_gap_s), message  # deferred only when late
    assert spin_until(
        node,
        executor,
        lambda: any(
            s.level == DiagnosticStatus.ERROR and s.hardware_id == "virtual" for d in diagnostics for s in d.status
        ),
        timeout_s=5,
    )


def test_a_stale_robots_owed_time_is_printed_rounded_up() -> None:
    """The alert's times are rounded up to the millisecond: an owed 0.5004 s against a 0.5 s timeout read "0.500 s
    ago", as if reported at the timeout, not past it (the test above parses these times)."""
    from cosim_validation.live.nodes.monitor import _ms_up

    assert [_ms_up(s) for s in (0.5000001, 0.5004, 0.5, 0.0, 1.2345)] == ["0.501", "0.501", "0.500", "0.000", "1.235"]
