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
