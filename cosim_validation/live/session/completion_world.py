"""The monitor world of a session's bag check, built in a thread while the session runs.

After its nodes stop, ``cosim session`` replays its bag through the monitor (the replay-equals-live check). The
monitor's world (anatomy meshes, distance structures, properties) takes about two seconds to build, mostly open3d's
import and the mesh queries' set-up, and needs only the run's captured inputs. Built in a low-priority thread from
the start of the session, it is ready when the nodes stop, and a Ctrl-C, which Python delivers to the main thread
only, cannot land in the middle of a compiled module's import there.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

_NICE = 10  # the thread's niceness: it takes the CPU that the session's nodes leave


class WorldInBackground:
    """:func:`~cosim_validation.runs.run_inputs.run_monitor_world` of a run directory, computed in a thread."""

    def __init__(self, run_dir: Path, config: str | Path | None, properties: str | Path | None) -> None:
        """Start building.

        Args:
            run_dir: The session's run directory, its inputs captured already.
            config: The configuration to fall back on if the run directory has no copy (with a warning).
            properties: The properties file to fall back on likewise.
        """
        self._args = (run_dir, config, properties)
        self._warnings: list[str] = []
        self._world: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._build, name="bag-check-world", daemon=False)
        self._thread.start()

    def _build(self) -> None:
        from cosim_validation.runs.run_inputs import run_monitor_world

        with contextlib.suppress(OSError, AttributeError):  # Linux: a thread's own niceness
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), _NICE)
        try:
            self._world = run_monitor_world(*self._args, self._warnings.append)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller of result(), in the main thread
            self._error = exc

    def result(self, warn: Callable[[str], None]) -> Any:
        """Wait for the world; pass on its warnings; raise what building it raised; None without a configuration.

        Args:
            warn: Takes each warning (an input read from its fallback instead of the run directory's copy).
        """
        self._thread.join()
        for message in self._warnings:
            warn(message)
        if self._error is not None:
            raise self._error
        return self._world
