"""The local process pool: worker processes that each build their state once, and whose death costs one item.

:class:`concurrent.futures.ProcessPoolExecutor` breaks for good when one of its processes dies (SIGKILL, the
OOM killer): every pending item fails with ``BrokenProcessPool`` and the caller cannot tell which item the dead
process held. Here each worker has its own pipe and gets one item at a time, so the parent always knows what
a worker was running: a worker that dies is replaced by a fresh one and its item runs once more (see
:class:`~cosim_validation.runs.campaign.worker_items.DeathLedger`); the other workers never notice.

Ctrl-C (KeyboardInterrupt in the parent): no further item is handed out; the workers ignore SIGINT, so the
items already running finish and are handed to ``on_result`` before the KeyboardInterrupt is raised again (a
second Ctrl-C stops waiting and ends the workers). Any other exception in ``on_result`` ends the workers at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnContext, SpawnProcess
from typing import Any

from cosim_validation.common.abandoned_calls import end_process
from cosim_validation.runs.campaign.parent_watch import exit_with_parent
from cosim_validation.runs.campaign.worker_items import (
    DeathLedger,
    Outcome,
    WorkerSetupError,
    call,
    death_reason,
    init_worker,
)

Job = tuple[int, Any]
Setup = tuple[Callable[..., Any], Sequence[Any], Callable[[Any, Any], Any]]
_END = object()
#: How long a worker that was told to stop may take to exit before it is terminated [s].
_STOP_GRACE_S = 10.0


def _serve(conn: Connection, setup: Setup, parent_pid: int) -> None:
    """A worker process: build the state, say so (``None``), then answer each ``(index, item)`` until ``None``."""
    init, init_args, work = setup
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is for the parent, which decides what happens
    exit_with_parent(parent_pid)
    init_worker(init, init_args)
    conn.send(None)
    while True:
        try:
            job = conn.recv()
        except EOFError:
            job = None
        if job is None:
            conn.close()
            end_process(0)  # a controller's call left running here: no finalization under it
            return
        conn.send(call(work, *job))


class _Worker:
    """One worker process, its end of the pipe, and the item it runs (None: idle)."""

    def __init__(self, context: SpawnContext, setup: Setup) -> None:
        self.conn, child = context.Pipe(duplex=True)
        self.process: SpawnProcess = context.Process(target=_serve, args=(child, setup, os.getpid()))
        self.process.start()
        child.close()
        self.ready = False
        self.job: Job | None = None

    def give(self, job: Job) -> None:
        self.job = job
        self.conn.send(job)

    def stop(self, graceful: bool) -> None:
        """Ask the process to exit (or terminate it), wait for it, close the pipe."""
        if graceful and self.process.is_alive():
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.process.join(_STOP_GRACE_S)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(_STOP_GRACE_S)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


class WorkerPool:
    """``size`` worker processes (spawned: no inherited threads or open files, safe with numba and MuJoCo).

    Args:
        setup: ``(init, init_args, work)``: each worker calls ``init(*init_args)`` once, then ``work(state, item)``.
        size: Worker processes.
    """

    def __init__(self, setup: Setup, size: int) -> None:
        self._context = get_context("spawn")
        self._setup, self._size = setup, size
        self._ledger = DeathLedger()
        self._again: deque[Job] = deque()
        self._setup_deaths = 0
        self._more = True  # the items may hold more
        self._outcomes: list[Outcome[Any]] = []
        self._workers = [_Worker(self._context, setup) for _ in range(size)]

    def run(self, items: Iterator[Job], on_result: Callable[[Outcome[Any]], None]) -> None:
        """Run every item; hand each outcome to ``on_result`` as it comes (see the module's doc on Ctrl-C).

        Args:
            items: ``(index, item)`` pairs, read one at a time as workers become free.
            on_result: Called with each item's outcome, in index order of the outcomes at hand.

        Raises:
            WorkerSetupError: More worker processes died while building their state than the pool has workers.
        """
        while True:
            self._assign(items)
            _hand_over(self._outcomes, on_result)
            if not self._more and not self._again and not self._busy():
                return
            self._collect(retry=True)

    def finish(self, on_result: Callable[[Outcome[Any]], None]) -> None:
        """After Ctrl-C: hand out nothing more, wait for the running items and hand them over.

        A worker that dies now loses its item: a resume runs it.

        Args:
            on_result: Called with each outcome still to hand over, as in :meth:`run`.
        """
        _hand_over(self._outcomes, on_result)
        while self._busy():
            self._collect(retry=False)
            _hand_over(self._outcomes, on_result)

    def close(self, graceful: bool = True) -> None:
        """End every worker (``graceful``: let an idle one exit by itself first).

        Args:
            graceful: Ask each worker to exit and wait up to 10 s before terminating it; False terminates at once.
        """
        for worker in self._workers:
            worker.stop(graceful)

    def _busy(self) -> list[_Worker]:
        return [w for w in self._workers if w.job is not None]

    def _assign(self, items: Iterator[Job]) -> None:
        """Give an item to every ready, idle worker (items to run again first)."""
        for worker in self._workers:
            if worker.ready and worker.job is None:
                job = self._again.popleft() if self._again else (next(items, _END) if self._more else _END)
                if job is _END:
                    self._more = False
                    return
                worker.give(job)  # type: ignore[arg-type]

    def _collect(self, retry: bool) -> None:
        """Wait until a worker answers or dies; keep what came for :func:`_hand_over`."""
        waiting: dict[Any, _Worker] = {w.conn: w for w in self._workers}
        waiting |= {w.process.sentinel: w for w in self._workers}
        answered: set[int] = set()
        for ready in wait(list(waiting)):
            worker = waiting[ready]
            if id(worker) in answered:
                continue
            answered.add(id(worker))
            try:
                message = worker.conn.recv()
            except (EOFError, OSError):  # the pipe closed: the process is gone
                self._bury(worker, retry)
                continue
            if not worker.ready:
                worker.ready = True
            elif worker.job is not None:
                self._outcomes.append(self._ledger.came_back(message))
                worker.job = None

    def _bury(self, worker: _Worker, retry: bool) -> None:
        """A worker died: its item runs again (or is failed, the second time) and a fresh worker takes its place."""
        worker.process.join(_STOP_GRACE_S)
        reason = death_reason(worker.process.exitcode)
        worker.stop(graceful=False)
        if worker.job is not None and retry:
            failed = self._ledger.died(worker.job[0], reason)
            if failed is None:
                self._again.append(worker.job)
            else:
                self._outcomes.append(failed)
        elif not worker.ready:
            self._setup_deaths += 1
            if self._setup_deaths > self._size:
                raise WorkerSetupError(
                    f"{self._setup_deaths} worker processes died while building their world (the last {reason})"
                )
        index = self._workers.index(worker)
        if retry and (self._more or self._again):
            self._workers[index] = _Worker(self._context, self._setup)
        else:
            del self._workers[index]


def _hand_over(outcomes: list[Outcome[Any]], on_result: Callable[[Outcome[Any]], None]) -> None:
    """Hand the outcomes over in index order, each removed first (an interrupt never hands one over twice)."""
    outcomes.sort(key=lambda o: o.index)
    while outcomes:
        on_result(outcomes.pop(0))


def run_pool(setup: Setup, items: Iterator[Job], on_result: Callable[[Outcome[Any]], None], workers: int) -> None:
    """Run ``items`` on a :class:`WorkerPool` of ``workers`` processes, ending them however the run ends.

    Args:
        setup: ``(init, init_args, work)``: each worker calls ``init(*init_args)`` once, then ``work(state, item)``.
        items: ``(index, item)`` pairs, read one at a time as workers become free.
        on_result: Called in this process with each item's outcome.
        workers: Worker processes.
    """
    pool = WorkerPool(setup, workers)
    try:
        pool.run(items, on_result)
    except KeyboardInterrupt:
        try:
            pool.finish(on_result)
        except BaseException:
            pool.close(graceful=False)  # a second Ctrl-C: the running items are lost, nothing else
            raise
        pool.close()
        raise
    except BaseException:
        pool.close(graceful=False)
        raise
    pool.close()
