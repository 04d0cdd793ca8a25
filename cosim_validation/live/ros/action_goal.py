"""Sending an action goal and getting its result so that a lost request or answer does not hang the client.

Right after an action client appears, discovery may have matched only some of its endpoints. A goal request
sent before the server's request reader has matched the client's writer is lost; and rmw_fastrtps sends a
service answer only if the server's answer writer matches the client's answer reader within 100 ms, else it
drops it ("client will not receive response"), after which rclpy's action server logs "Failed to send goal
response" and returns without executing the goal. Either way ``send_goal_async``'s future never completes
and a client waiting on it hangs; it happened to the first goal of a test on a loaded CI machine.

:func:`send_goal` therefore waits a bounded time for the answer and then sends the same goal again under a
new goal id (a goal whose answer was dropped never runs, so nothing runs twice). Should an earlier attempt's
answer still arrive, accepted, after a later one was chosen, that goal is canceled at once. :func:`wait_result`
asks for the result again when the goal's status (a topic) says it has finished but the result (a service
answer) has not come, since the result request can be lost the same way.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from action_msgs.msg import GoalStatus

from cosim_validation.common.exceptions import CosimError

TERMINAL = (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED)


class ActionTimeoutError(CosimError):
    """The action server did not answer a goal, or did not deliver a finished goal's result."""


def send_goal(
    client: Any,
    goal: Any,
    *,
    answer_timeout_s: float = 5.0,
    attempts: int = 4,
    warn: Callable[[str], None] | None = None,
) -> Any:
    """Send ``goal`` with ``client`` (an rclpy ActionClient spun elsewhere) and return the goal handle.

    The handle is the server's answer (``handle.accepted`` says whether it took the goal). Without an answer
    within ``answer_timeout_s`` the goal is sent again, up to ``attempts`` times in all; ``warn`` is told
    each time. Raises ActionTimeoutError when no attempt was answered.
    """
    answered = threading.Event()
    futures: list[Any] = []
    chosen: list[Any] = []
    lock = threading.Lock()

    def on_answer(future: Any) -> None:
        with lock:
            late = bool(chosen) and future is not chosen[0]
        handle = future.result()
        if late and handle is not None and handle.accepted:
            handle.cancel_goal_async()  # a retry is already running this case
        answered.set()

    for attempt in range(1, attempts + 1):
        future = client.send_goal_async(goal)
        futures.append(future)
        future.add_done_callback(on_answer)
        deadline = time.monotonic() + answer_timeout_s
        while True:
            with lock:
                done = [f for f in futures if f.done()]
                accepted = [f for f in done if f.result() is not None and f.result().accepted]
                pick = accepted[0] if accepted else (done[-1] if len(done) == len(futures) else None)
                if pick is not None:
                    chosen.append(pick)
            if pick is not None:
                for other in accepted[1:]:
                    other.result().cancel_goal_async()
                return pick.result()
            # an attempt was rejected while an earlier one is still unanswered: wait for that one
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            answered.wait(remaining)
            answered.clear()
        if warn is not None and attempt < attempts:
            warn(f"no answer within {answer_timeout_s:g} s (attempt {attempt} of {attempts}); sending the goal again")
    raise ActionTimeoutError(
        f"the action server did not answer the goal in {attempts} attempts of {answer_timeout_s:g} s each"
    )


def wait_result(
    handle: Any,
    *,
    rerequest_after_s: float = 5.0,
    poll_s: float = 0.25,
    timeout_s: float | None = None,
) -> Any:
    """The result response of an accepted goal (``.status``, ``.result``).

    Blocks until it arrives; if the goal's status has been terminal for ``rerequest_after_s`` without a
    result, the result is requested again. Raises ActionTimeoutError after ``timeout_s`` (None: no limit).
    """
    arrived = threading.Event()
    futures = [handle.get_result_async()]
    futures[0].add_done_callback(lambda _: arrived.set())
    start = time.monotonic()
    terminal_since: float | None = None
    while not arrived.wait(poll_s):
        now = time.monotonic()
        if timeout_s is not None and now - start > timeout_s:
            raise ActionTimeoutError(f"no result of goal {bytes(handle.goal_id.uuid).hex()} within {timeout_s:g} s")
        if handle.status in TERMINAL:
            terminal_since = terminal_since if terminal_since is not None else now
            if now - terminal_since > rerequest_after_s:
                again = handle.get_result_async()
                again.add_done_callback(lambda _: arrived.set())
                futures.append(again)
                terminal_since = now
    return next(f for f in futures if f.done()).result()
