"""GoalResult over real DDS: a server that loses the answer to the first result request still gets its result read."""

from __future__ import annotations

import time
from typing import Any

import pytest

from cosim_validation.live.external.goal_result import GoalResult

pytestmark = pytest.mark.ros


def _server_losing_first_answers(node: Any, lost: int) -> Any:
    """A RunTestCase server that ends every goal at once as REFUSED and ignores its first ``lost`` result requests
    (what a response dropped on the wire looks like to the client)."""
    from rclpy.action import ActionServer

    from cosim_validation_interfaces.action import RunTestCase

    class Forgetful(ActionServer):  # type: ignore[type-arg]
        ignored = 0

        async def _execute_get_result_request(self, request: Any) -> None:
            if Forgetful.ignored < lost:
                Forgetful.ignored += 1
                return
            await super()._execute_get_result_request(request)

    def execute(goal: Any) -> Any:
        goal.abort()
        return RunTestCase.Result(outcome=RunTestCase.Result.REFUSED, message="refused at once")

    return Forgetful(node, RunTestCase, "/forgetful", execute)


@pytest.mark.parametrize("lost", [0, 2])
def test_a_lost_result_answer_is_asked_for_again(rclpy_context: Any, lost: int) -> None:
    from action_msgs.msg import GoalStatus
    from rclpy.action import ActionClient
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from cosim_validation_interfaces.action import RunTestCase

    node = Node("goal_result_test", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    try:
        _server_losing_first_answers(node, lost)
        client = ActionClient(node, RunTestCase, "/forgetful")
        deadline = time.monotonic() + 30
        while not client.server_is_ready() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        sent = client.send_goal_async(RunTestCase.Goal())
        while not sent.done() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        result = GoalResult(sent.result(), patience_s=0.2)
        while not result.done() and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.05)
        assert result.done(), f"no result; goal status {sent.result().status}, {result.requests} requests"
        answer = result.result()
        assert answer.status == GoalStatus.STATUS_ABORTED
        assert (answer.result.outcome, answer.result.message) == (RunTestCase.Result.REFUSED, "refused at once")
        assert result.requests == lost + 1  # asked once, then once per lost answer
    finally:
        executor.shutdown(timeout_sec=1.0)
        node.destroy_node()
