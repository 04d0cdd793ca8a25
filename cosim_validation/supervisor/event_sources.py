"""Where the supervisor's exception events come from: small pure classes fed once per control period.

Each condition source reports a *level* (the condition holds now) and raises its event on the *rising
edge* (the condition starts to hold): the supervisor's exception transitions fire once, and the input
guard ``exception_cleared`` (no level holds) keeps TaskStopped from resuming while one still holds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from cosim_validation.common.exceptions import InputError


class EdgeCondition:
    """A condition with a rising-edge event.

    Args:
        event: The event raised when the condition starts to hold.
    """

    def __init__(self, event: str) -> None:
        self.event = event
        self.active = False

    def _set(self, active: bool) -> str | None:
        rising = active and not self.active
        self.active = active
        return self.event if rising else None


class ClearanceMonitor(EdgeCondition):
    """e_FRTooClose: the needle is closer to a forbidden region than ``clearance_m`` [m].

    A NaN distance (no measurement) keeps the last level: the tracking monitor reports missing data.
    """

    def __init__(self, clearance_m: float, event: str = "e_FRTooClose") -> None:
        super().__init__(event)
        self.clearance_m = clearance_m

    def update(self, distance_m: float) -> str | None:
        """Feed the needle's smallest distance to a forbidden region [m] (0 inside); the event on a rising edge.

        Args:
            distance_m: The needle's smallest distance to a forbidden region [m], 0 inside one; NaN (no measurement)
                keeps the last level and raises nothing.
        """
        if math.isnan(distance_m):
            return None
        return self._set(distance_m < self.clearance_m)


class ForceLimitMonitor(EdgeCondition):
    """e_ForceLimit: the magnitude of the axial force at the needle holder exceeds ``limit_n`` [N]."""

    def __init__(self, limit_n: float, event: str = "e_ForceLimit") -> None:
        super().__init__(event)
        self.limit_n = limit_n

    def update(self, force_n: float) -> str | None:
        """Feed the axial holder force [N] (either sign); the event on a rising edge.

        Args:
            force_n: The axial force at the needle holder [N], either sign (its magnitude is compared with ``limit_n``);
                NaN (no measurement) keeps the last level and raises nothing.
        """
        if math.isnan(force_n):
            return None
        return self._set(abs(force_n) > self.limit_n)


class TrackingMonitor(EdgeCondition):
    """e_NeedleLost: no needle-tip pose for longer than ``timeout_s`` [s].

    The clock starts at :meth:`start`; a tip pose that arrives later makes the tip tracked again.
    """

    def __init__(self, timeout_s: float, event: str = "e_NeedleLost") -> None:
        super().__init__(event)
        self.timeout_s = timeout_s
        self.last_seen_s = math.nan

    def start(self, t_s: float) -> None:
        """The task starts at ``t_s`` [s] (counts as a sighting).

        Args:
            t_s: Start time of the task [s]; the timeout counts from it.
        """
        self.last_seen_s = t_s
        self.active = False

    def update(self, t_s: float, tracked: bool) -> str | None:
        """At time ``t_s`` [s], whether a tip pose arrived since the last call; the event on a rising edge.

        Args:
            t_s: Time of the call [s]; the first call starts the clock if :meth:`start` was not called.
            tracked: Whether a tip pose arrived since the last call.
        """
        if math.isnan(self.last_seen_s):
            self.start(t_s)
        if tracked:
            self.last_seen_s = t_s
        return self._set(t_s - self.last_seen_s > self.timeout_s)


class AlarmInput(EdgeCondition):
    """An exception raised from outside the supervisor: any alarm source that reports an active alarm.

    An alarm source is, e.g., a hazard detector or a watchdog. The event is raised when the first alarm becomes
    active; while any is active the task cannot be recovered.

    Args:
        event: The machine's event for an alarm (config ``events.alarm``).
    """

    def __init__(self, event: str) -> None:
        super().__init__(event)
        self.sources: dict[str, str] = {}  # active alarms: source -> reason

    def update(self, source: str, active: bool, reason: str = "") -> str | None:
        """Alarm ``source`` became active (with ``reason``) or cleared; the event on the first active alarm.

        Args:
            source: Name of the alarm source (e.g. a hazard detector); one alarm per source.
            active: True if the source's alarm is active, False if it cleared.
            reason: Why the alarm is active, kept per source while it is; not used when it clears.
        """
        if active:
            self.sources[source] = reason
        else:
            self.sources.pop(source, None)
        return self._set(bool(self.sources))


class UserRequests:
    """The surgeon's requests (abort, recover, teleoperation, auto), queued until the next step.

    Args:
        events: Event of each request name.
    """

    def __init__(self, events: Mapping[str, str]) -> None:
        self.events = dict(events)
        self._queue: list[str] = []

    def request(self, name: str) -> None:
        """Queue a request.

        Args:
            name: A request name, a key of ``events`` (e.g. ``abort``, ``recover``, ``teleoperation``, ``auto``).

        Raises:
            InputError: An unknown request (the message lists the valid ones).
        """
        if name not in self.events:
            raise InputError(f"unknown request {name!r}; requests: {', '.join(self.events)}")
        self._queue.append(self.events[name])

    def drain(self) -> list[str]:
        """The events of the requests queued since the last call, in order."""
        out, self._queue = self._queue, []
        return out


def any_active(conditions: Iterable[EdgeCondition]) -> bool:
    """Whether some condition holds now.

    Args:
        conditions: The condition sources to check.
    """
    return any(c.active for c in conditions)
