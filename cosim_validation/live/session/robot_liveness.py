"""Which robots of a running case have stopped answering (judged in wall time, also in a sim-time session).

A robot is late when it owes the joint state of the newest expected sample; it is stale once it has owed it
for longer than the timeout *and* nothing at all came from it for that long. A robot that is merely idle (no
sample owed) is never stale, so a controller that pauses does not make its robots look dead; and a monitor that
falls behind (a loaded machine: it is still working through older joint states of the robot) does not take
its own lag for a dead robot.
"""

from __future__ import annotations

from collections.abc import Iterable

from cosim_validation.common.record import RobotRole


class RobotLiveness:
    """Tracks the robots of one case.

    Args:
        timeout_s: How long a robot may owe a sample before it is stale [s].
    """

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = float(timeout_s)
        self._robots: tuple[RobotRole, ...] = ()
        self._owing_since: dict[RobotRole, float] = {}
        self._last_seen: dict[RobotRole, float] = {}
        self._latest_expected_ns = -1
        self.stale: set[RobotRole] = set()
        self._deferred = False  # the previous check came late and judged nothing
        self.deferred_gap_s: float | None = None  # that check's time after the one before it [s]; None: not deferred

    def start_case(self, robots: Iterable[RobotRole], now_s: float) -> None:
        """A new case with these robots; nothing is owed yet. A stale robot stays stale until it answers.

        Args:
            robots: The robots the case drives.
            now_s: The checking process's monotonic clock, in [s] (a robot never seen counts as seen now).
        """
        self._robots = tuple(robots)
        self._owing_since.clear()
        self._deferred = False  # a late check at the end of the last case defers nothing of this one
        self.deferred_gap_s = None
        self._latest_expected_ns = -1
        for role in self._robots:
            self._last_seen.setdefault(role, now_s)

    def expected(self, stamp_ns: int, now_s: float) -> None:
        """The controller sent the sample stamped ``stamp_ns``: every robot owes its joint state.

        Args:
            stamp_ns: The expected sample's stamp, in [ns]; one not newer than the newest so far changes nothing.
            now_s: The checking process's monotonic clock, in [s].
        """
        if stamp_ns > self._latest_expected_ns:
            self._latest_expected_ns = stamp_ns
            for role in self._robots:
                self._owing_since.setdefault(role, now_s)

    def joints(self, role: RobotRole, stamp_ns: int, now_s: float) -> bool:
        """A robot answered the sample stamped ``stamp_ns``; True if it was stale (it is alive again).

        Args:
            role: The robot.
            stamp_ns: The stamp of the sample it answered, in [ns]; it owes nothing more once that is the newest
                expected one.
            now_s: The checking process's monotonic clock, in [s].
        """
        self._last_seen[role] = now_s
        if stamp_ns >= self._latest_expected_ns:
            self._owing_since.pop(role, None)
        if role in self.stale:
            self.stale.discard(role)
            return True
        return False

    def newly_stale(self, now_s: float, since_check_s: float = 0.0) -> list[tuple[RobotRole, float]]:
        """Robots that became stale since the last call, with how long they have owed a sample [s].

        A check that comes more than half the timeout after the previous one means the checking process itself
        did not run (a loaded machine): the answers that arrived meanwhile still wait in its queues, behind the
        check. Such a check finds nothing and the next one judges, once they are taken; never two in a row, so a
        process starved at every check still reports. After a judging check, :attr:`deferred_gap_s` says whether the
        check before it was deferred (how late it came) or not (None).

        Args:
            now_s: The checking process's monotonic clock, in [s].
            since_check_s: Time since the previous check, in [s] (0: not known).
        """
        late = since_check_s > self.timeout_s / 2
        was_deferred, self._deferred = self._deferred, late and not self._deferred
        if self._deferred:
            self.deferred_gap_s = since_check_s
            return []
        if not was_deferred:
            self.deferred_gap_s = None
        found = []
        for role, since in self._owing_since.items():
            silent = now_s - self._last_seen.get(role, since) > self.timeout_s
            if now_s - since > self.timeout_s and silent and role not in self.stale:
                self.stale.add(role)
                found.append((role, now_s - since))
        return found

    def silent_for_s(self, role: RobotRole, now_s: float) -> float:
        """Seconds since ``role`` last answered (0 if never seen).

        Args:
            role: The robot.
            now_s: The checking process's monotonic clock, in [s].
        """
        return now_s - self._last_seen.get(role, now_s)
