"""A progress line with rate and ETA on stderr (redrawn on a terminal, a line now and then in a log)."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def format_duration(seconds: float) -> str:
    """``1h02m``, ``4m05s`` or ``12s``.

    Args:
        seconds: The duration [s], rounded to whole seconds; a negative one shows as ``0s``.
    """
    s = round(max(seconds, 0.0))
    if s >= 3600:
        return f"{s // 3600}h{(s % 3600) // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


class Progress:
    """Counts finished items of ``total`` and shows done, rate, ETA and failures.

    Args:
        total: Items to do in this run (resumed ones excluded).
        label: What an item is, e.g. "cases".
        stream: Where to draw (stderr by default); None draws nothing.
        interval_s: Minimum time between two draws.
    """

    def __init__(
        self, total: int, label: str = "cases", stream: TextIO | None = sys.stderr, interval_s: float = 0.5
    ) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.failed = 0
        self._stream = stream
        self._tty = bool(stream is not None and stream.isatty())
        self._interval_s = interval_s if self._tty else max(interval_s, 10.0)
        self._start = time.monotonic()
        self._last_draw = -1e9

    @property
    def elapsed_s(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self._start

    def rate(self) -> float:
        """Items per second so far."""
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def line(self) -> str:
        """The current progress text."""
        width = 24
        filled = int(width * self.done / self.total) if self.total else width
        rate = self.rate()
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        eta_text = format_duration(eta) if eta == eta else "?"
        failed = f", {self.failed} failed" if self.failed else ""
        return (
            f"[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total} {self.label}{failed}  "
            f"{rate:.2f}/s  elapsed {format_duration(self.elapsed_s)}  ETA {eta_text}"
        )

    def advance(self, failed: bool = False) -> None:
        """One more item finished.

        Args:
            failed: Whether the item failed (counted among the failures shown).
        """
        self.done += 1
        self.failed += int(failed)
        now = time.monotonic()
        if self._stream is not None and (now - self._last_draw >= self._interval_s or self.done == self.total):
            self._last_draw = now
            self._stream.write(("\r" + self.line()) if self._tty else self.line() + "\n")
            self._stream.flush()

    def close(self) -> None:
        """End the line on a terminal."""
        if self._stream is not None and self._tty:
            self._stream.write("\n")
            self._stream.flush()
