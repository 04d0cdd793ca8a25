"""A service call that survives a lost answer.

Fast DDS sends a service's answer only once the server has matched the client's answer reader, and waits for that at
most about 100 ms: a call made right after ``wait_for_service`` (the client's request reader is matched, its answer
reader not yet) can be served and its answer dropped (docs/EXTERNAL_NODES.md, "The contract"). The robots' reset is
such a call, made at the start of every case. Here the same request is sent again when no answer has come within a
third of the time allowed, and only the answer to the request sent last counts: a server that serves its requests
in order has served the earlier copies by then, and serving one of these requests twice leaves what serving it once
leaves (a reset to one pose with one seed).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from rclpy.client import Client
from rclpy.task import Future

#: How many times a request is sent at most within its time (the first and two copies)
SENDS = 3


def _setter(event: threading.Event) -> Any:
    def done(_: Future[Any]) -> None:
        event.set()

    return done


def call_answered(client: Client[Any, Any], request: Any, timeout_s: float) -> Any | None:
    """The answer to ``request`` within ``timeout_s`` (wall time), sent again when its answer seems lost.

    The node of ``client`` must be spun by an executor in another thread (as for ``Client.call``).

    Args:
        client: A client whose service is available (``wait_for_service`` returned True).
        request: The request; the same one is sent each time.
        timeout_s: Time allowed for an answer, in [s]; a copy is sent every ``timeout_s / SENDS``.

    Returns:
        The answer to the copy sent last, or None when none came within ``timeout_s``.
    """
    deadline = time.monotonic() + timeout_s
    sent: list[Future[Any]] = []
    try:
        for _ in range(SENDS):
            answered = threading.Event()
            future = client.call_async(request)
            future.add_done_callback(_setter(answered))
            sent.append(future)
            wait_s = min(timeout_s / SENDS, deadline - time.monotonic())
            if answered.wait(max(wait_s, 0.0)) and not future.cancelled():
                return future.result()
        return None
    finally:
        for future in sent:  # the copies no answer is awaited for any more
            if not future.done():
                future.cancel()
            client.remove_pending_request(future)


def spin_until(executor: Any, condition: Callable[[], bool], deadline: float) -> bool:
    """Spin ``executor`` in this thread until ``condition()`` holds or the monotonic ``deadline`` passes.

    Args:
        executor: The executor of the node whose callbacks the condition waits for.
        condition: What to wait for.
        deadline: ``time.monotonic()`` at which to give up [s].

    Returns:
        Whether the condition holds.
    """
    while not condition():
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        executor.spin_once(timeout_sec=min(left, 0.05))
    return True


def call_spinning(client: Client[Any, Any], executor: Any, request: Any, deadline: float) -> Any | None:
    """The answer to ``request``, spinning ``executor`` in this thread; None if none came by ``deadline``.

    None also when the service is not there by then. For questions asked from the thread that owns the node (a
    controller manager's ``list_controllers``, ``cosim doctor``'s probes, move_group's parameters): a request that
    serving twice answers alike. Its answer can be lost as :func:`call_answered`'s can (a loaded machine, seen with a
    controller manager: "failed to send response (timeout)" in its log, the question unanswered for the whole time),
    so a copy is sent when no answer has come within a third of the time left after the service appeared, and the
    first answer to any copy counts; unanswered copies are dropped.

    Args:
        client: The service client, of a node ``executor`` spins.
        executor: The node's executor, not spun by another thread.
        request: The request, a question (serving it twice answers alike).
        deadline: ``time.monotonic()`` at which to give up [s].
    """
    if not spin_until(executor, client.service_is_ready, deadline):
        return None
    step_s = (deadline - time.monotonic()) / SENDS
    sent: list[Future[Any]] = []
    try:
        for n in range(SENDS):
            sent.append(client.call_async(request))
            until = deadline if n == SENDS - 1 else min(deadline, time.monotonic() + step_s)
            if spin_until(executor, lambda: any(f.done() for f in sent), until):
                return next(f for f in sent if f.done()).result()
        return None
    finally:
        for future in sent:
            if not future.done():
                future.cancel()
            client.remove_pending_request(future)
