"""The one way a run's stores are opened, and the one way their failures read.

A run keeps SQLite databases (``results.sqlite``, ``hazards.sqlite``) and JSON files (``summary.json``,
``experiment.json``). Each is opened here (:func:`connect`, :func:`read_json`, :func:`write_json`) and each use
of an open database runs inside :func:`guarded`, so whatever fails below (``sqlite3.Error``, ``OSError``, JSON
that does not parse) comes out as one :class:`StoreError` naming the file, what failed and what to do:

- :class:`StoreLockedError`: another process holds a lock on the database (a database browser, a second
  program): found within :data:`BUSY_TIMEOUT_S`, not after SQLite's default wait;
- :class:`StoreFullError`: the disk (or quota) is full; what was committed before stays;
- :class:`StoreDamagedError`: the file is damaged, is no database of its kind, or holds a value of the wrong type;
- :class:`StoreError`: any other failure (permissions, an input/output error).

JSON files are written atomically (a temporary file beside, then a rename), so a full disk never leaves half a
file where a whole one was.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cosim_validation.common.config import load_json_file
from cosim_validation.common.exceptions import ConfigError, InputError

#: How long an operation waits for another process's lock before it fails [s] (SQLite's own default here was 30).
BUSY_TIMEOUT_S = 5.0

_BUSY, _LOCKED, _FULL, _CORRUPT, _NOTADB = 5, 6, 13, 11, 26
_READONLY, _PERM, _CANTOPEN = 8, 3, 14
_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


class StoreError(InputError):
    """A store of a run (database or JSON file) could not be used.

    Args:
        path: The file.
        problem: What failed.
        advice: What to do ("" if nothing more than the problem says).
    """

    def __init__(self, path: str | Path, problem: str, advice: str = "") -> None:
        self.source = str(path)
        self.problem, self.advice = problem, advice
        super().__init__(f"{path}: {problem}{_then(advice)}")


class StoreLockedError(StoreError):
    """Another process holds a lock on the database."""


class StoreFullError(StoreError):
    """No space left on the device (or the quota) while writing the store."""


class StoreDamagedError(StoreError):
    """The store is damaged, is not a store of its kind, or holds a value of the wrong type."""


def store_error(path: str | Path, exc: BaseException, doing: str, remedy: str = "") -> StoreError:
    """The :class:`StoreError` for ``exc`` raised while ``doing`` something with ``path``.

    Args:
        path: The file.
        exc: What was raised (``sqlite3.Error``, ``OSError``, ``json.JSONDecodeError``, ``UnicodeDecodeError``).
        doing: What was being done (e.g. ``storing case X``).
        remedy: What the user should do about damage, beyond the generic advice (e.g. how to rebuild the file).
    """
    if isinstance(exc, StoreError):
        return exc
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (_BUSY, _LOCKED):
        return StoreLockedError(
            path,
            f"{doing}: locked by another process (SQLite: {exc})",
            "close the program that holds it (a database browser, another command on this run), then run the command "
            "again",
        )
    if code == _FULL or (isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS):
        what = exc.strerror if isinstance(exc, OSError) else exc
        return StoreFullError(path, f"{doing}: no space left on the device ({what})", "free space, then run again")
    if code in (_CORRUPT, _NOTADB):
        return StoreDamagedError(path, f"{doing}: cannot open as SQLite or damaged ({exc})", remedy)
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return StoreDamagedError(path, f"{doing}: not valid JSON ({exc})", remedy)
    if code in (_READONLY, _PERM, _CANTOPEN) or isinstance(exc, PermissionError):
        why = exc.strerror if isinstance(exc, OSError) else exc
        return StoreError(path, f"{doing}: cannot open or write it ({why})", "check the permissions")
    if isinstance(exc, sqlite3.Error):
        return StoreDamagedError(path, f"{doing}: not the expected database ({exc})", remedy)
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return StoreError(path, f"{doing}: {why}")


def _then(remedy: str) -> str:
    return f"; {remedy}" if remedy else ""


@contextlib.contextmanager
def guarded(path: str | Path, doing: str, remedy: str = "") -> Iterator[None]:
    """Turn a failure of the store at ``path`` inside the block into a :class:`StoreError` (see :func:`store_error`).

    Args:
        path: The store's file, named by the error.
        doing: What the block does (e.g. ``reading``), named by the error.
        remedy: What the user should do about damage, beyond the generic advice.
    """
    try:
        yield
    except (sqlite3.Error, OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise store_error(path, exc, doing, remedy) from None


def connect(path: str | Path, *, create: bool = False, read_only: bool = False, remedy: str = "") -> sqlite3.Connection:
    """Open an SQLite store (``create``: it may be new; ``read_only``: never written through this connection).

    A lock held by another process fails an operation after :data:`BUSY_TIMEOUT_S`.

    Args:
        path: The database file.
        create: The file may be missing (SQLite creates it); False: a missing file is an error.
        read_only: Open it read-only (``mode=ro``).
        remedy: What the user should do if the file is damaged, for the error's message.

    Raises:
        StoreError: The file is missing (unless ``create``), cannot be opened, or is not an SQLite database.
    """
    path = Path(path)
    with guarded(path, "opening the database", remedy):
        if not create and not path.is_file():
            raise StoreError(path, "no such file")
        uri = f"{path.resolve().as_uri()}?mode=ro" if read_only else str(path)
        connection = sqlite3.connect(uri, timeout=BUSY_TIMEOUT_S, uri=read_only, isolation_level="DEFERRED")
        try:
            connection.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # reads the header: a database?
        except BaseException:
            connection.close()
            raise
    return connection


def read_json(path: str | Path, remedy: str = "") -> dict[str, Any]:
    """Read a JSON object.

    Args:
        path: The JSON file.
        remedy: What the user should do if the file is damaged, for the error's message.

    Raises:
        StoreError: The file cannot be read, is not JSON, or holds no JSON object.
    """
    with guarded(path, "reading", remedy):
        try:
            data = load_json_file(path)  # the bounded reader: a regular file, size and nesting limits
        except ConfigError as exc:
            raise StoreDamagedError(path, exc.message, remedy) from None
    if not isinstance(data, dict):
        raise StoreDamagedError(path, f"expected a JSON object, got {type(data).__name__}", remedy)
    return data


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` atomically: the old file stays whole if the write fails (a full disk).

    Args:
        path: The file to (re)write; a temporary ``.NAME.partial`` beside it is renamed over it.
        text: The whole content, written as UTF-8.

    Raises:
        StoreError: The file cannot be written.
    """
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    with guarded(path, "writing"):
        try:
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
