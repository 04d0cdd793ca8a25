"""The monitor's case reports, waited for by the controller to put verdicts and KPIs into an action result."""

from __future__ import annotations

import threading
import time
from typing import Any

from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node

from cosim_validation.live.ros.qos import RESULT, to_rclpy
from cosim_validation_interfaces.msg import CaseReport


class ReportWaiter:
    """Keeps every ``/cosim/case_reports`` message until it is asked for (one per case)."""

    def __init__(self, node: Node, group: CallbackGroup) -> None:
        self._reports: dict[str, Any] = {}
        self._cond = threading.Condition()
        node.create_subscription(
            CaseReport, "/cosim/case_reports", self._on_report, to_rclpy(RESULT), callback_group=group
        )

    def _on_report(self, msg: CaseReport) -> None:
        with self._cond:
            self._reports[msg.test_id] = msg
            self._cond.notify_all()

    def wait(self, test_id: str, timeout_s: float) -> Any | None:
        """The CaseReport of ``test_id``, or None after ``timeout_s`` [s] (wall time)."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while test_id not in self._reports and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            return self._reports.pop(test_id, None)
