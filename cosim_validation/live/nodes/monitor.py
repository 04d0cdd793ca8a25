"""monitor: the runtime monitor of a digital-twin session.

Subscribes to the case status, the expected states and each robot's joint states, tip poses and markers, and
evaluates the properties online (:class:`~cosim_validation.live.session.case_tracker.CaseTracker`, the
same code ``cosim replay`` runs on a bag). Publishes a first violation at once (``/cosim/verdicts``,
non-final, and ``/cosim/alerts``), and at the end of each case the final verdicts, the KPIs and one
``/cosim/case_reports`` message. ``/diagnostics`` says, once a second, that the monitor itself is alive (its
heartbeat, from a thread of its own: the controller waits for a late case report as long as it comes; it also says
how long ago the monitor's callbacks last ran and which cases it has open and concluded) and whether each robot is
alive: a robot that owes a sample for ``stale_timeout_s`` (wall time) while a case runs is reported stale (ERROR
alert and diagnostic), and again alive (INFO alert) when it answers.
"""

from __future__ import annotations

import faulthandler
import math
import sys
import time
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import PoseStamped
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cosim_validation.assembly.monitor_world import monitor_world_of
from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.record import RobotRole
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.nodes.report_waiter import CONCLUDED_KEPT, Heartbeat, MonitorState
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import DIAGNOSTICS, LATCHED, RESULT, STATE, to_rclpy
from cosim_validation.live.session.case_tracker import CaseEnd, CaseTracker
from cosim_validation.live.session.node_parameters import MonitorParams
from cosim_validation.live.session.robot_liveness import RobotLiveness
from cosim_validation.monitor.properties import Status, Verdict
from cosim_validation_interfaces.msg import Alert, CaseReport, CaseStatus, Kpi, RobotState
from cosim_validation_interfaces.msg import Verdict as VerdictMsg

LIVENESS_PERIOD_S = 0.05  # how often stale robots are looked for (wall time)
#: callbacks that have not run this long (wall time): one is stuck; the heartbeat's thread writes every thread's
#: stack to the node's log, once per such stretch
STUCK_DUMP_S = 20.0


