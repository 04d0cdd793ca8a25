"""The dashboard's model of a session: cases in start order, the current case, alerts, states, anatomy.

It is fed events (``dashboard.events``) by a bag reader or by live subscriptions and holds no Qt or ROS
object, so the Qt view, the Foxglove bridge and the tests read the same state. ``revision`` grows with
every applied event: a view redraws only when it changed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

import numpy as np

from cosim_validation.dashboard.case_view import CaseView
from cosim_validation.dashboard.events import (
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
from cosim_validation.record import RobotRole

MAX_ALERTS = 500  # the alert log keeps the newest this many


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
        self.revision = 0

    def apply_all(self, events: Iterable[DashboardEvent]) -> None:
        """Apply events in order."""
        for event in events:
            self.apply(event)

    def apply(self, event: DashboardEvent) -> None:
        """Apply one event."""
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
            case = self._case(event.test_id)
            case.outcome, case.message = event.outcome, event.message
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
        if existing is None or existing.info.sample_count == 0:  # new, or a placeholder made by a late joiner
            view = CaseView(event)
            if existing is not None:
                view.tracks, view.verdicts = existing.tracks, existing.verdicts
            self.cases[event.test_id] = view
        self.current = event.test_id
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
        self.last_t_ns = max(self.last_t_ns, sample.t_ns)
        case = self._case(sample.test_id, sample.t_ns) if sample.test_id else self._case_at(sample.t_ns)
        if case is None:
            return  # an actual tip before any case: nothing to compare it with
        case.track(sample.robot).append(sample.t_ns, sample.position_m, sample.stage)

    def _case_at(self, t_ns: int) -> CaseView | None:
        """The case running at ``t_ns``: the last one started at or before it."""
        current = self.cases.get(self.current)
        if current is not None and current.info.t_ns <= t_ns:
            return current  # the common case: a sample of the running case
        found = None
        for case in self.cases.values():
            if case.info.t_ns <= t_ns:
                found = case
        return found

    def _report(self, event: CaseReported) -> None:
        case = self._case(event.test_id)
        for verdict in event.verdicts:
            case.verdicts[(verdict.property, verdict.robot)] = verdict
        case.reported, case.samples = True, dict(event.samples)
        if case.outcome == "running":
            case.outcome = event.outcome
        case.message = case.message or event.message


def robots_of(case: CaseView) -> tuple[RobotRole, ...]:
    """The executing robots of a case that have a tip track, in role order."""
    return tuple(r for r in (RobotRole.VIRTUAL, RobotRole.PHYSICAL) if r in case.tracks)
