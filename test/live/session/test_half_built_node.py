"""A node whose constructor fails (a bad parameter) is one error line and exit 1, its half-built entities freed
while the ROS context is still valid, never by the garbage collector in the middle of the context's shutdown."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import os
    import weakref

    import rclpy
    from rclpy.node import Node
    from std_msgs.msg import String

    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.live.nodes import node_runtime

    class HalfBuilt(Node):
        def __init__(self):
            super().__init__("half_built")
            # a subscription and a timer on bound methods: the node is in a reference cycle, as every real node
            self.create_subscription(String, "/half_built_topic", self._heard, 10)
            self.create_timer(1.0, self._heard)
            weakref.finalize(self, os.write, 2, b"node freed\\n")
            raise CosimError("parameter style: expected one of: a, b; got 'c'")

        def _heard(self, *_):
            pass

    shutdown = rclpy.try_shutdown

    def announced(*args, **kwargs):
        os.write(2, b"context shutdown\\n")
        return shutdown(*args, **kwargs)

    rclpy.try_shutdown = announced
    node_runtime.run_node(HalfBuilt, [])
    """
)


def test_a_node_that_fails_to_build_is_freed_before_the_shutdown(node_env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=node_env)
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if " -> Function " not in line]  # Fast DDS's own log lines
    assert lines == [
        "error: parameter style: expected one of: a, b; got 'c'",
        "node freed",
        "context shutdown",
    ], done.stderr
