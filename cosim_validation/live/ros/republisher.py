"""Republishing bag messages on their topics (``cosim replay --publish``), for a live monitor node."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.live.ros.bag import BagMessage, project_typestore
from cosim_validation.live.ros.qos import CLOCK, LATCHED, RESULT, STATE, QosSpec, to_rclpy

_QOS_BY_TOPIC = {
    "/cosim/case_status": LATCHED,
    "/cosim/markers/anatomy": LATCHED,
    "/cosim/markers/targets": LATCHED,
    "/clock": CLOCK,
    "/cosim/verdicts": RESULT,
    "/cosim/kpis": RESULT,
    "/cosim/case_reports": RESULT,
    "/cosim/alerts": RESULT,
}


def qos_of(topic: str) -> QosSpec:
    """The session's QoS profile of ``topic`` (STATE for sample streams).

    Args:
        topic: The topic's full name.
    """
    return _QOS_BY_TOPIC.get(topic, STATE)


class Republisher:
    """An rclpy node that publishes serialized bag messages on their original topics.

    Every topic of the bag gets its publisher up front, so that subscribers can be discovered before the
    first message (:meth:`wait_for_subscribers`, like ``ros2 bag play``'s wait options); :meth:`close`
    waits until reliable subscribers acknowledged what was published.

    Args:
        topics: ``{topic: message type}`` of the bag (e.g. from :func:`cosim_validation.live.ros.bag.topics_of`).
    """

    def __init__(self, topics: Mapping[str, str]) -> None:
        import rclpy

        from cosim_validation.live.ros.message_types import message_class

        self._rclpy = rclpy
        rclpy.init()
        self._node = rclpy.create_node("replay")
        self._store = project_typestore()
        self._publishers: dict[str, Any] = {
            topic: self._node.create_publisher(message_class(msgtype), topic, to_rclpy(qos_of(topic)))
            for topic, msgtype in topics.items()
        }

    def wait_for_subscribers(self, topics: Iterable[str], timeout_s: float) -> list[str]:
        """Wait until each of ``topics`` has a matched subscriber, at most ``timeout_s`` [s].

        Args:
            topics: The topics to wait for; those without a publisher here are left out.
            timeout_s: How long to wait in all [s, wall].

        Returns:
            The topics still without a subscriber (empty when every one was matched in time).
        """
        deadline = time.monotonic() + timeout_s
        waiting = [t for t in topics if t in self._publishers]
        while True:
            with self._ended_says_so():
                waiting = [t for t in waiting if self._publishers[t].get_subscription_count() == 0]
            if not waiting or time.monotonic() >= deadline:
                return waiting
            time.sleep(0.02)

    @contextlib.contextmanager
    def _ended_says_so(self) -> Iterator[None]:
        """A call on a context that a SIGTERM (rclpy's handler) shut down is one error, not an RCLError traceback."""
        try:
            yield
        except Exception:
            if self._rclpy.ok():
                raise
            raise CosimError("replay: stopped: ROS 2 was shut down (the process was asked to end)") from None

    def publish(self, message: BagMessage) -> None:
        """Publish one bag message (CDR bytes, as recorded) on its topic.

        Args:
            message: The bag message; it is serialized again to CDR with its type.

        Raises:
            InputError: A topic that was not declared when the republisher was made.
        """
        publisher = self._publishers.get(message.topic)
        if publisher is None:
            raise InputError(f"replay: topic {message.topic!r} was not declared (known: {sorted(self._publishers)})")
        with self._ended_says_so():
            publisher.publish(bytes(self._store.serialize_cdr(message.message, message.msgtype)))

    def close(self, ack_timeout_s: float = 5.0) -> None:
        """Wait (at most ``ack_timeout_s`` [s] per topic) for reliable subscribers to acknowledge, then shut down.

        Args:
            ack_timeout_s: How long to wait for each topic's acknowledgements [s].
        """
        from rclpy.duration import Duration

        if self._rclpy.ok():  # a SIGTERM shut the context down: nothing can be acknowledged any more
            for publisher in self._publishers.values():
                publisher.wait_for_all_acked(Duration(nanoseconds=int(ack_timeout_s * 1e9)))
        self._node.destroy_node()
        self._rclpy.try_shutdown()
