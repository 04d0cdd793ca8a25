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

:func:`send_goal` serves a client spun by another thread (it sleeps until an answer comes) and one its caller
spins by hand, as the external-node adapter does (the caller passes its spin loop as ``wait``).
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


Wait = Callable[[Callable[[], bool], float], bool]
"""Waits until a predicate holds or a monotonic deadline passes (spinning the client's node if the caller spins it
by hand); returns whether the predicate holds."""


def _threaded_wait(answered: threading.Event) -> Wait:
    """A :data:`Wait` for a client spun by another thread: sleeps until an answer arrives."""

    def wait(done: Callable[[], bool], deadline: float) -> bool:
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return done()
            answered.wait(min(remaining, 0.1))  # a stop() is noticed within 0.1 s
            answered.clear()
        return True

    return wait


def send_goal(
    client: Any,
    goal: Any,
    *,
    answer_timeout_s: float = 5.0,
    attempts: int = 4,
    warn: Callable[[str], None] | None = None,
    wait: Wait | None = None,
    stop: Callable[[], bool] | None = None,
    feedback_callback: Callable[[Any], None] | None = None,
) -> Any:
    """Send ``goal`` with ``client`` (an rclpy ActionClient) and return the goal handle.

    The handle is the server's answer (``handle.accepted`` says whether it took the goal). Without an answer
    within ``answer_timeout_s`` the goal is sent again, up to ``attempts`` times in all; ``warn`` is told
    each time.

    Args:
        client: The action client.
        goal: The goal message.
        answer_timeout_s: How long one attempt waits for the server's answer [s, wall].
        attempts: Attempts in all.
        warn: Told of each attempt that had no answer.
        wait: How to wait for an answer; default: sleep while another thread spins the client's node. A caller
            that spins the node itself passes its own spin loop.
        stop: Checked while waiting; when it holds, the wait ends and None is returned (the server's process
            died, say).
        feedback_callback: The goal's feedback, as ``send_goal_async`` takes it.

    Raises:
        ActionTimeoutError: No attempt was answered (an attempt that was answered with a rejection is returned, as
            the server's answer, once the others stay unanswered).
    """
    answered = threading.Event()
    wait = wait or _threaded_wait(answered)
    futures: list[Any] = []
    chosen: list[Any] = []
    lock = threading.Lock()

    given_up: list[bool] = []  # set when no answer is kept: an acceptance arriving later is canceled at once

    def on_answer(future: Any) -> None:
        with lock:
            late = bool(given_up) or (bool(chosen) and future is not chosen[0])
        handle = future.result()
        if late and handle is not None and handle.accepted:
            handle.cancel_goal_async()  # a retry is already running this goal, or the caller gave up
        answered.set()

    def give_up() -> None:
        """Keep no answer: cancel what was accepted already; :func:`on_answer` cancels what comes later."""
        with lock:
            given_up.append(True)
            accepted = [f.result() for f in futures if f.done() and f.result() is not None and f.result().accepted]
        for handle in accepted:
            handle.cancel_goal_async()

    def pick() -> Any:
        """The accepted answer (the others accepted are canceled), or the last rejection once all answered."""
        with lock:
            done = [f for f in futures if f.done()]
            accepted = [f for f in done if f.result() is not None and f.result().accepted]
            picked = accepted[0] if accepted else (done[-1] if len(done) == len(futures) else None)
            if picked is not None:
                chosen.append(picked)
        for other in accepted[1:]:
            other.result().cancel_goal_async()
        return picked

    def answers() -> int:
        with lock:
            return sum(f.done() for f in futures)

    def feedback(message: Any) -> None:  # a duplicate goal, canceled, may have sent some: only the chosen one's
        with lock:
            kept = bytes(chosen[0].result().goal_id.uuid) if chosen else None
            mine = not given_up and (kept is None or bytes(message.goal_id.uuid) == kept)
        if mine and feedback_callback is not None:
            feedback_callback(message)

    for attempt in range(1, attempts + 1):
        future = client.send_goal_async(goal, feedback_callback=None if feedback_callback is None else feedback)
        with lock:
            futures.append(future)
        future.add_done_callback(on_answer)
        deadline = time.monotonic() + answer_timeout_s
        while True:
            seen = answers()
            if stop is not None and stop():
                give_up()
                return None
            picked = pick()
            if picked is not None:
                return picked.result()

            # none answered yet, or one was rejected while an earlier one is still unanswered: wait for more
            def news(seen: int = seen) -> bool:
                return answers() > seen or (stop is not None and stop())

            if not wait(news, deadline):
                break
        if warn is not None and attempt < attempts:
            warn(f"no answer within {answer_timeout_s:g} s (attempt {attempt} of {attempts}); sending the goal again")
    with lock:
        rejected = [f.result() for f in futures if f.done() and f.result() is not None]
    give_up()
    if rejected:  # the server answered, and refused: its answer, not a timeout (an earlier attempt's answer was lost)
        return rejected[-1]
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

    Args:
        handle: The accepted goal's handle, as :func:`send_goal` returns it.
        rerequest_after_s: How long the goal's status may have been terminal without a result before the result is
            requested again [s, wall].
        poll_s: How often the status is looked at while waiting [s, wall].
        timeout_s: How long to wait for the result in all [s, wall]; None: no limit.
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
