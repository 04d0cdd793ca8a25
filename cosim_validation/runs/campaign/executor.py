"""Running a function over many inputs on all cores (local processes) or a cluster (Ray).

Both executors give the same results: each worker builds its heavy state once (``init(*init_args)``,
e.g. the scene, the robot and the monitor from a config path) and then maps ``work(state, item)``;
results come back as they finish and are handed to ``on_result`` in the calling process, which stores
them. At most ``2 * workers`` items are in flight, so memory stays flat for 100,000 cases.

A Ctrl-C (KeyboardInterrupt in the calling process) stops submitting and cancels what has not started;
the local pool's workers ignore SIGINT, so the items already running finish and are handed to
``on_result`` before the KeyboardInterrupt is raised again (a second Ctrl-C stops waiting for them).
What ``on_result`` stored stays stored.
"""

from __future__ import annotations

import os
import signal
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any, Generic, TypeVar

from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.common.optional import require
from cosim_validation.runs.campaign.parent_watch import exit_with_parent

T = TypeVar("T")

_STATE: dict[str, Any] = {}


@dataclass(frozen=True)
class Outcome(Generic[T]):
    """The result of one item, or why it failed (an exception inside ``work`` never stops the run).

    ``setup_error`` is set instead when the worker could not build its state (``init`` raised): then no item
    can run, and the caller stops the run with that message.
    """

    index: int
    value: Any | None
    error: str = ""
    setup_error: str = ""


class WorkerSetupError(InputError):
    """A worker could not build its state (e.g. a configuration value only the engine itself rejects)."""


def default_workers() -> int:
    """All cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _init_worker(init: Callable[..., Any], init_args: Sequence[Any]) -> None:
    """Build the worker's state; a failure is kept (and reported with every item), never raised here.

    Raised in a pool process, it would print a traceback and break the pool; the caller gets it instead.
    """
    _STATE.pop("setup_error", None)
    try:
        _STATE["state"] = init(*init_args)
    except Exception as exc:  # noqa: BLE001 - handed to the caller as a message
        _STATE["setup_error"] = str(exc) if isinstance(exc, CosimError) else f"{type(exc).__name__}: {exc}"


def _init_pool_worker(init: Callable[..., Any], init_args: Sequence[Any], parent_pid: int) -> None:
    """A pool process: Ctrl-C is for the calling process, which decides what happens to running items; the
    process ends when the calling process does (see :mod:`cosim_validation.runs.campaign.parent_watch`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(parent_pid)
    _init_worker(init, init_args)


def _call(work: Callable[[Any, Any], Any], index: int, item: Any) -> Outcome[Any]:
    if "setup_error" in _STATE:
        return Outcome(index, None, setup_error=_STATE["setup_error"])
    try:
        return Outcome(index, work(_STATE["state"], item))
    except Exception:  # noqa: BLE001 - a failing case is a result, not the end of the campaign
        return Outcome(index, None, traceback.format_exc(limit=8))


def run_local(
    init: Callable[..., Any],
    init_args: Sequence[Any],
    work: Callable[[Any, Any], Any],
    items: Iterable[tuple[int, Any]],
    on_result: Callable[[Outcome[Any]], None],
    workers: int,
) -> None:
    """Map over ``items`` ((index, item) pairs) with ``workers`` processes (1 = in this process)."""
    if workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    if workers == 1:
        _init_worker(init, init_args)
        for index, item in items:
            on_result(_call(work, index, item))
        return
    context = get_context("spawn")  # no inherited threads or open files: safe with numba, open3d, MuJoCo
    pool = ProcessPoolExecutor(
        workers, mp_context=context, initializer=_init_pool_worker, initargs=(init, init_args, os.getpid())
    )
    pending: set[Future[Outcome[Any]]] = set()
    try:
        for index, item in items:
            pending.add(pool.submit(_call, work, index, item))
            if len(pending) >= 2 * workers:
                _drain(pending, on_result, FIRST_COMPLETED)
        _drain(pending, on_result, None)
    except KeyboardInterrupt:
        running = {f for f in pending if not f.cancel()}
        try:
            _drain(running, on_result, None)
        except KeyboardInterrupt:
            _terminate(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop the pool's processes now (a second Ctrl-C); their running items are lost, nothing else."""
    processes = getattr(pool, "_processes", None) or {}  # CPython keeps them here (3.8-3.13)
    for process in list(processes.values()):
        process.terminate()


def _drain(pending: set[Future[Outcome[Any]]], on_result: Callable[[Outcome[Any]], None], when: str | None) -> None:
    """Hand finished items to ``on_result`` in index order, removing each from ``pending`` first.

    Removing first means an interrupt inside ``on_result`` never hands the same item over twice.
    """
    done, _ = wait(pending, return_when=when or "ALL_COMPLETED")
    for future in sorted(done, key=lambda f: -1 if f.cancelled() else f.result().index):
        pending.discard(future)
        if not future.cancelled():
            on_result(future.result())


class _RayWorker:
    """The Ray actor: holds the heavy state like a local worker process does."""

    def __init__(self, init: Callable[..., Any], init_args: Sequence[Any]) -> None:
        _init_worker(init, init_args)

    def run(self, work: Callable[[Any, Any], Any], index: int, item: Any) -> Outcome[Any]:
        return _call(work, index, item)


def run_ray(
    init: Callable[..., Any],
    init_args: Sequence[Any],
    work: Callable[[Any, Any], Any],
    items: Iterable[tuple[int, Any]],
    on_result: Callable[[Outcome[Any]], None],
    workers: int,
    address: str | None = None,
) -> None:
    """Map over ``items`` with ``workers`` Ray actors (a local Ray if ``address`` is None)."""
    ray = require("ray", "ray[default]", "--executor ray")
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(
            address=address,
            num_cpus=None if address else workers,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    try:
        actor = ray.remote(num_cpus=1)(_RayWorker)
        actors = [actor.remote(init, init_args) for _ in range(workers)]
        free = list(actors)
        running: dict[Any, Any] = {}
        for index, item in items:
            if not free:
                _ray_collect(ray, running, free, on_result, num=1)
            worker = free.pop()
            running[worker.run.remote(work, index, item)] = worker
        while running:
            _ray_collect(ray, running, free, on_result, num=1)
    finally:
        if started_here:
            ray.shutdown()


def _ray_collect(
    ray: Any, running: dict[Any, Any], free: list[Any], on_result: Callable[[Outcome[Any]], None], num: int
) -> None:
    done, _ = ray.wait(list(running), num_returns=num)
    for ref in done:
        free.append(running.pop(ref))
        on_result(ray.get(ref))
