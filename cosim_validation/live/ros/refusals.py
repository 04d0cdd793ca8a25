"""The commands a served or emulated arm refused: the last ones kept, and logged without flooding the log."""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterator
from typing import Any, ClassVar, Generic, TypeVar

T = TypeVar("T")


class Refusals(Generic[T]):
    """The commands an arm served to a node refused: the last :data:`KEPT` kept, and logged without flooding.

    A node that streams at the control rate to an arm that refuses (not enabled, a joint out of its limits)
    would otherwise log a line, and keep a record, a thousand times a second. The first refusal is logged at
    once; after it, at most one line per :data:`LOG_PERIOD_S` of wall time, saying how many were not logged.

    Args:
        logger: The node's logger.
    """

    KEPT: ClassVar[int] = 100
    LOG_PERIOD_S: ClassVar[float] = 1.0

    def __init__(self, logger: Any) -> None:
        self._logger = logger
        self._kept: deque[T] = deque(maxlen=self.KEPT)
        self.count = 0  # every refusal so far
        self._logged_count, self._logged_s = 0, -math.inf

    def add(self, refusal: T, line: str) -> None:
        """Keep ``refusal``; log ``line`` as an error unless a line was logged less than LOG_PERIOD_S ago."""
        self._kept.append(refusal)
        self.count += 1
        now = time.monotonic()
        if now - self._logged_s < self.LOG_PERIOD_S:
            return
        unlogged = self.count - self._logged_count - 1
        more = f" ({unlogged} more refused since the last message)" if unlogged else ""
        self._logger.error(line + more)
        self._logged_count, self._logged_s = self.count, now

    def __iter__(self) -> Iterator[T]:
        return iter(self._kept)

    def __len__(self) -> int:
        return len(self._kept)

    def __getitem__(self, index: int) -> T:
        return self._kept[index]
