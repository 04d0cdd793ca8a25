"""Stdout as one JSON document: with ``--json`` only the command's document is written there.

Whatever else is printed to stdout while a ``--json`` command runs (a user's controller plugin, a library, a campaign
worker process) goes to stderr, so that a caller can always parse stdout. The redirection is made on the file
descriptor when stdout has one: worker processes inherit it (a plugin printing in a worker of ``--workers 2`` wrote
before the document).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TextIO

#: Where the document goes while :func:`json_document` holds stdout for it (innermost last)
_documents: list[TextIO] = []


def _descriptor(stream: TextIO) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream of the caller's own (a test's capture): no descriptor
        return None


@contextlib.contextmanager
def json_document() -> Iterator[None]:
    """Hold stdout for the command's JSON document; send everything else printed to stdout to stderr meanwhile."""
    out, err = _descriptor(sys.stdout), _descriptor(sys.stderr)
    if out is None or err is None:
        _documents.append(sys.stdout)
        try:
            with contextlib.redirect_stdout(sys.stderr):
                yield
        finally:
            _documents.pop()
        return
    sys.stdout.flush()
    sys.stderr.flush()
    document = open(os.dup(out), "w", encoding="utf-8", closefd=True)  # noqa: SIM115 - closed below
    os.dup2(err, out)  # descriptor 1 is stderr now, for this process and every process it starts
    _documents.append(document)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _documents.pop()
        sys.stdout.flush()
        document.flush()
        os.dup2(document.fileno(), out)
        document.close()


def keep_stdout_for_the_document() -> None:
    """After the document: descriptor 1 goes to stderr until the process ends.

    A controller's ``close()`` printed after the document while the process ended, and a caller's parser read
    "Extra data".
    """
    out, err = _descriptor(sys.stdout), _descriptor(sys.stderr)
    if out is not None and err is not None:
        sys.stdout.flush()
        os.dup2(err, out)


def document_stream() -> TextIO:
    """Where the command's document is written: stdout as it was when :func:`json_document` began, else stdout."""
    return _documents[-1] if _documents else sys.stdout
