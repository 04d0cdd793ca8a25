"""Monitoring a whole session from its events, case after case (live monitor node and ``cosim replay``).

Case boundaries come from the controller's case status (STARTED, then COMPLETED, ABORTED or REFUSED).
Topics arrive in any order relative to each other (a monitor or a recorder can receive a case's first samples
before its STARTED status, or the next case's STARTED before this case's last tip pose), so every message
goes to the case its stamp (or, for an expected state, its test id) belongs to: a message of a case not
announced yet is kept for it, a case that ended keeps receiving its late samples while the next one runs
(where a case ends is known only once the controller ended it: a closed-loop controller streams as long as it
decides, so a robot message ahead of the expected state of its stamp is the running case's), and a case is
concluded only when every monitored stream has delivered the samples the controller streamed, or when the caller
says the wait is over (:meth:`conclude_ending`: a live timeout; :meth:`conclude_pending`: the end of a bag).
Given the same messages in any interleaving of the topics, the live node and the replay therefore conclude the
same samples and give the same verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from cosim_validation.assembly.monitor_world import MonitorWorld
from cosim_validation.common.record import RobotRole, Stage, SupervisorMode
from cosim_validation.live.session.case_monitor import CaseConclusion, CaseMonitor
from cosim_validation.live.session.stream_assembler import StreamCaps, Unmatched
from cosim_validation.monitor.properties import Verdict
from cosim_validation.robots.model import Kinematics


@dataclass(frozen=True)
class CaseInfo:
    """What the controller announced about a case (CaseStatus STARTED)."""

    test_id: str
    target_m: np.ndarray | None  # None when unknown (a recording without case status)
    robots: tuple[RobotRole, ...]
    needle_length_m: float
    sample_count: int
    start_ns: int | None = None  # the stamp of the case's first sample (None: unknown, take every message)


@dataclass(frozen=True)
class CaseEnd:
    """A concluded case: how it ended (completed | aborted | refused | unfinished) and what was found."""

    info: CaseInfo
    outcome: str
    message: str
    conclusion: CaseConclusion
    timed_out: bool = False  # concluded with what had arrived, not with every sample it was owed


#: Messages kept for a case not announced yet (about 10 s of a session's streams at 100 Hz).
EARLY_LIMIT = 10_000

Feed = Callable[["_OpenCase"], list[Verdict]]


@dataclass
class _OpenCase:
    """A case being monitored: announced, perhaps ended by the controller, not concluded yet."""

    info: CaseInfo
    monitor: CaseMonitor
    ending: tuple[str, str] | None = None  # (outcome, message) once the controller ended it
    awaited: int | None = None  # samples streamed, once the controller said (else the planned count)
    per_robot: dict[RobotRole, int] = field(default_factory=dict)
    expected_count: int = 0
    last_expected_ns: int = -1
    at_report: bool = False  # a replay: concluded where the bag holds the live report (the live one timed out)

    @property
    def start_ns(self) -> int:
        return self.info.start_ns or 0

    def streamed(self) -> int:
        """Samples the case has: what the controller said it streamed, else the planned count."""
        return self.info.sample_count if self.awaited is None else self.awaited

    def caught_up(self) -> bool:
        """Ended, and every stream delivered the samples it owes."""
        counts = self.monitor.samples
        awaited = self.streamed()
        if self.ending is None or self.at_report:
            return False
        return all(n >= self.per_robot.get(r, awaited) for r, n in counts.items())

    def after_its_end(self, stamp_ns: int) -> bool:
        """Whether a robot message stamped ``stamp_ns`` comes after this case's last sample.

        Only the controller's end says where that is: the count a STARTED status announces is the plan's, and a
        closed-loop controller streams as long as it decides (without a reference it announces 1, its start pose).
        Before the end, a robot message ahead of the expected state of its stamp is this case's; one of the next
        case is handed over when that case starts (:meth:`CaseMonitor.take_from`).
        """
        return self.ending is not None and self.expected_count >= self.streamed() and stamp_ns > self.last_expected_ns


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
        self._open: list[_OpenCase] = []  # oldest first; at most one ended case besides the newest
        self._early: list[tuple[int, str | None, Feed]] = []  # messages of a case not announced yet
        self._reported: set[str] = set()  # a replay: test ids whose live report has been read

    @property
    def kinematics(self) -> Kinematics:
        """The nominal arm (needle length of the configuration)."""
        return self._kin

    @property
    def case(self) -> CaseInfo | None:
        """The newest case being monitored."""
        return self._open[-1].info if self._open else None

    @property
    def open_ids(self) -> tuple[str, ...]:
        """The test ids of the cases being monitored, oldest first."""
        return tuple(c.info.test_id for c in self._open)

    @property
    def active(self) -> bool:
        """Whether a case is being monitored."""
        return bool(self._open)

    @property
    def ending(self) -> bool:
        """Whether a case the controller ended still waits for samples."""
        return any(c.ending is not None for c in self._open)

    def start(self, info: CaseInfo, caps: StreamCaps | None = None) -> list[Verdict]:
        """A new case; returns the verdict changes of its messages that came before its announcement.

        The previous case, if the controller ended it, keeps receiving its late samples until it has them all
        (or :meth:`conclude_ending`); a case still running, or an older one still waiting, is concluded now.

        Args:
            info: What the controller announced.
            caps: At most this many samples, tip poses and markers per robot (a replay: what the live monitor
                concluded the case with).
        """
        for old in list(self._open):
            if old is not self._open[-1] or old.ending is None:
                self._conclude(old, *(old.ending or _UNFINISHED))
        monitor = CaseMonitor(
            self._world,
            {r: r in self._tips for r in info.robots},
            target_m=info.target_m,
            needle_length_m=info.needle_length_m,
            test_id=info.test_id,
            keep_records=self._keep_records,
            with_expected=self._with_expected,
            markers=self._markers & frozenset(info.robots),
        )
        if caps is not None:
            monitor.cap(caps)
        for old in self._open:  # what the ended case holds from this case's start on is this case's
            self._keep_for_later(old.monitor.take_from(info.start_ns or 0))
        self._open.append(_OpenCase(info, monitor))
        early, self._early = self._early, []
        changes: list[Verdict] = []
        for stamp_ns, test_id, feed in sorted(early, key=lambda kept: kept[0]):  # a stream's order is its stamps
            if stamp_ns >= (info.start_ns or 0) and test_id in (None, info.test_id):
                changes += self._route(stamp_ns, test_id, feed)
        return changes

    def end(
        self,
        outcome: str,
        message: str,
        samples_sent: int | None = None,
        per_robot: Mapping[RobotRole, int] | None = None,
        at_report: bool = False,
    ) -> None:
        """The controller ended the newest case; it is concluded once every stream has caught up.

        A topic keeps its order: a case's end comes before the next case's start.

        Args:
            outcome: ``completed``, ``aborted`` or ``refused``.
            message: Why.
            samples_sent: Samples the controller streamed (an aborted case: fewer than planned); None: the
                planned count.
            per_robot: Samples to conclude with, per stream (a replay: what the live monitor concluded with, so a
                case it concluded at a timeout is concluded at the same samples); overrides ``samples_sent``.
            at_report: A replay of a case the live monitor concluded at its timeout, with what had arrived: it is
                concluded where the bag holds that conclusion (:meth:`reported`), not when its streams caught
                up (a frozen robot's late answers, recorded after the live conclusion, are not taken).
        """
        if not self._open:
            return
        case = self._open[-1]
        if outcome == "refused":
            self._conclude(case, outcome, message)
            return
        case.ending = (outcome, message)
        if samples_sent is not None:
            case.awaited = samples_sent
        case.per_robot = dict(per_robot or {})
        case.at_report = at_report and case.info.test_id not in self._reported  # else its report came first
        self._maybe_conclude(case)

    def expected(
        self,
        stamp_ns: int,
        stage: Stage,
        q: np.ndarray,
        test_id: str | None = None,
        mode: SupervisorMode = SupervisorMode.UNSUPERVISED,
    ) -> list[Verdict]:
        """Take an expected state and return the verdict changes.

        Args:
            stamp_ns: The state's stamp in [ns].
            stage: The plan's stage at that time.
            q: The planned joints, shape (J,), in [rad] (or [m] for a prismatic joint).
            test_id: The case the state is of; None: not said.
            mode: The supervisor's mode when the state was sent.
        """
        add = partial(_add_expected, stamp_ns=stamp_ns, stage=stage, q=q, mode=mode)
        return self._route(stamp_ns, test_id, add)

    def joints(self, role: RobotRole, stamp_ns: int, q: np.ndarray) -> list[Verdict]:
        """A robot's measured joints; returns verdict changes.

        Args:
            role: The robot.
            stamp_ns: The stamp of the setpoint they answer, in [ns].
            q: The measured joints, shape (J,), in [rad] (or [m] for a prismatic joint).
        """
        return self._route(stamp_ns, None, partial(self._add_joints, role, stamp_ns, q))

    def tip(self, role: RobotRole, stamp_ns: int, position_m: np.ndarray, quat_wxyz: np.ndarray) -> list[Verdict]:
        """A robot's actual tip pose; returns verdict changes.

        Args:
            role: The robot.
            stamp_ns: The stamp of the setpoint it answers, in [ns].
            position_m: The tip's position in base_link, shape (3,), in [m]; NaN where the robot cannot know it.
            quat_wxyz: The tip's orientation in base_link, a unit quaternion (w, x, y, z), shape (4,).
        """
        return self._route(stamp_ns, None, partial(self._add_tip, role, stamp_ns, position_m, quat_wxyz))

    def marker(
        self, role: RobotRole, stamp_ns: int, position_m: np.ndarray, quat_wxyz: np.ndarray, registration_error_m: float
    ) -> list[Verdict]:
        """A robot's tracked marker; returns verdict changes.

        Args:
            role: The robot.
            stamp_ns: The stamp of the setpoint it answers, in [ns].
            position_m: The marker's position in the tracker's frame, shape (3,), in [m]; NaN if not seen.
            quat_wxyz: The marker's orientation in the tracker's frame, a quaternion (w, x, y, z), shape (4,).
            registration_error_m: The tracker's registration error in [m]; NaN if not seen.
        """
        feed = partial(self._add_marker, role, stamp_ns, position_m, quat_wxyz, registration_error_m)
        return self._route(stamp_ns, None, feed)

    def conclude_ending(self) -> None:
        """Conclude the cases the controller ended with what arrived (a live timeout: a stream never caught up)."""
        for case in [c for c in self._open if c.ending is not None]:
            self._conclude(case, *case.ending, timed_out=True)  # type: ignore[misc]

    def reported(self, test_id: str) -> None:
        """The live monitor concluded case ``test_id`` here (a replay).

        A case held for it concludes now, with what had arrived.

        Args:
            test_id: The case whose live report the bag holds at this point.
        """
        self._reported.add(test_id)
        for case in [c for c in self._open if c.at_report and c.info.test_id == test_id]:
            self._conclude(case, *case.ending, timed_out=True)  # type: ignore[misc]

    def conclude_pending(self) -> None:
        """Conclude every open case with what arrived (the end of a bag)."""
        for case in list(self._open):
            if case.ending is None and not self._with_expected:
                self._conclude(case, "recorded", "a recording without case status: one case over all of it")
            else:
                self._conclude(case, *(case.ending or _UNFINISHED))

    # ------------------------------------------------------------------ which case a message is of
    def _route(self, stamp_ns: int, test_id: str | None, feed: Feed) -> list[Verdict]:
        """Feed a message to the open case it belongs to, keep it for a case not announced yet, or drop it.

        A message dropped is a late one of a case already concluded. Kept messages are bounded by
        :data:`EARLY_LIMIT`.
        """
        case = self._case_of(stamp_ns, test_id)
        if case is None:
            if self._open and stamp_ns < self._open[0].start_ns:
                return []  # from before every open case: a case already concluded
            self._keep(stamp_ns, test_id, feed)
            return []
        changes = feed(case)
        self._maybe_conclude(case)
        return changes

    def _case_of(self, stamp_ns: int, test_id: str | None) -> _OpenCase | None:
        if not self._with_expected:
            return self._open[-1] if self._open else None
        if test_id is not None:
            return next((c for c in self._open if c.info.test_id == test_id), None)
        started = [c for c in self._open if c.start_ns <= stamp_ns]
        if not started or started[-1].after_its_end(stamp_ns):
            return None
        return started[-1]

    def _add_joints(self, role: RobotRole, stamp_ns: int, q: np.ndarray, case: _OpenCase) -> list[Verdict]:
        if role not in case.info.robots:
            return []
        return case.monitor.add_joints(role, stamp_ns, q)

    def _add_tip(
        self, role: RobotRole, stamp_ns: int, position_m: np.ndarray, quat_wxyz: np.ndarray, case: _OpenCase
    ) -> list[Verdict]:
        if role not in case.info.robots or role not in self._tips:
            return []
        return case.monitor.add_tip(role, stamp_ns, position_m, quat_wxyz)

    def _add_marker(
        self,
        role: RobotRole,
        stamp_ns: int,
        position_m: np.ndarray,
        quat_wxyz: np.ndarray,
        registration_error_m: float,
        case: _OpenCase,
    ) -> list[Verdict]:
        if role not in case.info.robots or role not in self._markers:
            return []
        return case.monitor.add_marker(role, stamp_ns, position_m, quat_wxyz, registration_error_m)

    # ------------------------------------------------------------------ concluding
    def _maybe_conclude(self, case: _OpenCase) -> None:
        if case in self._open and case.caught_up():
            assert case.ending is not None
            self._conclude(case, *case.ending)

    def _conclude(self, case: _OpenCase, outcome: str, message: str, timed_out: bool = False) -> None:
        self._open.remove(case)
        end = CaseEnd(case.info, outcome, message, case.monitor.finish(outcome, message), timed_out)
        self._on_case_end(end)
        for left in case.monitor.unmatched:  # perhaps a later case's: routed again (dropped if from before it)
            self._route(left.stamp_ns, None, self._refeed(left))

    def _keep_for_later(self, messages: list[Unmatched]) -> None:
        for m in messages:
            self._keep(m.stamp_ns, None, self._refeed(m))

    def _keep(self, stamp_ns: int, test_id: str | None, feed: Feed) -> None:
        """Keep a message for a case not announced yet (the oldest go beyond :data:`EARLY_LIMIT`)."""
        self._early.append((stamp_ns, test_id, feed))
        del self._early[:-EARLY_LIMIT]

    def _refeed(self, message: Unmatched) -> Feed:
        adders: dict[str, Callable[..., list[Verdict]]] = {
            "joints": self._add_joints,
            "tip": self._add_tip,
            "marker": self._add_marker,
        }
        return partial(adders[message.stream], message.role, message.stamp_ns, *message.values)


_UNFINISHED = ("unfinished", "the recording ended before the case did")


def _add_expected(
    case: _OpenCase, *, stamp_ns: int, stage: Stage, q: np.ndarray, mode: SupervisorMode
) -> list[Verdict]:
    case.expected_count += 1
    case.last_expected_ns = max(case.last_expected_ns, stamp_ns)
    return case.monitor.add_expected(stamp_ns, stage, q, mode)
