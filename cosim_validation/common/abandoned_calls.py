"""Calls left running on a thread of their own, and how a process with one ends.

A user's call that never returned (a controller's ``start`` waiting in a ROS 2 client for a node that never comes) is
abandoned on its daemon thread. When the interpreter then finalizes, a daemon thread inside C++ code is torn down
under it: the process died with ``terminate called without an active exception`` (SIGABRT, exit 134) after its
result was stored and printed, some runs in two. A process that abandoned a call therefore ends without the
interpreter's finalization, once its output is flushed (:func:`end_process`).
"""

from __future__ import annotations

import contextlib
import os
import sys

_abandoned = 0


def abandon() -> None:
    """Note that a call was left running on its thread (it will never be joined)."""
    global _abandoned
    _abandoned += 1


def end_process(code: int) -> None:
    """End the process with ``code`` now when it abandoned a call (its streams flushed first); else return.

    Args:
        code: The exit status.
    """
    if not _abandoned:
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader gone, a stream closed: nothing more to say
            stream.flush()
    os._exit(code)
