"""Running a function over many inputs on all cores (local processes) or a cluster (Ray).

Both executors give the same results: each worker builds its heavy state once (``init(*init_args)``,
e.g. the scene, the robot and the monitor from a config path) and then maps ``work(state, item)``;
results come back as they finish and are handed to ``on_result`` in the calling process, which stores
them. One item per worker is in flight, so memory stays flat for 100,000 cases.

A worker process that dies (SIGKILL, the OOM killer, a crash in compiled code) costs at most its own item:
a fresh worker takes its place and the item runs once more; if that worker dies too, the item's outcome is a
failure naming how both died (:mod:`cosim_validation.runs.campaign.worker_pool`, the same for Ray actors).

A Ctrl-C (KeyboardInterrupt in the calling process) stops handing out items; the local pool's workers ignore
SIGINT, so the items already running finish and are handed to ``on_result`` before the KeyboardInterrupt is
raised again (a second Ctrl-C stops waiting for them). What ``on_result`` stored stays stored.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.optional import require
from cosim_validation.runs.campaign.worker_items import DeathLedger, Outcome, WorkerSetupError, call, init_worker
from cosim_validation.runs.campaign.worker_pool import run_pool

__all__ = ["Outcome", "WorkerSetupError", "default_workers", "run_local", "run_ray"]


def default_workers() -> int:
    """All cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def run_local(
    init: Callable[..., Any],
    init_args: Sequence[Any],
    work: Callable[[Any, Any], Any],
    items: Iterable[tuple[int, Any]],
    on_result: Callable[[Outcome[Any]], None],
    workers: int,
) -> None:
    """Map over ``items`` ((index, item) pairs) with ``workers`` processes (1 = in this process).

    Args:
        init: Builds a worker's state, once per worker: ``init(*init_args)``; picklable with several workers.
        init_args: The arguments of ``init``.
        work: ``work(state, item)``, the result of one item; an exception is a failed :class:`Outcome`.
        items: ``(index, item)`` pairs, read one at a time as workers become free.
        on_result: Called in this process with each item's :class:`Outcome` (with several workers, as they finish).
        workers: Worker processes, >= 1; 1 runs every item in this process.

    Raises:
        InputError: ``workers`` < 1.
        WorkerSetupError: More worker processes died while building their state than there are workers.
    """
    if workers < 1:
        raise InputError(f"workers must be >= 1, got {workers}")
    if workers == 1:
        init_worker(init, init_args)
        for index, item in items:
            on_result(call(work, index, item))
        return
    run_pool((init, tuple(init_args), work), iter(items), on_result, workers)


class _RayWorker:
    """The Ray actor: holds the heavy state like a local worker process does."""

    def __init__(self, init: Callable[..., Any], init_args: Sequence[Any]) -> None:
        init_worker(init, init_args)

    def run(self, work: Callable[[Any, Any], Any], index: int, item: Any) -> Outcome[Any]:
        return call(work, index, item)


def start_ray(workers: int, address: str | None = None) -> None:
    """Start a local Ray with ``workers`` CPUs in this process, or join the cluster at ``address``.

    :func:`run_ray` calls it unless Ray is initialized already; a caller that runs several maps may call it once
    and ``ray.shutdown()`` after the last.

    Args:
        workers: The CPUs of a local Ray.
        address: Address of the Ray cluster to join; None starts a local Ray.
    """
    ray = require("ray", "ray[default]", "--executor ray")
    ray.init(
        address=address,
        num_cpus=None if address else workers,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        # Ray starts its workers at niceness 15: on a busy machine they got a few percent of a core beside
        # the processes at 0 (a 10 s campaign took 200 s beside four busy loops). A local Ray's workers run
        # the cases as the local worker processes do, at this process's priority.
        _system_config=None if address else {"worker_niceness": 0},
    )


def run_ray(
    init: Callable[..., Any],
    init_args: Sequence[Any],
    work: Callable[[Any, Any], Any],
    items: Iterable[tuple[int, Any]],
    on_result: Callable[[Outcome[Any]], None],
    workers: int,
    address: str | None = None,
) -> None:
    """Map over ``items`` with ``workers`` Ray actors (a local Ray if ``address`` is None).

    An actor that dies is replaced, and its item runs once more before it is failed (as a local worker's).

    Args:
        init: Builds an actor's state, once per actor: ``init(*init_args)``; picklable.
        init_args: The arguments of ``init``.
        work: ``work(state, item)``, the result of one item; an exception is a failed :class:`Outcome`.
        items: ``(index, item)`` pairs, read one at a time as actors become free.
        on_result: Called in this process with each item's :class:`Outcome` as it finishes.
        workers: Ray actors (one CPU each); also the CPUs of a local Ray started here.
        address: Address of the Ray cluster to join; None starts a local Ray (shut down again at the end). Unused
            when Ray is already initialized in this process.
    """
    ray = require("ray", "ray[default]", "--executor ray")
    started_here = not ray.is_initialized()
    if started_here:
        start_ray(workers, address)
    try:
        _RayRun(ray, (init, init_args, work), workers).run(iter(items), on_result)
    finally:
        if started_here:
            ray.shutdown()


class _RayRun:
    """Ray actors, the item each runs, and the items whose actor died (to run again)."""

    def __init__(self, ray: Any, setup: tuple[Callable[..., Any], Sequence[Any], Any], size: int) -> None:
        self._ray = ray
        self._actor = ray.remote(num_cpus=1)(_RayWorker)
        self._init, self._init_args, self._work = setup
        self._free = [self._new() for _ in range(size)]
        self._running: dict[Any, tuple[Any, tuple[int, Any]]] = {}
        self._again: deque[tuple[int, Any]] = deque()
        self._ledger = DeathLedger()

    def _new(self) -> Any:
        return self._actor.remote(self._init, self._init_args)

    def run(self, items: Iterator[tuple[int, Any]], on_result: Callable[[Outcome[Any]], None]) -> None:
        more = True
        while True:
            while self._free and (self._again or more):
                job = self._again.popleft() if self._again else next(items, None)
                if job is None:
                    more = False
                    break
                worker = self._free.pop()
                self._running[worker.run.remote(self._work, *job)] = (worker, job)
            if not self._running:
                return
            self._collect(on_result)

    def _collect(self, on_result: Callable[[Outcome[Any]], None]) -> None:
        done, _ = self._ray.wait(list(self._running), num_returns=1)
        for ref in done:
            worker, job = self._running.pop(ref)
            try:
                outcome = self._ray.get(ref)
            except self._ray.exceptions.RayActorError as exc:
                self._free.append(self._new())
                outcome = self._ledger.died(job[0], f"died (Ray: {type(exc).__name__})")
                if outcome is None:
                    self._again.append(job)
                    continue
            else:
                self._free.append(worker)
            on_result(self._ledger.came_back(outcome))
