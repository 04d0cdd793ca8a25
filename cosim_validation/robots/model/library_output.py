"""What a C++ library prints on the process's stdout and stderr, caught instead of shown.

The libraries: pinocchio's urdfdom parser and its mesh loaders.

urdfdom writes ``Error: joint xml is not initialized correctly`` and the source line of its parser straight to
file descriptor 2 before pinocchio raises; a user saw those two lines above the ``error:`` line. The library's
lines become part of the one error message instead (or are dropped when the call succeeds).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager


@contextmanager
def library_stderr(fds: tuple[int, ...] = (2,)) -> Iterator[list[str]]:
    """Redirect file descriptors ``fds`` (default: 2) while the block runs.

    The list holds the lines written, once it is left.

    Args:
        fds: The file descriptors to catch (1 stdout, 2 stderr).
    """
    lines: list[str] = []
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(fd) for fd in fds]
    with tempfile.TemporaryFile(mode="w+b") as sink:
        for fd in fds:
            os.dup2(sink.fileno(), fd)
        try:
            yield lines
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            for fd, copy in zip(fds, saved, strict=True):
                os.dup2(copy, fd)
                os.close(copy)
            sink.seek(0)
            text = sink.read().decode("utf-8", errors="replace")
            lines += [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def library_output() -> AbstractContextManager[list[str]]:
    """:func:`library_stderr` of both stdout and stderr (mesh loaders print on either)."""
    return library_stderr((1, 2))
