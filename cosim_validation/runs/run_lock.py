"""One writer per run directory: an advisory lock that names the process holding it.

Two ``cosim campaign --resume`` on one run directory both ran the missing cases and the second died with
``sqlite3.IntegrityError: UNIQUE constraint failed``. A writer (campaign, experiment, session)
takes ``RUN_DIR/.writer.lock`` with ``flock(LOCK_EX | LOCK_NB)`` (flock(2)) for as long as it writes; the
file holds the writer's pid, command and start time, so a second writer is refused with a message naming
the running process. The kernel releases the lock when the holder exits, however it dies (SIGKILL
included), so a lock is never stale; the file itself stays and is overwritten by the next writer.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from types import TracebackType

from cosim_validation.common.config.bounded_file import parse_json, read_user_text
from cosim_validation.common.exceptions import CosimError, InputError

LOCK_NAME = ".writer.lock"


class RunDirectoryBusyError(InputError):
    """Another process is writing the run directory."""


class RunLock:
    """The writer lock of a run directory (a context manager).

    Args:
        run_dir: The run directory (must exist).
        command: What writes it, for the message another writer gets (e.g. ``cosim campaign``).
    """

    def __init__(self, run_dir: str | Path, command: str) -> None:
        self.path = Path(run_dir) / LOCK_NAME
        self.command = command
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Take the lock or raise :class:`RunDirectoryBusyError` naming the holder."""
        import fcntl

        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise InputError(f"{self.path.parent}: cannot lock the run directory ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise RunDirectoryBusyError(f"{self.path.parent}: {self._holder()}; wait for it to end") from None
        info = {"pid": os.getpid(), "command": self.command, "started": time.strftime("%Y-%m-%d %H:%M:%S")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
        self._fd = fd
        return self

    def _holder(self) -> str:
        """Who holds the lock, from the file it wrote."""
        try:
            info = parse_json(read_user_text(self.path, 4096) or "{}", self.path)
            info = info if isinstance(info, dict) else {}
        except CosimError:
            info = {}
        if "pid" not in info:
            return "another process is writing this run directory"
        return (
            f"process {info['pid']} ({info.get('command', 'a writer')}, started {info.get('started', '?')}) "
            "is writing this run directory"
        )

    def release(self) -> None:
        """Give the lock up (the file stays)."""
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.release()


def command_line() -> str:
    """``cosim <subcommand>`` of this process, for the lock file."""
    argv = [Path(sys.argv[0]).name, *sys.argv[1:2]] if sys.argv and sys.argv[0] else ["python"]
    return " ".join(argv)