class Monitor(Node):
    """Wiring: messages -> CaseTracker -> Verdict, Kpi, CaseReport, Alert, DiagnosticArray."""

    def __init__(self) -> None:
        super().__init__("monitor")
        params = declare_parameters(self, MonitorParams)
        world = monitor_world_of(params.config, params.properties)
        self._robots = tuple(RobotRole.parse(r) for r in params.robots)
        self._case_timeout_s = params.case_end_timeout_s
        # every driver (and proxy) publishes one tip pose and one marker per joint state (ros/sample_topics.py)
        self._session = CaseTracker(world, set(self._robots), self._case_ended, markers=frozenset(self._robots))
        # what the heartbeat says of the monitor (read by its thread: only whole values are assigned)
        self._callback_at = time.monotonic()
        self._open_ids: tuple[str, ...] = ()
        self._concluded_ids: tuple[str, ...] = ()
        self._dumped = False
        self._liveness = RobotLiveness(params.stale_timeout_s)
        # when the ending case last heard from its streams (its end, or a late sample after it): it is concluded
        # with what arrived once it has heard nothing for case_end_timeout_s (a backlog still being read under load
        # keeps it open); a sample after the next case started no longer counts
        self._end_requested_at: float | None = None
        self._next_started = False
        self._handled = 0  # messages fed to the tracker, shown in the heartbeat
        self._verdicts = self.create_publisher(VerdictMsg, "/cosim/verdicts", to_rclpy(RESULT))
        self._kpis = self.create_publisher(Kpi, "/cosim/kpis", to_rclpy(RESULT))
        self._reports = self.create_publisher(CaseReport, "/cosim/case_reports", to_rclpy(RESULT))
        self._alerts = self.create_publisher(Alert, "/cosim/alerts", to_rclpy(RESULT))
        self._diagnostics = self.create_publisher(DiagnosticArray, "/diagnostics", to_rclpy(DIAGNOSTICS))
        self.create_subscription(CaseStatus, "/cosim/case_status", self._on_status, to_rclpy(LATCHED))
        self.create_subscription(RobotState, "/cosim/expected", self._on_expected, to_rclpy(STATE))
        for role in self._robots:
            self.create_subscription(
                JointState,
                f"/cosim/{role.label}/joint_states",
                lambda m, r=role: self._on_joints(r, m),
                to_rclpy(STATE),
            )
            self.create_subscription(
                PoseStamped, f"/cosim/{role.label}/tip_pose", lambda m, r=role: self._on_tip(r, m), to_rclpy(STATE)
            )
            self.create_subscription(
                convert.marker_msg_type(),
                f"/cosim/{role.label}/marker",
                lambda m, r=role: self._on_marker(r, m),
                to_rclpy(STATE),
            )
        wall = Clock(clock_type=ClockType.STEADY_TIME)  # liveness is judged in wall time, also in sim time
        self._last_check_s = time.monotonic()
        self.create_timer(LIVENESS_PERIOD_S, self._check_liveness, clock=wall)
        self.create_timer(1.0, self._publish_diagnostics, clock=wall)
        # its own thread: the controller waits for a late case report as long as it beats
        self._heartbeat = Heartbeat(self._diagnostics, self._state)

    def _state(self) -> MonitorState:
        """What the heartbeat says (its thread); a stuck callback gets every thread's stack written to the log."""
        idle_s = time.monotonic() - self._callback_at
        if idle_s >= STUCK_DUMP_S and not self._dumped:
            self._dumped = True
            print(f"monitor: no callback has run for {idle_s:.0f} s; the stacks of its threads:", file=sys.stderr)
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        elif idle_s < STUCK_DUMP_S:
            self._dumped = False
        return MonitorState(self._handled, idle_s, self._open_ids, self._concluded_ids)

    def _case_ended(self, end: CaseEnd) -> None:
        """A concluded case: no longer open, concluded; then reported (:meth:`_on_case_end`)."""
        test_id = end.info.test_id
        self._open_ids = self._session.open_ids
        self._concluded_ids = (*self._concluded_ids, test_id)[-CONCLUDED_KEPT:]
        self._on_case_end(end)

    def destroy_node(self) -> None:
        """Stop the heartbeat, then the node."""
        self._heartbeat.stop()
        super().destroy_node()

    # ------------------------------------------------------------------ inputs
    def _on_status(self, msg: CaseStatus) -> None:
        if msg.event == CaseStatus.STARTED:
            info = convert.case_info_from_status(msg)
            self._guard(lambda: self._session.start(info))  # the case's messages that came before it
            self._open_ids = self._session.open_ids
            if not self._session.ending:  # else the previous case still waits for late samples: keep its timeout
                self._end_requested_at = None
            self._next_started = self._session.ending
            self._liveness.start_case(info.robots, time.monotonic())
        elif msg.event in convert.CASE_OUTCOMES and self._session.active:
            self._end_requested_at, self._next_started = time.monotonic(), False
            self._session.end(convert.CASE_OUTCOMES[msg.event], msg.message, convert.samples_streamed(msg))
        elif msg.event in convert.CASE_OUTCOMES:
            missed = msg.test_case.test_id
            self.get_logger().warning(f"{missed}: ended, but no case is open here (its start was missed)")

    def _on_expected(self, msg: RobotState) -> None:
        state = convert.expected_state_from_msg(msg)
        if self._session.case is not None:
            self._liveness.expected(state.t_ns, time.monotonic())
        self._guard(lambda: self._feed_expected(state))

    def _feed_expected(self, state: convert.ExpectedState) -> list[Verdict]:
        """The expected state, its stage and supervisor mode checked (InputError: an unknown one), to the cases."""
        stage, mode = convert.expected_labels(state)
        return self._session.expected(state.t_ns, stage, state.q, state.test_id, mode)

    def _on_joints(self, role: RobotRole, msg: JointState) -> None:
        sample = convert.joint_state_from_msg(msg)
        if self._liveness.joints(role, sample.t_ns, time.monotonic()):
            self._alert(Alert.INFO, role, "robot_recovered", f"the {role.label} robot answers again")
        self._guard(lambda: self._session.joints(role, sample.t_ns, sample.position))

    def _on_tip(self, role: RobotRole, msg: PoseStamped) -> None:
        pose = convert.pose_stamped_from_msg(msg)
        self._guard(lambda: self._session.tip(role, pose.t_ns, pose.position_m, pose.quat_wxyz))

    def _on_marker(self, role: RobotRole, msg: Any) -> None:
        frame = convert.marker_from_msg(msg)
        self._guard(
            lambda: self._session.marker(
                role, frame.t_ns, frame.position_m, frame.quat_wxyz, frame.registration_error_m
            )
        )

    def _guard(self, feed: Any) -> None:
        """Feed the monitor; bad data is an alert, never the end of the node."""
        self._handled += 1
        self._callback_at = time.monotonic()
        if self._end_requested_at is not None and not self._next_started:
            self._end_requested_at = self._callback_at  # the ending case's streams are still being read
        try:
            changes = feed()
        except CosimError as exc:
            self._alert(Alert.ERROR, RobotRole.EXPECTED, "bad_sample", str(exc))
            return
        case = self._session.case
        for verdict in changes:
            self._publish_verdict(case.test_id if case else "", verdict)

    # ------------------------------------------------------------------ outputs
    def _publish_verdict(self, test_id: str, verdict: Verdict) -> None:
        stamp = self.get_clock().now().nanoseconds
        self._verdicts.publish(convert.verdict_to_msg(verdict, test_id, stamp))
        if verdict.status is Status.VIOLATED and not verdict.final:
            self._alert(
                Alert.ERROR,
                verdict.robot,
                "property_violated",
                f"{test_id}: {verdict.property} violated on the {verdict.robot.label} robot at "
                f"{verdict.first_violation_time_s:.2f} s ({verdict.first_violation_stage.label})",
            )

    def _on_case_end(self, end: CaseEnd) -> None:
        report = convert.case_report_to_msg(end, self.get_clock().now().nanoseconds)
        for verdict in report.verdicts:
            self._verdicts.publish(verdict)
        for kpi in report.kpis:
            self._kpis.publish(kpi)
        self._reports.publish(report)
        violated = sorted({v.property for v in end.conclusion.verdicts if v.status is Status.VIOLATED})
        self.get_logger().info(
            f"{report.test_id} {end.outcome}: {len(report.verdicts)} verdicts"
            + (f", violated: {', '.join(violated)}" if violated else "")
        )

    def _alert(self, level: int, robot: RobotRole, code: str, message: str) -> None:
        log = self.get_logger()  # one call site per severity: rclpy refuses another severity at a call site
        if level >= Alert.ERROR:
            log.error(message)
        elif level == Alert.WARN:
            log.warning(message)
        else:
            log.info(message)
        alert = Alert(level=level, robot=int(robot), source=self.get_name(), code=code, message=message)
        alert.header.stamp = self.get_clock().now().to_msg()
        self._alerts.publish(alert)

    # ------------------------------------------------------------------ liveness
    def _check_liveness(self) -> None:
        now = time.monotonic()
        self._callback_at = now
        since_check_s, self._last_check_s = now - self._last_check_s, now
        case = self._session.case
        if case is not None:
            for role, owed_s in self._liveness.newly_stale(now, since_check_s):
                # the previous check's time says whether this report came at the first check past the timeout; both
                # rounded up to the millisecond, so the owed time printed is never the timeout itself (0.5004 s
                # printed 0.500 s against a 0.5 s timeout)
                message = (
                    f"{case.test_id}: the {role.label} robot has not answered the sample sent {_ms_up(owed_s)} s ago "
                    f"(previous liveness check {_ms_up(since_check_s)} s earlier"
                )
                gap_s = self._liveness.deferred_gap_s
                if gap_s is not None:  # that check came late (this process was starved) and judged nothing
                    message += f"; it was deferred, having come {_ms_up(gap_s)} s after the one before it"
                message += ")"
                self._alert(Alert.ERROR, role, "robot_stale", message)
                self._publish_diagnostics()
        if self._end_requested_at is not None and now - self._end_requested_at > self._case_timeout_s:
            self._end_requested_at = None
            self._session.conclude_ending()  # a stream never caught up: conclude with what arrived

    def _publish_diagnostics(self) -> None:
        now = time.monotonic()
        statuses = []
        for role in self._robots:
            stale, silent_s = role in self._liveness.stale, self._liveness.silent_for_s(role, now)
            statuses.append(
                DiagnosticStatus(
                    level=DiagnosticStatus.ERROR if stale else DiagnosticStatus.OK,
                    name=f"cosim/monitor/{role.label}_robot",
                    hardware_id=role.label,
                    message=f"stale: no joint state for {silent_s:.1f} s" if stale else "alive",
                    values=[KeyValue(key="seconds_since_last_joint_state", value=f"{silent_s:.3f}")],
                )
            )
        array = DiagnosticArray(status=statuses)
        array.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics.publish(array)


def _ms_up(seconds: float) -> str:
    """``seconds`` rounded up to the millisecond, as text with three decimals."""
    return f"{math.ceil(seconds * 1e3) / 1e3:.3f}"


def main(args: list[str] | None = None) -> int:
    """Run the ``monitor`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation monitor --ros-args -p properties:=config/properties.yaml

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(Monitor, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
