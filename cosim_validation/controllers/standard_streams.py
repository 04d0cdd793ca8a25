"""The command's standard streams, kept whole while a user's code runs.

A plugin that closed ``sys.stdout`` closed the command's descriptor 1 with it, and one that pointed ``sys.stderr``
at a file of its own took the command's errors there: ``run-case`` then exited 1 having printed nothing. While at
least one call into a user's code is running, ``sys.stdout`` and ``sys.stderr`` are wrappers whose ``close`` only
flushes (:class:`KeptOpen`); when the last such call has ended, the streams the command had are put back, whatever
the user's code set them to.

A call abandoned after its limit (its thread runs on, out of our hands) is counted as ended when it is abandoned,
not when it returns: by then the streams it found may be stale (a test framework swaps them between tests), and
putting them back would break the command that runs on.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import Any


class KeptOpen:
    """One of the command's standard streams as the user's code sees it: its ``close`` only flushes."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def close(self) -> None:
        """Flush, and keep the stream open for the command."""
        with contextlib.suppress(Exception):
            self._stream.flush()

    @property
    def closed(self) -> bool:
        """Never closed for the user's code."""
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class StreamTicket:
    """One call's place in :data:`GUARD`: entered at most once, left at most once (by its thread or by its caller)."""

    __slots__ = ("entered", "left")

    def __init__(self) -> None:
        self.entered = False
        self.left = False


class StreamGuard:
    """Counts the running calls into a user's code; the first wraps the command's streams, the last unwraps them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._ours: tuple[Any, Any] | None = None

    def enter(self, ticket: StreamTicket) -> None:
        """A call begins (nothing if its ticket was already left: the call was abandoned before it began).

        Args:
            ticket: The call's ticket.
        """
        with self._lock:
            if ticket.left or ticket.entered:
                return
            ticket.entered = True
            if self._running == 0:
                self._ours = sys.stdout, sys.stderr
                sys.stdout, sys.stderr = KeptOpen(sys.stdout), KeptOpen(sys.stderr)
            self._running += 1

    def leave(self, ticket: StreamTicket) -> None:
        """A call ended or was abandoned; the last one puts the command's streams back. Idempotent per ticket.

        Args:
            ticket: The call's ticket.
        """
        with self._lock:
            if ticket.left:
                return
            ticket.left = True
            if not ticket.entered:
                return
            self._running -= 1
            if self._running == 0 and self._ours is not None:
                sys.stdout, sys.stderr = self._ours
                self._ours = None

    @property
    def running(self) -> int:
        """How many calls are counted as running."""
        return self._running


#: The one guard of the process: the standard streams are the process's
GUARD = StreamGuard()
