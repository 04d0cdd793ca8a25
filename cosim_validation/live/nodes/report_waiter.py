"""The monitor's case reports, waited for by the controller to put verdicts and KPIs into an action result.

A monitor that falls behind (a loaded machine, a long backlog of samples) reports a case late, never not at all:
the controller waits for a case's report as long as the monitor's process is alive. Its sign of life is its
heartbeat (:class:`Heartbeat`), the ``cosim/monitor`` status on ``/diagnostics`` sent once a second of wall time by
a thread of its own, so that a long computation in the monitor's callbacks (a case's conclusion, a first numba
compile: seconds under load) does not silence it, and any report it sends. The wait ends without the report when
the monitor has been silent for ``quiet_s`` (its process ended, or its middleware stopped), or after ``limit_s``
in all, however alive it is (a monitor stuck in a callback), so that a session never waits forever. Every time
here is wall time (``time.monotonic``), also in a sim-time session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node

from cosim_validation.live.ros.qos import DIAGNOSTICS, RESULT, to_rclpy
from cosim_validation_interfaces.msg import CaseReport

HEARTBEAT_STATUS = "cosim/monitor"  # the monitor's own status in its /diagnostics, once a second
HEARTBEAT_PERIOD_S = 1.0  # wall time


class Heartbeat:
    """The monitor's heartbeat: a thread that publishes its status on ``/diagnostics``.

    It publishes the :data:`HEARTBEAT_STATUS` status every :data:`HEARTBEAT_PERIOD_S`, whatever the node's
    executor is doing (rmw publishing is thread-safe).

    Args:
        publisher: The node's ``/diagnostics`` publisher.
        handled: How many messages the monitor has handled so far (shown in the status).
    """

    def __init__(self, publisher: Any, handled: Callable[[], int]) -> None:
        self._publisher, self._handled = publisher, handled
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(HEARTBEAT_PERIOD_S):
            status = DiagnosticStatus(
                level=DiagnosticStatus.OK,
                name=HEARTBEAT_STATUS,
                hardware_id="monitor",
                message="alive",
                values=[KeyValue(key="messages_handled", value=str(self._handled()))],
            )
            try:
                self._publisher.publish(DiagnosticArray(status=[status]))
            except Exception:  # noqa: BLE001 - the node is being destroyed: the heartbeat ends with it
                return

    def stop(self) -> None:
        """End the thread (before the node's publisher is destroyed)."""
        self._stop.set()
        self._thread.join(timeout=2 * HEARTBEAT_PERIOD_S)


@dataclass(frozen=True)
class ReportWait:
    """How a wait for a case report ended.

    Attributes:
        report: The CaseReport, or None if it did not come.
        waited_s: Wall time spent waiting [s].
        reason: Why there is no report ("" when there is one).
    """

    report: Any | None
    waited_s: float
    reason: str = ""


class ReportWaiter:
    """Keeps every ``/cosim/case_reports`` message until it is asked for (one per case).

    It also keeps the monitor's last sign of life.
    """

    def __init__(self, node: Node, group: CallbackGroup) -> None:
        self._reports: dict[str, Any] = {}
        self._cond = threading.Condition()
        self._heard_at = time.monotonic()  # a wait never ends sooner than quiet_s after it starts
        node.create_subscription(
            CaseReport, "/cosim/case_reports", self._on_report, to_rclpy(RESULT), callback_group=group
        )
        node.create_subscription(
            DiagnosticArray, "/diagnostics", self._on_diagnostics, to_rclpy(DIAGNOSTICS), callback_group=group
        )

    def _on_report(self, msg: CaseReport) -> None:
        with self._cond:
            self._reports[msg.test_id] = msg
            self._heard_at = time.monotonic()
            self._cond.notify_all()

    def _on_diagnostics(self, msg: DiagnosticArray) -> None:
        if any(status.name == HEARTBEAT_STATUS for status in msg.status):
            with self._cond:
                self._heard_at = time.monotonic()

    def wait(self, test_id: str, quiet_s: float, limit_s: float) -> ReportWait:
        """The CaseReport of ``test_id``, waited for while the monitor is alive.

        Args:
            test_id: The case.
            quiet_s: Give up once the monitor has not been heard from for this long [s, wall time].
            limit_s: Give up after this long in all, however alive the monitor is [s, wall time].
        """
        start = time.monotonic()
        with self._cond:
            self._heard_at = max(self._heard_at, start)  # silence before the case ended is not held against it
            while test_id not in self._reports:
                now = time.monotonic()
                if now - self._heard_at >= quiet_s:
                    reason = f"the monitor sent no heartbeat for {quiet_s:g} s (stopped or hung)"
                    return ReportWait(None, now - start, reason)
                if now - start >= limit_s:
                    return ReportWait(None, now - start, f"no report within the limit of {limit_s:g} s")
                self._cond.wait(min(self._heard_at + quiet_s, start + limit_s) - now)
            return ReportWait(self._reports.pop(test_id), time.monotonic() - start)
