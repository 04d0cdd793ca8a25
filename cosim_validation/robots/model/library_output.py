"""What a C++ library (pinocchio's urdfdom parser) prints on the process's stderr, caught instead of shown.

urdfdom writes ``Error: joint xml is not initialized correctly`` and the source line of its parser straight to
file descriptor 2 before pinocchio raises; a user saw those two lines above the ``error:`` line. The library's
lines become part of the one error message instead (or are dropped when the call succeeds).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def library_stderr() -> Iterator[list[str]]:
    """Redirect file descriptor 2 while the block runs; the list holds the lines written, once it is left."""
    lines: list[str] = []
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lines
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            text = sink.read().decode("utf-8", errors="replace")
            lines += [" ".join(line.split()) for line in text.splitlines() if line.strip()]
