"""Playing a recorded session into the dashboard's model: play, pause, seek (no Qt, no ROS).

The events of the bag are held in memory in log-time order (a four-case session is ~5,000 events); the
model at time t is the model fed every event logged at or before t. Moving forward applies the events in
between; moving back rebuilds the model from the start (a few milliseconds for such a bag).
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from cosim_validation.common.exceptions import InputError
from cosim_validation.live.dashboard.dashboard_model import DashboardModel
from cosim_validation.live.dashboard.events import DashboardEvent

NS_PER_S = 1_000_000_000


class BagPlayer:
    """A cursor over a bag's events driving one :class:`DashboardModel`.

    Args:
        timeline: (log time [ns], event) pairs in log-time order (``ros.dashboard_events.bag_events``).
        rate: Playback speed: bag seconds per wall second.
    """

    def __init__(self, timeline: Sequence[tuple[int, DashboardEvent]], rate: float = 1.0) -> None:
        if not timeline:
            raise InputError("the bag holds no message of the dashboard's topics")
        if not rate > 0:
            raise InputError(f"playback rate must be > 0, got {rate}")
        self._times = [t for t, _ in timeline]
        self._events = [e for _, e in timeline]
        self.rate = rate
        self.start_ns, self.end_ns = self._times[0], self._times[-1]
        self.model = DashboardModel()
        self._applied = 0  # events applied so far
        self.position_ns = self.start_ns - 1  # nothing shown yet
        self.playing = False

    @property
    def duration_s(self) -> float:
        """Seconds from the first to the last event."""
        return (self.end_ns - self.start_ns) / NS_PER_S

    @property
    def position_s(self) -> float:
        """The cursor in seconds since the bag's first event (clamped at 0)."""
        return max(0.0, (self.position_ns - self.start_ns) / NS_PER_S)

    def seek(self, t_s: float) -> None:
        """Move the cursor to ``t_s`` seconds after the first event (clamped to the bag).

        Args:
            t_s: Cursor position in seconds after the bag's first event, in [s]; clamped to 0 .. ``duration_s``.
        """
        t_ns = self.start_ns + round(min(max(t_s, 0.0), self.duration_s) * NS_PER_S)
        stop = bisect.bisect_right(self._times, t_ns)
        if stop < self._applied:
            self.model = DashboardModel()
            self._applied = 0
        self.model.apply_all(self._events[self._applied : stop])
        self._applied = stop
        self.position_ns = t_ns

    def seek_end(self) -> None:
        """Show the whole bag."""
        self.seek(self.duration_s)

    def advance(self, wall_s: float) -> bool:
        """While playing, move on by ``wall_s`` wall seconds times the rate; False once at the end.

        Args:
            wall_s: Wall-clock time since the previous step, in [s]; the cursor moves ``wall_s * rate`` bag seconds.
        """
        if self.playing:
            self.seek(self.position_s + wall_s * self.rate)
            if self.position_ns >= self.end_ns:
                self.playing = False
        return self.playing

    def play(self) -> None:
        """Start playing (from the start if at the end)."""
        if self.position_ns >= self.end_ns:
            self.seek(0.0)
        self.playing = True

    def pause(self) -> None:
        """Stop moving the cursor."""
        self.playing = False
