"""``cosim replay --publish`` when ROS 2 is shut down under it (rclpy's SIGTERM handler does that)."""

from __future__ import annotations

import pytest

from cosim_validation.common.exceptions import CosimError
from cosim_validation.live.ros.republisher import Republisher


def test_a_shut_down_context_is_one_error_not_an_rcl_traceback() -> None:
    """It ended in ``RCLError: failed to get subscription count: publisher's context is invalid``."""
    import rclpy

    topic = "/republisher_test/joint_states"
    republisher = Republisher({topic: "sensor_msgs/msg/JointState"})
    try:
        assert republisher.wait_for_subscribers([topic], 0.0) == [topic]
        rclpy.shutdown()  # what rclpy's SIGTERM handler does
        with pytest.raises(CosimError, match=r"^replay: stopped: ROS 2 was shut down"):
            republisher.wait_for_subscribers([topic], 1.0)
    finally:
        republisher.close()  # no traceback either
    assert not rclpy.ok()
