"""The result of an accepted action goal, asked for again when the server says the goal is over but no answer came.

An action client asks for a goal's result once, over the action's ``get_result`` service, and a service answer
is not guaranteed to arrive (a server may send it before its response writer matched the client's reader, or the
server may be one the user wrote that never answers a request it got too early). The goal's status topic (reliable,
transient local) still tells the client that the goal ended, so as a defence :class:`GoalResult` asks once more
after ``patience_s`` of a terminal status without an answer, and again after each further ``patience_s``.
"""

from __future__ import annotations

import time
from typing import Any

from action_msgs.msg import GoalStatus

TERMINAL = frozenset({GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED})


class GoalResult:
    """The result future of ``handle`` (an accepted ``ClientGoalHandle``), re-requested when its answer is lost."""

    def __init__(self, handle: Any, patience_s: float = 2.0) -> None:
        self.handle, self.patience_s = handle, patience_s
        self.future = handle.get_result_async()
        self.requests = 1  # result requests sent
        self._over_since: float | None = None  # when the status first said the goal is over, without an answer

    def done(self) -> bool:
        """Whether the result arrived (asks again when the goal has been over for ``patience_s`` without it)."""
        if self.future.done():
            return True
        if self.handle.status not in TERMINAL:
            return False
        now = time.monotonic()
        if self._over_since is None:
            self._over_since = now
        elif now - self._over_since >= self.patience_s:
            self.future = self.handle.get_result_async()
            self.requests, self._over_since = self.requests + 1, now
        return False

    def result(self) -> Any:
        """The ``GetResult`` response (status and result); only once :meth:`done`."""
        return self.future.result()
