"""The live dashboard imports only message types it knows: an extra topic offered with a foreign type is skipped."""

from __future__ import annotations

import queue
import time
from typing import Any

import pytest

pytestmark = pytest.mark.ros


def test_an_extra_topic_of_a_foreign_type_is_skipped_not_imported(rclpy_context: Any) -> None:
    import rclpy
    from rcl_interfaces.msg import Log
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import String

    from cosim_validation.live.ros.dashboard_live import LiveFeed

    node = rclpy.create_node("dashboard_types_test", context=rclpy_context)
    stranger = rclpy.create_node("stranger", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    try:
        stranger.create_publisher(Log, "/cosim/stranger", 10)  # any participant of the domain may offer any type
        stranger.create_publisher(String, "/cosim/supervisor/state", 10)
        feed = LiveFeed(node, queue.SimpleQueue(), ("virtual",), ["/cosim/stranger", "/cosim/supervisor/state"])
        executor.add_node(node)
        deadline = time.monotonic() + 20
        while feed.waiting and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        assert feed.waiting == []
        assert list(feed.skipped) == ["/cosim/stranger"]
        assert "rcl_interfaces/msg/Log" in feed.skipped["/cosim/stranger"]
        assert "/cosim/supervisor/state" in feed.topics
        assert "/cosim/stranger" not in feed.topics
        feed.close()
    finally:
        executor.shutdown()
        stranger.destroy_node()
        node.destroy_node()


def test_closing_the_feed_from_another_thread_leaves_the_spinner_running(rclpy_context: Any) -> None:
    """rqt spins the plugin's node in its own thread while the plugin closes its feed on the Qt thread. rclpy's
    executor does not guard a subscription's QoS event handlers against a destruction from another thread (in a
    fresh-clone CI under load it raised InvalidHandle in the spinning thread, which ended it: the next plugin heard
    nothing). The feed's subscriptions carry no event handlers, so every entity the executor meets is guarded."""
    import threading

    import rclpy

    from cosim_validation.live.nodes.node_runtime import PoliteMultiThreadedExecutor
    from cosim_validation.live.ros.dashboard_live import LiveFeed

    node = rclpy.create_node("dashboard_close_test", context=rclpy_context)
    executor = PoliteMultiThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    died: list[BaseException] = []

    def spin() -> None:
        try:
            executor.spin()
        except BaseException as exc:  # noqa: BLE001 - what ends the spinner is the finding
            died.append(exc)

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        for _ in range(50):
            feed = LiveFeed(node, queue.SimpleQueue(), ("virtual", "physical"), ["/diagnostics"])
            assert all(not sub.event_handlers for sub in feed._subscriptions.values())
            feed.close()
        assert list(node.subscriptions) == []
        assert list(node.timers) == []
        assert thread.is_alive()
        assert not died
    finally:
        executor.shutdown()
        thread.join(timeout=5)
        node.destroy_node()
