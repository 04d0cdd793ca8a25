"""The robots' reset over real DDS against a driver whose answers are lost the way discovery loses them.

Fast DDS can serve a request and drop its answer (the client's answer reader not matched yet): the controller's
reset then waited out its whole timeout and the case was lost ("virtual robot: reset not answered within 30.0 s",
seen in the fresh-clone CI). A lost answer is simulated here by a server whose ``send_response`` drops answers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from cosim_validation.assembly import RobotLostError
from cosim_validation.common.record import RobotRole
from cosim_validation.live.ros.service_call import SENDS, call_answered

pytestmark = pytest.mark.ros
NAMES = tuple(f"joint{i}" for i in range(1, 8))


class LossyDriver:
    """A reset service under ``/cosim/virtual/reset`` that serves every request and drops the first ``drop`` answers
    (and every answer within ``lossy_for_s`` of the first request: discovery matching the two sides late)."""

    def __init__(self, context: Any, drop: int, delay_first_s: float = 0.0, lossy_for_s: float = 0.0) -> None:
        from rclpy.node import Node

        from cosim_validation_interfaces.srv import ResetRobot

        self.requests: list[str] = []
        self.delay_first_s = delay_first_s
        self.node = Node("lossy_driver", context=context)
        service = self.node.create_service(ResetRobot, "/cosim/virtual/reset", self._serve)
        send = service.send_response
        left = [drop]
        first: list[float] = []

        def send_or_drop(response: Any, header: Any) -> None:
            first.append(time.monotonic())
            if left[0] > 0 or first[-1] - first[0] < lossy_for_s:
                left[0] -= 1
                return  # served, the answer lost
            send(response, header)

        service.send_response = send_or_drop  # type: ignore[method-assign]

    def _serve(self, request: Any, response: Any) -> Any:
        if not self.requests and self.delay_first_s > 0:
            threading.Event().wait(self.delay_first_s)  # a late answer, not a lost one
        self.requests.append(request.test_id)
        response.success, response.message = True, f"reset {len(self.requests)}"
        response.position = list(request.position)
        return response


@pytest.fixture
def graph(rclpy_context: Any) -> Iterator[tuple[Any, Any]]:
    """A client node and an executor spinning it (and whatever server is added) in a thread."""
    from rclpy.node import Node

    from cosim_validation.live.nodes.node_runtime import PoliteMultiThreadedExecutor

    client_node = Node("controller_probe", context=rclpy_context)
    executor = PoliteMultiThreadedExecutor(num_threads=2, context=rclpy_context)
    executor.add_node(client_node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        yield client_node, executor
    finally:
        executor.shutdown()
        client_node.destroy_node()


def _link(client_node: Any, timeout_s: float) -> Any:
    from rclpy.callback_groups import ReentrantCallbackGroup

    from cosim_validation.live.nodes.robot_link import RobotLink

    group = ReentrantCallbackGroup()
    return RobotLink(client_node, RobotRole.VIRTUAL, NAMES, group, reset_timeout_s=timeout_s, stale_timeout_s=5.0)


def test_a_reset_whose_answer_is_lost_is_asked_for_again(graph: tuple[Any, Any], rclpy_context: Any) -> None:
    client_node, executor = graph
    driver = LossyDriver(rclpy_context, drop=1)
    executor.add_node(driver.node)
    link = _link(client_node, timeout_s=6.0)
    link.reset("case-1", np.zeros(7), 42)  # raised RobotLostError after the whole timeout
    assert driver.requests == ["case-1", "case-1"]  # served twice: the same reset, the first answer lost
    driver.node.destroy_node()


def test_a_driver_that_never_answers_is_lost_after_the_timeout(graph: tuple[Any, Any], rclpy_context: Any) -> None:
    client_node, executor = graph
    driver = LossyDriver(rclpy_context, drop=100)
    executor.add_node(driver.node)
    link = _link(client_node, timeout_s=1.5)
    with pytest.raises(RobotLostError, match=r"virtual robot: reset not answered within 1\.5 s"):
        link.reset("case-1", np.zeros(7), 42)
    assert driver.requests == ["case-1"] * SENDS  # the request and its copies, each served, each answer lost
    driver.node.destroy_node()


def test_only_the_last_copys_answer_counts(graph: tuple[Any, Any], rclpy_context: Any) -> None:
    """A first answer that is late, not lost, comes while its copy is on its way: the copy's answer is the one
    returned, so that no copy is served after the call has returned (the driver serves in order)."""
    from cosim_validation_interfaces.srv import ResetRobot

    client_node, executor = graph
    driver = LossyDriver(rclpy_context, drop=0, delay_first_s=1.2)  # longer than a third of the 3 s allowed
    executor.add_node(driver.node)
    client = client_node.create_client(ResetRobot, "/cosim/virtual/reset")
    assert client.wait_for_service(timeout_sec=10.0)
    answer = call_answered(client, ResetRobot.Request(test_id="case-1", joint_names=list(NAMES)), 3.0)
    assert answer is not None
    assert answer.message == "reset 2"  # the copy's, sent after 1 s
    assert driver.requests == ["case-1", "case-1"]
    driver.node.destroy_node()


def test_the_first_reset_has_the_start_up_allowance_and_later_ones_the_timeout(
    graph: tuple[Any, Any], rclpy_context: Any
) -> None:
    """Every answer lost for longer than ``reset_timeout_s``: the session's first reset still succeeds within
    ``first_reset_timeout_s`` (a loaded graph still discovering itself); a later one is lost after the timeout."""
    from rclpy.callback_groups import ReentrantCallbackGroup

    from cosim_validation.live.nodes.robot_link import RobotLink

    client_node, executor = graph
    driver = LossyDriver(rclpy_context, drop=0, lossy_for_s=3.0)  # every answer of the first 3 s lost
    executor.add_node(driver.node)
    group = ReentrantCallbackGroup()
    link = RobotLink(client_node, RobotRole.VIRTUAL, NAMES, group, 1.5, 5.0, first_reset_timeout_s=8.0)
    link.reset("case-1", np.zeros(7), 42)  # raised "reset not answered within 1.5 s" with the timeout alone
    assert driver.requests == ["case-1"] * SENDS  # the last copy, sent after 3 s, answered
    driver.node.destroy_node()
    never = LossyDriver(rclpy_context, drop=100)
    executor.add_node(never.node)
    with pytest.raises(RobotLostError, match=r"virtual robot: reset not answered within 1\.5 s"):
        link.reset("case-2", np.zeros(7), 43)
    never.node.destroy_node()


@pytest.mark.parametrize(("drop", "answered"), [(0, 1), (1, 2), (2, 3), (100, None)])
def test_a_question_asked_from_the_nodes_thread_is_asked_again_when_its_answer_is_lost(
    drop: int, answered: int | None, graph: tuple[Any, Any], rclpy_context: Any
) -> None:
    """``call_spinning`` (a controller manager's ``list_controllers`` at a campaign's start, seen unanswered for its
    whole 10 s on a loaded machine, the manager's log saying "failed to send response"): a copy goes out when no
    answer has come within a third of the time; the first answer counts; none within the time is None."""
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from cosim_validation.live.ros.service_call import call_spinning
    from cosim_validation_interfaces.srv import ResetRobot

    _, executor = graph  # spins the server in its own thread
    driver = LossyDriver(rclpy_context, drop=drop)
    executor.add_node(driver.node)
    asker = Node("asker", context=rclpy_context)
    own = SingleThreadedExecutor(context=rclpy_context)  # spun by the call, in this thread
    own.add_node(asker)
    try:
        client = asker.create_client(ResetRobot, "/cosim/virtual/reset")
        answer = call_spinning(client, own, ResetRobot.Request(test_id="q"), time.monotonic() + 6.0)
        if answered is None:
            assert answer is None
            assert driver.requests == ["q"] * SENDS
        else:
            assert answer is not None
            assert answer.message == f"reset {answered}"  # the answer to the copy that was not lost
            assert driver.requests == ["q"] * answered
    finally:
        own.shutdown()
        asker.destroy_node()
        driver.node.destroy_node()
