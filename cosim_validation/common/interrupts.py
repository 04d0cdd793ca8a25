"""Ctrl-C for the project's own processes, whatever their parent did with it and wherever it lands.

A process started with SIGINT ignored (a shell's background job, some CI runners) inherits the ignore, and
Python then does not install its KeyboardInterrupt handler: ``cosim session`` and every node would ignore
the SIGINT that is their documented way to stop. Each entry point therefore takes SIGINT back.

A Ctrl-C that lands while a compiled extension module initialises (open3d, mujoco and numba are imported lazily,
some in the middle of a session's completion) does not arrive as KeyboardInterrupt: the module's init turns it
into an ImportError ("initialization failed") whose cause is the KeyboardInterrupt. :func:`interrupted` finds
it, so such an import is reported as the Ctrl-C it was, not as a missing package.

CPython (3.11) also remembers a KeyboardInterrupt that escaped code run through its C-level ``PyRun_*`` calls,
which some extension modules use while they load, even when our code caught it further up: the interpreter
then ends by killing itself with SIGINT (status -2 to a parent) after our handler returned 130.
:func:`forget_handled_interrupt` clears that memory once the program has handled the interrupt itself.
"""

from __future__ import annotations

import ctypes
import signal


def restore_sigint() -> None:
    """Make SIGINT raise KeyboardInterrupt in this process (Python's default), even if it was ignored."""
    signal.signal(signal.SIGINT, signal.default_int_handler)


def interrupted(exc: BaseException) -> bool:
    """True if ``exc`` is a KeyboardInterrupt or was raised because of one (its cause or context chain).

    Args:
        exc: The exception to look at.
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            return True
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return False


def forget_handled_interrupt() -> None:
    """Clear the interpreter's note of an unhandled KeyboardInterrupt; the exit status is then the program's own.

    Call it only when the program has dealt with the interrupt (it caught it and chose its exit status). CPython
    resets the note at the start of every ``PyRun_SimpleString``: running an empty statement through it clears
    the note left by an extension module's earlier run.
    """
    ctypes.pythonapi.PyRun_SimpleString(b"pass")
