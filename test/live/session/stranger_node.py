"""A ROS 2 node that is not of any session: ``python -m test.live.session.stranger_node TOPIC``.

Publishes ``std_msgs/String`` on TOPIC every 50 ms in the domain of its environment, prints ``up`` once its
publisher exists, and ends quietly on SIGINT or SIGTERM (the tests' stranger on a session's domain).
"""

from __future__ import annotations

import contextlib
import signal
import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from std_msgs.msg import String


def main(argv: list[str]) -> int:
    """Publish on ``argv[0]`` until stopped."""
    rclpy.init()
    signal.signal(signal.SIGTERM, lambda *_: rclpy.try_shutdown())
    node = rclpy.create_node("stranger")
    publisher = node.create_publisher(String, argv[0], 10)
    node.create_timer(0.05, lambda: publisher.publish(String(data="not a robot state")))
    print("up", flush=True)
    with contextlib.suppress(KeyboardInterrupt, ExternalShutdownException):
        rclpy.spin(node)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
