"""The commands a served or emulated arm refused: the last ones kept, and logged without flooding the log."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Hashable, Iterator
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")


class Refusals(Generic[T]):
    """The commands an arm served to a node refused: the last :data:`KEPT` kept, and logged without flooding.

    A node that streams at the control rate to an arm that refuses (not enabled, a joint out of its limits)
    would otherwise log a line, and keep a record, a thousand times a second. Refusals of one kind (``kind``: the
    topic and the reason's class, say) are logged the first time at once; after that, at most one line of that
    kind per :data:`LOG_PERIOD_S` of wall time, saying how many were not logged. A refusal of another kind is
    logged at once. :meth:`flush` logs what a burst left unlogged (at a case's end).

    Args:
        logger: The node's logger.
    """

    KEPT: ClassVar[int] = 100
    LOG_PERIOD_S: ClassVar[float] = 1.0

    def __init__(self, logger: Any) -> None:
        self._logger = logger
        self._kept: deque[T] = deque(maxlen=self.KEPT)
        self.count = 0  # every refusal so far
        self._logged_s: dict[Hashable, float] = {}  # kind -> when its last line was logged
        self._unlogged: dict[Hashable, tuple[int, str]] = {}  # kind -> refusals not logged since, the last line

    def add(self, refusal: T, line: str, kind: Hashable = None) -> None:
        """Keep ``refusal`` and log ``line`` as an error, at most once per ``LOG_PERIOD_S`` for each ``kind``.

        A line not logged is counted; the next line of its ``kind`` that is logged says how many more were refused.

        Args:
            refusal: The refused command, kept among the last :data:`KEPT`.
            line: The log line saying what was refused and why.
            kind: What rate-limits the line's logging (the topic and the reason's class, say); None is a kind too.
        """
        self._kept.append(refusal)
        self.count += 1
        now = time.monotonic()
        if now - self._logged_s.get(kind, -math.inf) < self.LOG_PERIOD_S:
            self._unlogged[kind] = (self._unlogged.get(kind, (0, ""))[0] + 1, line)
            return
        unlogged = self._unlogged.pop(kind, (0, ""))[0]
        more = f" ({unlogged} more refused since the last message)" if unlogged else ""
        self._logger.error(line + more)
        self._logged_s[kind] = now

    def flush(self) -> None:
        """Log, for each kind, how many refusals were not logged since its last line (with the last of them)."""
        for line_count, line in self._unlogged.values():
            self._logger.error(f"{line} ({line_count} refused since the last message, this the last of them)")
        self._unlogged.clear()
        self._logged_s.clear()

    def __iter__(self) -> Iterator[T]:
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)

    def __getitem__(self, index: int) -> T:
        return self._kept[index]
