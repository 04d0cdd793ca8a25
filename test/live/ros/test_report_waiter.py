"""What the controller makes of the monitor's heartbeat while it waits for a case report (no middleware: the
heartbeats and reports are handed to the waiter as its subscriptions would)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

from cosim_validation.live.nodes.report_waiter import HEARTBEAT_STATUS, MonitorState, ReportWaiter
from cosim_validation_interfaces.msg import CaseReport

pytestmark = pytest.mark.ros

QUIET_S = 1.0


@pytest.fixture
def waiter(rclpy_context: Any) -> Iterator[ReportWaiter]:
    from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
    from rclpy.node import Node

    node = Node("report_waiter_test", context=rclpy_context)
    try:
        yield ReportWaiter(node, MutuallyExclusiveCallbackGroup())
    finally:
        node.destroy_node()


def beat(state: MonitorState) -> DiagnosticArray:
    status = DiagnosticStatus(name=HEARTBEAT_STATUS, hardware_id="monitor", values=state.to_values())
    return DiagnosticArray(status=[status])


class Beats:
    """Heartbeats every 0.1 s from a thread, saying ``state`` (which the test may change), until stopped."""

    def __init__(self, waiter: ReportWaiter, state: MonitorState) -> None:
        self.state = state
        self._stop = threading.Event()

        def run() -> None:
            while not self._stop.wait(0.1):
                waiter._on_diagnostics(beat(self.state))

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def test_the_state_survives_the_heartbeat() -> None:
    state = MonitorState(1234, 0.05, ("case-2",), ("case-0", "case 1"))
    assert MonitorState.from_values(beat(state).status[0].values) == state
    assert state.knows("case 1")
    assert state.knows("case-2")
    assert not state.knows("case-3")
    assert MonitorState.from_values(DiagnosticStatus().values) is None  # not a monitor's state


def test_a_case_the_monitor_has_open_is_waited_for(waiter: ReportWaiter) -> None:
    beats = Beats(waiter, MonitorState(10, 0.05, ("c1",)))
    threading.Timer(3 * QUIET_S, lambda: waiter._on_report(CaseReport(test_id="c1"))).start()
    try:
        waited = waiter.wait("c1", QUIET_S, limit_s=60.0, stuck_s=5.0)
    finally:
        beats.stop()
    assert waited.report is not None, waited.reason
    assert waited.report.test_id == "c1"
    assert waited.waited_s >= 3 * QUIET_S  # through three quiet times of heartbeats that knew the case


def test_a_case_the_monitor_never_saw_ends_the_wait(waiter: ReportWaiter) -> None:
    beats = Beats(waiter, MonitorState(10, 0.05, ("c0",), ("c-1",)))
    try:
        waited = waiter.wait("c1", QUIET_S, limit_s=60.0, stuck_s=5.0)
    finally:
        beats.stop()
    assert waited.report is None
    assert waited.reason.startswith(f"the monitor has not seen this case (for {QUIET_S:g} s: 10 messages handled")
    assert "open cases [c0]" in waited.reason


def test_a_stuck_monitor_ends_the_wait(waiter: ReportWaiter) -> None:
    beats = Beats(waiter, MonitorState(10, 0.05, ("c1",)))
    threading.Timer(0.5, lambda: setattr(beats, "state", MonitorState(10, 7.0, ("c1",)))).start()
    try:
        waited = waiter.wait("c1", QUIET_S, limit_s=60.0, stuck_s=5.0)
    finally:
        beats.stop()
    assert waited.report is None
    assert waited.reason.startswith("the monitor's callbacks have not run for 7 s"), waited.reason


def test_the_limit_says_what_the_monitor_last_said(waiter: ReportWaiter) -> None:
    beats = Beats(waiter, MonitorState(10, 0.05, ("c1",)))
    start = time.monotonic()
    try:
        waited = waiter.wait("c1", QUIET_S, limit_s=2 * QUIET_S, stuck_s=5.0)
    finally:
        beats.stop()
    assert waited.report is None
    assert time.monotonic() - start >= 2 * QUIET_S
    assert waited.reason.startswith("no report within the limit of 2 s (the monitor: 10 messages handled")
