"""Stdout as one JSON document: with ``--json`` only the command's document is written there.

Whatever else is printed to stdout while a ``--json`` command runs (a user's controller plugin, a library) goes to
stderr, so that a caller can always parse stdout.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TextIO

#: Where the document goes while :func:`json_document` holds stdout for it (innermost last)
_documents: list[TextIO] = []


@contextlib.contextmanager
def json_document() -> Iterator[None]:
    """Hold stdout for the command's JSON document; send everything else printed to stdout to stderr meanwhile."""
    _documents.append(sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _documents.pop()


def document_stream() -> TextIO:
    """Where the command's document is written: stdout as it was when :func:`json_document` began, else stdout."""
    return _documents[-1] if _documents else sys.stdout
