"""The session's monitor, slowed down: ``python -m test.live.ros.slow_monitor --ros-args ...`` (its parameters).

The real :class:`~cosim_validation.live.nodes.monitor.Monitor`, except at the end of a case: with
``SLOW_MONITOR_REPORT_DELAY_S=D`` it publishes the case's report D seconds (wall time) later, still
handling messages and sending its heartbeat meanwhile (a monitor behind on a loaded machine); with
``SLOW_MONITOR_DIE=1`` its process ends at once instead (a monitor that died); with ``SLOW_MONITOR_STUCK=1`` the
callback that concluded the case never returns (a monitor stuck in a callback, its heartbeat's thread alive).
"""

from __future__ import annotations

import os
import sys
import threading

from rclpy.clock import Clock
from rclpy.clock_type import ClockType

from cosim_validation.live.nodes.monitor import Monitor
from cosim_validation.live.nodes.node_runtime import run_node
from cosim_validation.live.session.case_tracker import CaseEnd


class SlowMonitor(Monitor):
    """Reports each case late, or dies at its end."""

    def _on_case_end(self, end: CaseEnd) -> None:
        if os.environ.get("SLOW_MONITOR_DIE") == "1":
            os._exit(3)
        if os.environ.get("SLOW_MONITOR_STUCK") == "1":
            threading.Event().wait()
        delay_s = float(os.environ.get("SLOW_MONITOR_REPORT_DELAY_S", "0"))
        timers: list[object] = []

        def publish() -> None:
            self.destroy_timer(timers[0])  # type: ignore[arg-type]
            super(SlowMonitor, self)._on_case_end(end)

        timers.append(self.create_timer(delay_s, publish, clock=Clock(clock_type=ClockType.STEADY_TIME)))


if __name__ == "__main__":
    raise SystemExit(run_node(SlowMonitor, sys.argv, threads=1))
