"""The monitor's case reports, waited for by the controller to put verdicts and KPIs into an action result.

A monitor that falls behind (a loaded machine, a long backlog of samples) reports a case late, never not at all:
the controller waits for a case's report as long as the monitor's process is alive. Its sign of life is its
heartbeat (:class:`Heartbeat`), the ``cosim/monitor`` status on ``/diagnostics`` sent once a second of wall time by
a thread of its own, so that a long computation in the monitor's callbacks (a case's conclusion, a first numba
compile: seconds under load) does not silence it, and any report it sends. The heartbeat also says what the
monitor is doing (:class:`MonitorState`): how long ago its callbacks last ran, the cases it has open and the
cases it concluded last. The wait ends without the report when the monitor has been silent for ``quiet_s`` (its
process ended, or its middleware stopped), when its heartbeat says its callbacks have not run for ``stuck_s``
(stuck in one: it writes its threads' stacks to its log), when for ``quiet_s`` its heartbeats say it neither has
the case open nor concluded it (it never saw the case start), or after ``limit_s`` in all, however alive it is, so
that a session never waits forever. Every time here is wall time (``time.monotonic``), also in a sim-time session.
"""

from __future__ import annotations

import math
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


@dataclass(frozen=True)
class MonitorState:
    """What the monitor's heartbeat says about it.

    Attributes:
        handled: Messages the monitor has handled so far.
        idle_s: Time since its callbacks last ran [s, wall]: its 50 ms timer runs one unless a callback is stuck.
        open_cases: Test ids of the cases it monitors (announced, not concluded yet).
        concluded: Test ids of the cases it concluded last (at most :data:`CONCLUDED_KEPT`), oldest first.
    """

    handled: int
    idle_s: float
    open_cases: tuple[str, ...] = ()
    concluded: tuple[str, ...] = ()

    def knows(self, test_id: str) -> bool:
        """Whether the monitor has the case open or concluded it.

        Args:
            test_id: The case.
        """
        return test_id in self.open_cases or test_id in self.concluded

    def to_values(self) -> list[KeyValue]:
        """The heartbeat status's key-value pairs."""
        return [
            KeyValue(key="messages_handled", value=str(self.handled)),
            KeyValue(key="callbacks_idle_s", value=f"{self.idle_s:.3f}"),
            KeyValue(key="open_cases", value=_join(self.open_cases)),
            KeyValue(key="concluded_cases", value=_join(self.concluded)),
        ]

    @classmethod
    def from_values(cls, values: Any) -> MonitorState | None:
        """The state in a heartbeat status's values; None when they are not a monitor's state.

        Args:
            values: The status's ``KeyValue`` list.
        """
        pairs = {kv.key: kv.value for kv in values}
        try:
            return cls(
                handled=int(pairs["messages_handled"]),
                idle_s=float(pairs["callbacks_idle_s"]),
                open_cases=_split(pairs.get("open_cases", "")),
                concluded=_split(pairs.get("concluded_cases", "")),
            )
        except (KeyError, ValueError):
            return None

    def describe(self) -> str:
        """One line for a message: what the monitor last said of itself."""
        return (
            f"{self.handled} messages handled, callbacks idle {self.idle_s:.1f} s, open cases "
            f"[{', '.join(self.open_cases)}], last concluded [{', '.join(self.concluded[-3:])}]"
        )


#: Cases a heartbeat names as concluded (the last ones): the controller waits for one case's report at a time
CONCLUDED_KEPT = 8


def _join(ids: tuple[str, ...]) -> str:
    return "\n".join(ids)


def _split(text: str) -> tuple[str, ...]:
    return tuple(t for t in text.split("\n") if t)


class Heartbeat:
    """The monitor's heartbeat: a thread that publishes its status on ``/diagnostics``.

    It publishes the :data:`HEARTBEAT_STATUS` status every :data:`HEARTBEAT_PERIOD_S`, whatever the node's
    executor is doing (rmw publishing is thread-safe).

    Args:
        publisher: The node's ``/diagnostics`` publisher.
        state: The monitor's state now (called from the heartbeat's thread).
    """

    def __init__(self, publisher: Any, state: Callable[[], MonitorState]) -> None:
        self._publisher, self._state = publisher, state
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
                values=self._state().to_values(),
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
        self._state: MonitorState | None = None  # what the last heartbeat said
        self._state_at = -math.inf  # when it came
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
        for status in msg.status:
            if status.name == HEARTBEAT_STATUS:
                state = MonitorState.from_values(status.values)
                with self._cond:
                    self._heard_at = time.monotonic()
                    if state is not None:
                        self._state, self._state_at = state, self._heard_at
                    self._cond.notify_all()

    def wait(self, test_id: str, quiet_s: float, limit_s: float, stuck_s: float = math.inf) -> ReportWait:
        """The CaseReport of ``test_id``, waited for while the monitor is alive.

        Args:
            test_id: The case.
            quiet_s: Give up once the monitor has not been heard from for this long, or has said for this long that
                it does not know the case [s, wall time].
            limit_s: Give up after this long in all, however alive the monitor is [s, wall time].
            stuck_s: Give up once the monitor's heartbeat says its callbacks have not run for this long [s, wall
                time].
        """
        start = time.monotonic()
        unknown_since: float | None = None  # the first heartbeat of this wait that did not know the case
        with self._cond:
            self._heard_at = max(self._heard_at, start)  # silence before the case ended is not held against it
            while test_id not in self._reports:
                now = time.monotonic()
                state = self._state if self._state_at >= start else None  # heartbeats of this wait only
                if state is not None and not state.knows(test_id):
                    unknown_since = unknown_since if unknown_since is not None else self._state_at
                elif state is not None:
                    unknown_since = None
                reason = None
                if now - self._heard_at >= quiet_s:
                    reason = f"the monitor sent no heartbeat for {quiet_s:g} s (stopped or hung)"
                elif state is not None and state.idle_s >= stuck_s:
                    reason = (
                        f"the monitor's callbacks have not run for {state.idle_s:.0f} s (stuck in one; its threads' "
                        "stacks are in its log)"
                    )
                elif state is not None and unknown_since is not None and now - unknown_since >= quiet_s:
                    reason = f"the monitor has not seen this case (for {quiet_s:g} s: {state.describe()})"
                elif now - start >= limit_s:
                    said = f" (the monitor: {self._state.describe()})" if self._state is not None else ""
                    reason = f"no report within the limit of {limit_s:g} s{said}"
                if reason is not None:
                    return ReportWait(None, now - start, reason)
                self._cond.wait(min(self._heard_at + quiet_s, start + limit_s) - now)  # each heartbeat wakes it too
            return ReportWait(self._reports.pop(test_id), time.monotonic() - start)
