"""The dashboard's model of a session: cases in start order, the current case, alerts, states, anatomy.

It is fed events (``dashboard.events``) by a bag reader or by live subscriptions and holds no Qt or ROS
object, so the Qt view, the Foxglove bridge and the tests read the same state. ``revision`` grows with
every applied event: a view redraws only when it changed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import numpy as np

from cosim_validation.common.record import RobotRole
from cosim_validation.live.dashboard.case_view import CaseView
from cosim_validation.live.dashboard.events import (
    AlertRaised,
    AnatomyMesh,
    AnatomyShown,
    CaseEnded,
    CaseReported,
    CaseStarted,
    DashboardEvent,
    StageChanged,
    StateReported,
    TipSample,
    VerdictRow,
)

CASE_END_ALERTS = {"aborted": (2, "case_aborted"), "refused": (1, "case_refused")}  # (level, code)
MAX_ALERTS = 500  # the alert log keeps the newest this many
MAX_PENDING = 4096  # robot samples whose expected sample has not arrived (a stamp without a plan cannot grow memory)


class DashboardModel:
    """State of a session as the dashboard shows it."""

    def __init__(self, max_alerts: int = MAX_ALERTS) -> None:
        self.cases: dict[str, CaseView] = {}  # in start order
        self.current: str = ""  # test id of the case started last
        self.alerts: deque[AlertRaised] = deque(maxlen=max_alerts)
        self.alert_count = 0  # every alert ever applied (the log may have dropped old ones)
        self.states: dict[tuple[str, str], StateReported] = {}
        self.anatomy: tuple[AnatomyMesh, ...] = ()
        self.last_t_ns = 0  # newest stamp seen
        self._pending: dict[int, list[TipSample]] = {}  # robot samples waiting for their expected sample
        self._planned: dict[int, str] = {}  # stamp of every expected sample -> its case
        self.revision = 0

    def apply_all(self, events: Iterable[DashboardEvent]) -> None:
        """Apply events in order.

        Args:
            events: Events in arrival order, applied one by one with :meth:`apply`.
        """
        for event in events:
            self.apply(event)

    def apply(self, event: DashboardEvent) -> None:
        """Apply one event.

        Args:
            event: One of the ``DashboardEvent`` types; every applied event increments ``revision``.
        """
        self.revision += 1
        if isinstance(event, TipSample):
            self._tip(event)
        elif isinstance(event, VerdictRow):
            self._case(event.test_id).verdicts[(event.property, event.robot)] = event
        elif isinstance(event, CaseStarted):
            self._start(event)
        elif isinstance(event, StageChanged):
            self._case(event.test_id).stage = event.stage
        elif isinstance(event, CaseEnded):
            self._end(event)
        elif isinstance(event, CaseReported):
            self._report(event)
        elif isinstance(event, AlertRaised):
            self.alerts.append(event)
            self.alert_count += 1
            self.last_t_ns = max(self.last_t_ns, event.t_ns)
        elif isinstance(event, StateReported):
            self.states[(event.topic, event.name)] = event
        elif isinstance(event, AnatomyShown):
            self.anatomy = event.meshes

    # ------------------------------------------------------------------ queries
    @property
    def current_case(self) -> CaseView | None:
        """The case started last (None before the first)."""
        return self.cases.get(self.current)

    def finished(self) -> int:
        """Number of cases the controller ended."""
        return sum(1 for c in self.cases.values() if c.outcome != "running")

    def obstacles(self) -> tuple[AnatomyMesh, ...]:
        """Anatomy models that are forbidden regions."""
        return tuple(m for m in self.anatomy if m.role == "obstacle")

    # ------------------------------------------------------------------ updates
    def _start(self, event: CaseStarted) -> None:
        existing = self.cases.get(event.test_id)
        if existing is None:
            self.cases[event.test_id] = CaseView(event)
        elif existing.info.sample_count == 0:
            # a placeholder: live topics are not ordered among each other, so samples, verdicts or even the
            # report may arrive before the case's start; keep them and take the start's information
            existing.info = event
        running = self.cases.get(self.current)
        if running is None or running.info.sample_count == 0 or running.info.t_ns <= event.t_ns:
            self.current = event.test_id  # the case started last (a late STARTED of an older case does not win)
        self.last_t_ns = max(self.last_t_ns, event.t_ns)

    def _case(self, test_id: str, t_ns: int = 0) -> CaseView:
        """The case ``test_id``; a placeholder if its start was never seen (a dashboard joining late)."""
        case = self.cases.get(test_id)
        if case is None:
            info = CaseStarted(t_ns, test_id, np.full(3, np.nan), np.full(3, np.nan), 0, 0.0, ())
            case = self.cases[test_id] = CaseView(info)
            self.current = self.current or test_id
        return case

    def _tip(self, sample: TipSample) -> None:
        """An expected sample names its case; a robot's sample belongs to the case whose plan has its stamp.

        Live topics are not ordered among each other, so a robot's sample may come before the expected
        sample it answers: it waits (at most MAX_PENDING of them) until that expected sample arrives.
        """
        self.last_t_ns = max(self.last_t_ns, sample.t_ns)
        if sample.test_id:
            case = self._case(sample.test_id, sample.t_ns)
            case.track(sample.robot).append(sample.t_ns, sample.position_m, sample.stage)
            self._planned[sample.t_ns] = sample.test_id
            for waiting in self._pending.pop(sample.t_ns, ()):
                case.track(waiting.robot).append(waiting.t_ns, waiting.position_m)
            return
        owner = self.cases.get(self._planned.get(sample.t_ns, ""))
        if owner is not None:
            owner.track(sample.robot).append(sample.t_ns, sample.position_m)
            return
        self._pending.setdefault(sample.t_ns, []).append(sample)
        if len(self._pending) > MAX_PENDING:
            del self._pending[next(iter(self._pending))]  # the oldest stamp

    def _end(self, event: CaseEnded) -> None:
        """The case's outcome; a refused or aborted case (a validator stop, a stale robot) is also an alert."""
        case = self._case(event.test_id)
        case.outcome, case.message = event.outcome, event.message
        if event.outcome in CASE_END_ALERTS:
            level, code = CASE_END_ALERTS[event.outcome]
            message = f"{event.test_id}: {event.message}" if event.message else event.test_id
            self.apply(AlertRaised(event.t_ns, "/cosim/case_status", level, "controller", code, message))

    def _report(self, event: CaseReported) -> None:
        case = self._case(event.test_id)
        for verdict in event.verdicts:
            case.verdicts[(verdict.property, verdict.robot)] = verdict
        case.reported, case.samples = True, dict(event.samples)
        if case.outcome == "running":
            case.outcome = event.outcome
        case.message = case.message or event.message


def robots_of(case: CaseView) -> tuple[RobotRole, ...]:
    """The executing robots of a case that have a tip track, in role order.

    Args:
        case: The case whose tracks are looked at.
    """
    return tuple(r for r in (RobotRole.VIRTUAL, RobotRole.PHYSICAL) if r in case.tracks)
