"""send_goal and wait_result over real DDS against an action server that loses requests the way discovery does."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from cosim_validation.live.ros.action_goal import ActionTimeoutError, send_goal, wait_result

pytestmark = pytest.mark.ros


class Harness:
    """A server node and a client node in one process; the server drops the first ``drop_goals`` goal
    requests and the first ``drop_results`` result requests without answering."""

    def __init__(
        self,
        context: Any,
        drop_goals: int,
        drop_results: int,
        answer: bool = True,
        delay_first_s: float = 0.0,
        run_s: float = 0.0,
        reject: bool = False,
    ) -> None:
        from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
        from rclpy.node import Node

        from cosim_validation.live.nodes.node_runtime import PoliteMultiThreadedExecutor
        from cosim_validation_interfaces.action import RunTestCase

        self.executed: list[str] = []  # goals run to the end
        self.canceled: list[str] = []  # goals canceled while running
        self.server_node = Node("goal_server", context=context)
        self.client_node = Node("goal_client", context=context)
        drops = {"goal": drop_goals, "result": drop_results}
        harness = self

        class LossyServer(ActionServer):  # overrides rclpy's request handlers to lose requests
            async def _execute_goal_request(self, request: Any) -> None:
                if drops["goal"] > 0 or not answer:
                    drops["goal"] -= 1
                    return  # as if the request never arrived
                if drops.setdefault("delayed", 0) == 0 and delay_first_s > 0:
                    drops["delayed"] = 1  # handle the first request only after delay_first_s
                    late = super()._execute_goal_request
                    threading.Timer(delay_first_s, lambda: harness.executor.create_task(late, request)).start()
                    return
                await super()._execute_goal_request(request)

            async def _execute_get_result_request(self, request: Any) -> None:
                if drops["result"] > 0:
                    drops["result"] -= 1
                    return
                await super()._execute_get_result_request(request)

        def execute(goal_handle: Any) -> Any:
            deadline = time.monotonic() + run_s
            while time.monotonic() < deadline and not goal_handle.is_cancel_requested:
                goal_handle.publish_feedback(RunTestCase.Feedback(stage=2))
                time.sleep(0.02)
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                harness.canceled.append(goal_handle.request.test_case.test_id)
                return RunTestCase.Result(outcome=RunTestCase.Result.ABORTED, message="canceled")
            harness.executed.append(goal_handle.request.test_case.test_id)
            goal_handle.succeed()
            return RunTestCase.Result(outcome=RunTestCase.Result.COMPLETED, message="ran")

        self.server = LossyServer(
            self.server_node,
            RunTestCase,
            "/cosim/run_test_case",
            execute,
            goal_callback=lambda _: GoalResponse.REJECT if reject else GoalResponse.ACCEPT,
            cancel_callback=lambda _: CancelResponse.ACCEPT,
        )
        self.client = ActionClient(self.client_node, RunTestCase, "/cosim/run_test_case")
        self.executor = PoliteMultiThreadedExecutor(num_threads=4, context=context)
        self.executor.add_node(self.server_node)
        self.executor.add_node(self.client_node)
        threading.Thread(target=self.executor.spin, daemon=True).start()
        assert self.client.wait_for_server(timeout_sec=30)
        self.goal = RunTestCase.Goal(controller="straight")
        self.goal.test_case.test_id = "lossy-1"

    def close(self) -> None:
        self.executor.shutdown()
        self.client.destroy()
        self.server.destroy()
        self.client_node.destroy_node()
        self.server_node.destroy_node()


@pytest.fixture
def make_harness(rclpy_context: Any) -> Iterator[Any]:
    made: list[Harness] = []

    def make(**kwargs: Any) -> Harness:
        made.append(Harness(rclpy_context, **kwargs))
        return made[-1]

    yield make
    for harness in made:
        harness.close()


def test_lost_goal_request_is_sent_again_and_runs_once(make_harness: Any) -> None:
    harness = make_harness(drop_goals=1, drop_results=0)
    warnings: list[str] = []
    handle = send_goal(harness.client, harness.goal, answer_timeout_s=1.0, attempts=3, warn=warnings.append)
    assert handle.accepted
    assert len(warnings) == 1
    assert "attempt 1 of 3" in warnings[0]
    response = wait_result(handle, timeout_s=30)
    assert response.result.message == "ran"
    time.sleep(0.5)
    assert harness.executed == ["lossy-1"]  # the dropped request never ran


def test_late_answer_of_an_abandoned_attempt_is_canceled(make_harness: Any) -> None:
    harness = make_harness(drop_goals=0, drop_results=0, delay_first_s=1.5, run_s=4.0)
    handle = send_goal(harness.client, harness.goal, answer_timeout_s=0.5, attempts=3)
    assert handle.accepted
    response = wait_result(handle, timeout_s=30)
    assert response.result.message == "ran"
    deadline = time.monotonic() + 10
    while not harness.canceled and time.monotonic() < deadline:
        time.sleep(0.05)
    # the first request was answered (accepted) after the retry had been chosen: it was canceled, not run
    assert harness.executed == ["lossy-1"]
    assert harness.canceled == ["lossy-1"]


def test_lost_result_request_is_asked_again(make_harness: Any) -> None:
    harness = make_harness(drop_goals=0, drop_results=1)
    handle = send_goal(harness.client, harness.goal, answer_timeout_s=5.0, attempts=1)
    started = time.monotonic()
    response = wait_result(handle, rerequest_after_s=1.0, timeout_s=30)
    assert response.result.message == "ran"
    assert time.monotonic() - started >= 1.0  # the first request went unanswered: the answer is the second's


def test_server_that_never_answers_is_a_clear_error(make_harness: Any) -> None:
    harness = make_harness(drop_goals=0, drop_results=0, answer=False)
    with pytest.raises(ActionTimeoutError, match=r"did not answer the goal in 2 attempts of 0\.5 s"):
        send_goal(harness.client, harness.goal, answer_timeout_s=0.5, attempts=2)
    assert harness.executed == []


def test_result_that_never_comes_is_a_clear_error(make_harness: Any) -> None:
    harness = make_harness(drop_goals=0, drop_results=1000)
    handle = send_goal(harness.client, harness.goal, answer_timeout_s=5.0, attempts=1)
    with pytest.raises(ActionTimeoutError, match=r"no result of goal [0-9a-f]{32} within 2 s"):
        wait_result(handle, rerequest_after_s=0.5, timeout_s=2.0)


class HandSpun:
    """A client node that the test spins itself, as the external-node adapter does (no executor thread)."""

    def __init__(self, context: Any) -> None:
        from rclpy.action import ActionClient
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.node import Node

        from cosim_validation_interfaces.action import RunTestCase

        self.node = Node("hand_spun_client", context=context)
        self.client = ActionClient(self.node, RunTestCase, "/cosim/run_test_case")
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        assert self.spin_until(self.client.server_is_ready, time.monotonic() + 30)

    def spin_until(self, done: Any, deadline: float) -> bool:
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return bool(done())
            self.executor.spin_once(timeout_sec=min(left, 0.05))
        return True

    def close(self) -> None:
        self.executor.shutdown()
        self.client.destroy()
        self.node.destroy_node()


@pytest.fixture
def hand_spun(rclpy_context: Any) -> Iterator[HandSpun]:
    made: list[HandSpun] = []
    yield lambda: made.append(HandSpun(rclpy_context)) or made[-1]  # type: ignore[misc]
    for client in made:
        client.close()


def test_a_client_spun_by_hand_keeps_one_goal_and_its_feedback(make_harness: Any, hand_spun: Any) -> None:
    from cosim_validation.live.external.goal_result import GoalResult

    harness = make_harness(drop_goals=0, drop_results=0, delay_first_s=1.5, run_s=4.0)
    client = hand_spun()
    feedback: list[bytes] = []
    handle = send_goal(
        client.client,
        harness.goal,
        answer_timeout_s=0.5,
        attempts=3,
        wait=client.spin_until,
        feedback_callback=lambda message: feedback.append(bytes(message.goal_id.uuid)),
    )
    assert handle.accepted
    result = GoalResult(handle)
    assert client.spin_until(result.done, time.monotonic() + 30)
    assert result.result().result.message == "ran"
    assert client.spin_until(lambda: bool(harness.canceled), time.monotonic() + 10)
    # the first request's late acceptance was canceled; its feedback, sent while it ran, never reached the caller
    assert harness.executed == ["lossy-1"]
    assert harness.canceled == ["lossy-1"]
    assert feedback
    assert set(feedback) == {bytes(handle.goal_id.uuid)}


def test_stop_ends_the_wait_for_an_answer(make_harness: Any, hand_spun: Any) -> None:
    harness = make_harness(drop_goals=0, drop_results=0, answer=False)
    client = hand_spun()
    stop_at = time.monotonic() + 0.5
    warnings: list[str] = []
    handle = send_goal(
        client.client,
        harness.goal,
        answer_timeout_s=20.0,
        attempts=3,
        warn=warnings.append,
        wait=client.spin_until,
        stop=lambda: time.monotonic() > stop_at,
    )
    assert handle is None
    # the first attempt ended on stop, not at its 20 s answer timeout: no attempt was given up on and sent again
    # (without stop: three unanswered attempts, two warnings, then ActionTimeoutError)
    assert warnings == []


def test_a_caller_that_gives_up_leaves_no_goal_running(make_harness: Any, hand_spun: Any) -> None:
    harness = make_harness(drop_goals=0, drop_results=0, delay_first_s=1.0, run_s=4.0)
    client = hand_spun()
    feedback: list[bytes] = []
    stop_at = time.monotonic() + 0.3
    handle = send_goal(
        client.client,
        harness.goal,
        answer_timeout_s=20.0,
        wait=client.spin_until,
        stop=lambda: time.monotonic() > stop_at,
        feedback_callback=lambda message: feedback.append(bytes(message.goal_id.uuid)),
    )
    assert handle is None
    # the server accepts the goal after the caller gave up: it is canceled, not run, and its feedback not passed on
    assert client.spin_until(lambda: bool(harness.canceled), time.monotonic() + 15)
    assert harness.canceled == ["lossy-1"]
    assert harness.executed == []
    assert feedback == []


def test_a_rejection_after_a_lost_answer_is_the_answer(make_harness: Any) -> None:
    harness = make_harness(drop_goals=1, drop_results=0, reject=True)
    handle = send_goal(harness.client, harness.goal, answer_timeout_s=1.0, attempts=3)
    assert handle is not None
    assert not handle.accepted  # the server refused the case: said so, not "did not answer"
