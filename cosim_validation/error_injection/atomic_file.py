"""Writing a file whole or not at all: a temporary file beside it, renamed into place."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from cosim_validation.common.exceptions import InputError


def write_atomic(path: Path, write: Callable[[Path], None], what: str) -> None:
    """Call ``write(tmp)`` on a temporary file in ``path``'s folder, then rename it to ``path``.

    Args:
        path: The file to make.
        write: Writes the content to the path it is given.
        what: What the file is, for the error message (``an error model``).

    Raises:
        InputError: The folder or file cannot be written (naming the path and why); nothing is left behind.
    """
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError(f"{path}: cannot write {what} ({exc.strerror})") from None
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"{path}: cannot write {what} ({exc.strerror})") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
