"""Monitoring a whole session from its events, case after case (live monitor node and ``cosim replay``).

Case boundaries come from the controller's case status (STARTED, then COMPLETED, ABORTED or REFUSED).
Topics arrive in any order relative to each other, so a case is concluded only when every monitored
stream has delivered the case's planned number of samples, or when the next case starts, or when the
caller says the wait is over (:meth:`conclude_pending`: a live timeout, or the end of a bag). Given the
same messages, the live node and the replay therefore conclude the same samples and give the same verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from cosim_validation.assembly.monitor_world import MonitorWorld
from cosim_validation.properties import Verdict
from cosim_validation.record import RobotRole, Stage, SupervisorMode
from cosim_validation.robot import Kinematics
from cosim_validation.session.case_monitor import CaseConclusion, CaseMonitor


@dataclass(frozen=True)
class CaseInfo:
    """What the controller announced about a case (CaseStatus STARTED)."""

    test_id: str
    target_m: np.ndarray | None  # None when unknown (a recording without case status)
    robots: tuple[RobotRole, ...]
    needle_length_m: float
    sample_count: int


@dataclass(frozen=True)
class CaseEnd:
    """A concluded case: how it ended (completed | aborted | refused | unfinished) and what was found."""

    info: CaseInfo
    outcome: str
    message: str
    conclusion: CaseConclusion


class CaseTracker:
    """Feeds a session's events into one :class:`CaseMonitor` per case.

    Args:
        world: The monitor's world (properties, arm, obstacles, self-collision); each case's needle length
            replaces the configured one.
        tips: Robots that publish an actual tip pose (others: NaN).
        on_case_end: Called with every concluded case.
        keep_records: Rebuild each case's TrajectoryRecords.
        with_expected: False for recordings without an expected stream (each joint state is a sample).
        markers: Robots that publish a tracked marker (live: every driver; a bag: those with a marker topic).
    """

    def __init__(
        self,
        world: MonitorWorld,
        tips: set[RobotRole],
        on_case_end: Callable[[CaseEnd], None],
        *,
        keep_records: bool = False,
        with_expected: bool = True,
        markers: frozenset[RobotRole] = frozenset(),
    ) -> None:
        self._world = world
        self._markers = markers
        self._kin = world.kinematics
        self._tips = tips
        self._on_case_end = on_case_end
        self._keep_records = keep_records
        self._with_expected = with_expected
        self.case: CaseInfo | None = None
        self._awaited: int | None = None  # samples streamed, once the controller said (else the planned count)
        self._per_robot: dict[RobotRole, int] = {}
        self._monitor: CaseMonitor | None = None
        self._ending: tuple[str, str] | None = None

    @property
    def kinematics(self) -> Kinematics:
        """The nominal arm (needle length of the configuration)."""
        return self._kin

    @property
    def active(self) -> bool:
        """Whether a case is being monitored."""
        return self.case is not None

    def start(self, info: CaseInfo, caps: Mapping[RobotRole, int] | None = None) -> None:
        """A new case (concludes the previous one if it is still open).

        Args:
            info: What the controller announced.
            caps: At most this many samples per robot (a replay: what the live monitor concluded the case with).
        """
        self.conclude_pending()
        self.case = info
        self._awaited, self._per_robot = None, {}
        self._monitor = CaseMonitor(
            self._world,
            {r: r in self._tips for r in info.robots},
            target_m=info.target_m,
            needle_length_m=info.needle_length_m,
            test_id=info.test_id,
            keep_records=self._keep_records,
            with_expected=self._with_expected,
            markers=self._markers & frozenset(info.robots),
        )
        if caps:
            self._monitor.cap(caps)

    def end(
        self,
        outcome: str,
        message: str,
        samples_sent: int | None = None,
        per_robot: Mapping[RobotRole, int] | None = None,
    ) -> None:
        """The controller ended the case; it is concluded once every stream has caught up.

        Args:
            outcome: ``completed``, ``aborted`` or ``refused``.
            message: Why.
            samples_sent: Samples the controller streamed (an aborted case: fewer than planned); None: the
                planned count.
            per_robot: Samples to conclude with, per stream (a replay: what the live monitor concluded with, so a
                case it concluded at a timeout is concluded at the same samples); overrides ``samples_sent``.
        """
        if self.case is None:
            return
        if outcome == "refused":
            self._conclude(outcome, message)
            return
        self._ending = (outcome, message)
        if samples_sent is not None:
            self._awaited = samples_sent
        self._per_robot = dict(per_robot or {})
        self._maybe_conclude()

    def expected(
        self, stamp_ns: int, stage: Stage, q: np.ndarray, mode: SupervisorMode = SupervisorMode.UNSUPERVISED
    ) -> list[Verdict]:
        """An expected state (``mode``: the supervisor's when it was sent); returns verdict changes."""
        if self._monitor is None:
            return []
        return self._after(self._monitor.add_expected(stamp_ns, stage, q, mode))

    def joints(self, role: RobotRole, stamp_ns: int, q: np.ndarray) -> list[Verdict]:
        """A robot's measured joints; returns verdict changes."""
        if self._monitor is None or self.case is None or role not in self.case.robots:
            return []
        return self._after(self._monitor.add_joints(role, stamp_ns, q))

    def tip(self, role: RobotRole, stamp_ns: int, position_m: np.ndarray, quat_wxyz: np.ndarray) -> list[Verdict]:
        """A robot's actual tip pose; returns verdict changes."""
        if self._monitor is None or self.case is None or role not in self.case.robots or role not in self._tips:
            return []
        return self._after(self._monitor.add_tip(role, stamp_ns, position_m, quat_wxyz))

    def marker(
        self, role: RobotRole, stamp_ns: int, position_m: np.ndarray, quat_wxyz: np.ndarray, registration_error_m: float
    ) -> list[Verdict]:
        """A robot's tracked marker; returns verdict changes."""
        if self._monitor is None or self.case is None or role not in self.case.robots or role not in self._markers:
            return []
        return self._after(self._monitor.add_marker(role, stamp_ns, position_m, quat_wxyz, registration_error_m))

    def conclude_pending(self) -> None:
        """Conclude the open case with what arrived (end of a bag, a live timeout, the next case)."""
        if self.case is not None:
            unfinished = ("unfinished", "the recording ended before the case did")
            recorded = ("recorded", "a recording without case status: one case over all of it")
            outcome, message = self._ending or (unfinished if self._with_expected else recorded)
            self._conclude(outcome, message)

    def _after(self, changes: list[Verdict]) -> list[Verdict]:
        self._maybe_conclude()
        return changes

    def _maybe_conclude(self) -> None:
        if self._ending is None or self.case is None or self._monitor is None:
            return
        awaited = self.case.sample_count if self._awaited is None else self._awaited
        counts = self._monitor.samples
        if all(n >= self._per_robot.get(role, awaited) for role, n in counts.items()):
            self._conclude(*self._ending)

    def _conclude(self, outcome: str, message: str) -> None:
        assert self.case is not None
        assert self._monitor is not None
        end = CaseEnd(self.case, outcome, message, self._monitor.finish(outcome, message))
        self.case, self._monitor, self._ending = None, None, None
        self._on_case_end(end)
