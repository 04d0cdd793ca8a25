"""Ctrl-C for the project's own processes, whatever their parent did with it.

A process started with SIGINT ignored (a shell's background job, some CI runners) inherits the ignore, and
Python then does not install its KeyboardInterrupt handler: ``cosim session`` and every node would ignore
the SIGINT that is their documented way to stop. Each entry point therefore takes SIGINT back.
"""

from __future__ import annotations

import signal


def restore_sigint() -> None:
    """Make SIGINT raise KeyboardInterrupt in this process (Python's default), even if it was ignored."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
