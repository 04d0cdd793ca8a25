"""A campaign's run directory opened for writing: locked, its results database created or resumed.

Opening takes the directory's writer lock (:class:`~cosim_validation.runs.run_lock.RunLock`) before anything is
written, creates or resumes ``results.sqlite`` (a damaged one is salvaged on resume, see
:mod:`~cosim_validation.runs.campaign.db_salvage`) and copies the suites beside it. A call that fails before it
stored a single case removes what it created, so a bad configuration or suite never leaves a half-made run
behind (a second call would otherwise be told the directory "already exists").
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cosim_validation.common.exceptions import InputError
from cosim_validation.runs.campaign.record_codec import encode_record
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.runs.campaign.stores import guarded
from cosim_validation.runs.run_lock import RunLock
from cosim_validation.testgen import Suite

RESULTS_FILE = "results.sqlite"


class RunDirectory:
    """An open run directory; use :meth:`open`, then :meth:`close` (or :meth:`discard` on failure).

    Attributes:
        path: The run directory.
        db: Its results database.
        notes: What the user should know about the opening (e.g. a salvaged database).
    """

    def __init__(self, path: Path, db: ResultsDB, lock: RunLock, created: list[Path]) -> None:
        self.path, self.db, self._lock, self._created = path, db, lock, created
        self._made: list[Path] = []  # put in after open (made)
        self.notes: list[str] = []
        if db.salvaged is not None:
            self.notes.append(db.salvaged.message(db.path))

    @classmethod
    def open(
        cls, out: Path, meta: Mapping[str, Any], resume: bool, suites: Sequence[tuple[Suite, Path]], command: str
    ) -> RunDirectory:
        """Lock ``out`` (created if absent), create or resume its database, copy the suites into it.

        Args:
            out: The run directory.
            meta: The run's metadata, stored in (or, on resume, checked against) its results database.
            resume: Reopen the stored run and keep its cases; False: ``results.sqlite`` must not exist yet.
            suites: ``(suite, its file)`` pairs; each file not yet there is copied to ``suites/<suite_id>.parquet``.
            command: What writes the directory (e.g. ``cosim campaign``), for the message another writer gets.

        Raises:
            InputError: ``out`` is a file or cannot be created, another process writes it, or the database
                belongs to another run (see :meth:`ResultsDB.create`).
        """
        if out.exists() and not out.is_dir():
            raise InputError(f"--out {str(out)!r} is a file, expected a directory")
        created = [] if out.exists() else [out]
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"--out {str(out)!r}: cannot create the run directory ({exc.strerror})") from None
        lock = RunLock(out, command)
        try:
            lock.acquire()
            db_path = out / RESULTS_FILE
            if not db_path.exists():
                created.append(db_path)
            db = ResultsDB.create(db_path, meta, resume=resume, encoder=encode_record)
        except BaseException:
            lock.release()
            _remove(created, lock)
            raise
        run = cls(out, db, lock, created)
        run._copy_suites(suites)
        return run

    def _copy_suites(self, suites: Sequence[tuple[Suite, Path]]) -> None:
        for suite, path in suites:
            copy = self.path / "suites" / f"{suite.suite_id}.parquet"
            if not copy.exists():
                if not copy.parent.exists():
                    self._created.append(copy.parent)
                copy.parent.mkdir(exist_ok=True)
                self._created.append(copy)
                with guarded(copy, "copying the suite into the run directory"):
                    shutil.copyfile(path, copy)

    def close(self) -> None:
        """Close the database and give the lock up (also if closing fails)."""
        try:
            self.db.close()
        finally:
            self._lock.release()

    def made(self, *paths: Path) -> None:
        """Register files and folders this call put into the directory after :meth:`open` (the run's inputs).

        :meth:`discard` removes them too. Pass only paths that did not exist before.

        Args:
            *paths: Files or folders (a folder is removed with all it holds).
        """
        self._made.extend(paths)

    def discard(self) -> None:
        """Close, and remove what this call created (call only if no case was stored by this call)."""
        try:
            self.close()
        finally:
            for path in reversed(self._made):
                if path.is_dir():
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
            _remove(self._created, self._lock)


def _remove(paths: list[Path], lock: RunLock) -> None:
    """Remove created files (with SQLite's side files) and empty created directories, newest first.

    The lock file goes with a directory this call created.
    """
    if paths and paths[0] == lock.path.parent:
        lock.path.unlink(missing_ok=True)
    for path in reversed(paths):
        if path.is_dir():
            with contextlib.suppress(OSError):  # not empty: something else was put there
                path.rmdir()
        else:
            for side in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
                side.unlink(missing_ok=True)
