"""Importing heavy or optional dependencies lazily, quietly, and with a clear error."""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import importlib.util
import os
import sys
import threading
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from cosim_validation.common.exceptions import MissingDependencyError
from cosim_validation.common.interrupts import interrupted


def _flush_c_stdio() -> None:
    """Flush C stdio buffers, so text printed by C code lands where fd 1 points now."""
    with contextlib.suppress(OSError, AttributeError):  # no libc symbols: nothing to flush
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def quiet_stdout() -> Iterator[None]:
    """Silence what C code writes to file descriptors 1 and 2 (pybullet prints its build time on import).

    Only in the main thread: the descriptors belong to the whole process, and a thread that pointed them at
    /dev/null would silence what the main thread prints meanwhile (a session's monitor world is built in a thread
    while the session prints its start). Elsewhere nothing is silenced.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 1)
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        _flush_c_stdio()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def require(module: str, package: str, feature: str, *, quiet: bool = False) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming ``package`` and ``feature``.

    An import that a Ctrl-C broke (a compiled module's init turns the KeyboardInterrupt into an ImportError)
    raises KeyboardInterrupt.

    Args:
        module: Import name, e.g. ``ray``.
        package: Distribution to install, e.g. ``ray[default]``.
        feature: What needs it, for the message.
        quiet: Silence what the module's C code prints on import.
    """
    loaded = sys.modules.get(module)
    if loaded is not None:  # None marks a module whose import is blocked: importing it raises ImportError
        return loaded
    try:
        if quiet:
            with quiet_stdout():
                return importlib.import_module(module)
        return importlib.import_module(module)
    except ImportError as exc:
        if interrupted(exc):  # Ctrl-C while a compiled module initialised: the user's interrupt, not a lack
            raise KeyboardInterrupt from exc
        found = _installed(module)
        raise MissingDependencyError(package, feature, f"{type(exc).__name__}: {exc}" if found else None) from None


def _installed(module: str) -> bool:
    """Whether ``module`` can be found on the path (installed), without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that does not import, or a broken entry in sys.modules
        return False


def imported(target: str) -> Any:
    """The attribute named by ``module:attribute`` (a registry's entry that names its code without importing it).

    Args:
        target: ``package.module:attribute``.
    """
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)
