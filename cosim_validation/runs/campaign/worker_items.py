"""What every executor's worker does with an item, and what happens to an item whose worker died.

A worker builds its heavy state once (:func:`init_worker`) and then runs items (:func:`call`); an exception of
``work`` is a result, never the end of the run. A worker *process* that dies (SIGKILL, the OOM killer, a crash
in compiled code) takes only the item it was running: :class:`DeathLedger` decides that the item runs once
more in a fresh worker and, if that worker dies too, gives the item's failed :class:`Outcome` naming how both
died.
"""

from __future__ import annotations

import signal
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.common.interrupts import interrupted
from cosim_validation.robots.robot_backend import ArmLostError

T = TypeVar("T")

_STATE: dict[str, Any] = {}

#: How often an item is started in a worker process that then dies, before it is stored as failed.
ATTEMPTS = 2


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """The result of one item, or why it failed (an exception inside ``work`` never stops the run).

    ``setup_error`` is set instead when the worker could not build its state (``init`` raised): then no item
    can run, and the caller stops the run with that message. ``worker_died`` is set (with ``error``) when the
    item's worker process died on each of its :data:`ATTEMPTS`; ``retried`` says how the worker of an earlier
    attempt died when the item came back from a later one. ``stop`` is set instead of a result when the item found
    that no later item can run either (:class:`~cosim_validation.robots.robot_backend.ArmLostError`): the caller
    stops the run, the item not stored.
    """

    index: int
    value: Any | None
    error: str = ""
    setup_error: str = ""
    worker_died: bool = False
    retried: str = ""
    stop: str = ""


class RobotLostRunError(CosimError):
    """A case found the one physical arm gone (:attr:`Outcome.stop`): the run stopped, what ran before is stored."""


class WorkerSetupError(InputError):
    """A worker could not build its state (e.g. a configuration value only the engine itself rejects)."""


def init_worker(init: Callable[..., Any], init_args: Sequence[Any]) -> None:
    """Build the worker's state; a failure is kept (and reported with every item), never raised here.

    Raised in a pool process, it would print a traceback and end the worker; the caller gets it instead.

    Args:
        init: Builds the state: ``init(*init_args)``.
        init_args: The arguments of ``init``.
    """
    _STATE.pop("setup_error", None)
    try:
        _STATE["state"] = init(*init_args)
    except Exception as exc:  # noqa: BLE001 - handed to the caller as a message
        _STATE["setup_error"] = str(exc) if isinstance(exc, CosimError) else f"{type(exc).__name__}: {exc}"


def call(work: Callable[[Any, Any], Any], index: int, item: Any) -> Outcome[Any]:
    """Run one item on this worker's state.

    Args:
        work: ``work(state, item)``; an exception it raises becomes the outcome's ``error`` (its traceback).
        index: The item's index, kept in the outcome.
        item: The item handed to ``work``.

    Returns:
        The item's outcome; with ``setup_error`` set, and ``work`` not called, if :func:`init_worker` failed.
    """
    if "setup_error" in _STATE:
        return Outcome(index, None, setup_error=_STATE["setup_error"])
    try:
        return Outcome(index, work(_STATE["state"], item))
    except ArmLostError as exc:  # the one arm is gone: no later item can run either
        return Outcome(index, None, stop=str(exc))
    except Exception as exc:  # noqa: BLE001 - a failing case is a result, not the end of the campaign
        if interrupted(exc):  # Ctrl-C inside a compiled kernel: numba's SystemError caused by the KeyboardInterrupt
            raise KeyboardInterrupt from None
        return Outcome(index, None, traceback.format_exc(limit=8))


def death_reason(exitcode: int | None) -> str:
    """How a worker process ended, from its exit code (negative: the signal that killed it).

    Args:
        exitcode: The process's exit code: negative for the signal that killed it; None for a process that has
            not ended (it stopped answering).
    """
    if exitcode is None:
        return "stopped answering"
    if exitcode < 0:
        try:
            name = f" ({signal.Signals(-exitcode).name})"
        except ValueError:
            name = ""
        return f"killed by signal {-exitcode}{name}"
    return f"exited with code {exitcode}"


class DeathLedger:
    """The deaths of the worker processes, per item.

    The first death of an item's worker re-runs it, the :data:`ATTEMPTS`-th makes it a failed outcome.
    """

    def __init__(self) -> None:
        self._deaths: dict[int, list[str]] = {}

    def died(self, index: int, reason: str) -> Outcome[Any] | None:
        """Record that the worker running item ``index`` died (``reason``: :func:`death_reason`).

        Args:
            index: The index of the item the worker was running.
            reason: How the worker ended, e.g. from :func:`death_reason`.

        Returns:
            None if the item is to run again in a fresh worker, else its failed outcome.
        """
        reasons = self._deaths.setdefault(index, [])
        reasons.append(reason)
        if len(reasons) < ATTEMPTS:
            return None
        if len(set(reasons)) == 1:
            text = f"worker process {reason} twice" if ATTEMPTS == 2 else f"worker process {reason} {ATTEMPTS} times"
        else:
            text = "worker process " + ", then ".join(reasons)
        return Outcome(index, None, text, worker_died=True)

    def came_back(self, outcome: Outcome[Any]) -> Outcome[Any]:
        """``outcome`` as handed over: marked ``retried`` if a worker died running it before.

        Args:
            outcome: The outcome a worker gave back for an item.
        """
        reasons = self._deaths.get(outcome.index)
        return replace(outcome, retried=", then ".join(reasons)) if reasons and not outcome.worker_died else outcome
