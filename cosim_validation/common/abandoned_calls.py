"""Calls left running on a thread of their own, and how a process with one ends.

A user's call that never returned (a controller's ``start`` waiting in a ROS 2 client for a node that never comes) is
abandoned on its daemon thread. When the interpreter then finalizes, a daemon thread inside C++ code is torn down
under it: the process died with ``terminate called without an active exception`` (SIGABRT, exit 134) after its
result was stored and printed, some runs in two. A process that abandoned a call therefore ends without the
interpreter's finalization, once its output is flushed (:func:`end_process`).

A user's call may also leave a thread of its own running that is not a daemon (a plugin's background worker): the
interpreter waits for such a thread before it exits, and ``run-case`` or a campaign that had printed its result hung.
Such threads are noted (:func:`note_left_threads`) and the process ends the same way.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading

_abandoned = 0
_left_threads: list[threading.Thread] = []


def abandon() -> None:
    """Note that a call was left running on its thread (it will never be joined)."""
    global _abandoned
    _abandoned += 1


def note_left_threads(threads: list[threading.Thread]) -> None:
    """Note threads a user's call started and left running that are not daemons (the interpreter would wait for them).

    Args:
        threads: The threads.
    """
    _left_threads.extend(threads)


def left_threads() -> list[threading.Thread]:
    """The threads noted by :func:`note_left_threads` that still run."""
    return [t for t in _left_threads if t.is_alive()]


def end_process(code: int) -> None:
    """End the process with ``code`` now when a user's call was abandoned or left a thread running; else return.

    The streams are flushed first.

    Args:
        code: The exit status.
    """
    if not _abandoned and not left_threads():
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone, a stream closed: nothing more to say
            stream.flush()
    os._exit(code)
