"""The topics one robot sample is published on, and joining them back into a sample by stamp.

A driver (or a proxy in front of one) answers every setpoint with one message on each of, all with the
setpoint's stamp:

- ``<prefix>/joint_states`` (sensor_msgs/JointState): measured joints;
- ``<prefix>/tip_pose`` (geometry_msgs/PoseStamped, base_link): actual tip, NaN where the robot cannot know it;
- ``<prefix>/marker`` (cosim_validation_interfaces/TrackedMarker, tracker frame): the tool's marker as an optical
  tracker saw it, ``seen = false`` when it did not or the robot has none.

One message per topic per sample, NaN where unknown, so that whoever joins them (a proxy, the monitor) never
waits for a message that will not come.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sensor_msgs.msg import JointState

from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import STATE, to_rclpy
from cosim_validation.robots.robot_backend import BackendSample

#: The per-sample topics of a robot, under its prefix.
SAMPLE_TOPICS = ("joint_states", "tip_pose", "marker")


class SamplePublisher:
    """Publishes a robot's samples on ``<prefix>/joint_states``, ``tip_pose`` and ``marker``.

    Args:
        node: The node that publishes.
        prefix: The robot's topic prefix (``/cosim/<robot>``).
        joint_names: Names of the J joints.
    """

    def __init__(self, node: Any, prefix: str, joint_names: tuple[str, ...]) -> None:
        self._names = joint_names
        self._joints = node.create_publisher(JointState, f"{prefix}/joint_states", to_rclpy(STATE))
        self._tip = node.create_publisher(convert.pose_stamped_msg_type(), f"{prefix}/tip_pose", to_rclpy(STATE))
        self._marker = node.create_publisher(convert.marker_msg_type(), f"{prefix}/marker", to_rclpy(STATE))

    def publish(self, stamp_ns: int, sample: BackendSample) -> None:
        """The three messages of ``sample``, stamped ``stamp_ns``.

        Args:
            stamp_ns: The stamp of all three messages [ns], the setpoint's.
            sample: The robot's answer: measured joints (J,) [rad] (or [m] for a prismatic joint), tip in base_link [m],
                marker in the tracker's frame [m].
        """
        joints = convert.JointSample(stamp_ns, self._names, sample.q_measured, np.zeros(0))
        self._joints.publish(convert.joint_state_to_msg(joints))
        tip = convert.StampedPose(stamp_ns, "base_link", sample.actual_tip_pos_m, sample.actual_tip_quat_wxyz)
        self._tip.publish(convert.pose_stamped_to_msg(tip))
        marker = convert.MarkerFrame(stamp_ns, sample.marker_pos_m, sample.marker_quat_wxyz, sample.marker_error_m)
        self._marker.publish(convert.marker_to_msg(marker))


class SampleJoiner:
    """Collects the three messages of each stamp; hands out the sample once all three are there.

    Args:
        joint_names: Names of the J joints (a joint state's joints are taken by name).
    """

    def __init__(self, joint_names: tuple[str, ...]) -> None:
        self._names = joint_names
        self._parts: dict[int, dict[str, Any]] = {}

    def clear(self) -> None:
        """Drop every incomplete sample (a new case)."""
        self._parts.clear()

    def joints(self, msg: Any) -> tuple[int, dict[str, Any]] | None:
        """A joint state; the stamp and the parts of its sample if that is now complete.

        Args:
            msg: The sensor_msgs/JointState; its joints are taken by name.
        """
        sample = convert.joint_state_from_msg(msg, self._names)
        return self._add(sample.t_ns, "q_measured", sample.position)

    def tip(self, msg: Any) -> tuple[int, dict[str, Any]] | None:
        """A tip pose; the stamp and the parts of its sample if that is now complete.

        Args:
            msg: The geometry_msgs/PoseStamped of the actual tip, in base_link [m].
        """
        pose = convert.pose_stamped_from_msg(msg)
        return self._add(pose.t_ns, "tip", (pose.position_m, pose.quat_wxyz))

    def marker(self, msg: Any) -> tuple[int, dict[str, Any]] | None:
        """A tracked marker; the stamp and the parts of its sample if that is now complete.

        Args:
            msg: The TrackedMarker, in the tracker's frame [m].
        """
        frame = convert.marker_from_msg(msg)
        return self._add(frame.t_ns, "marker", frame)

    def _add(self, stamp_ns: int, key: str, value: Any) -> tuple[int, dict[str, Any]] | None:
        parts = self._parts.setdefault(stamp_ns, {})
        parts[key] = value
        if len(parts) < len(SAMPLE_TOPICS):
            return None
        return stamp_ns, self._parts.pop(stamp_ns)


def joined_sample(t_s: float, q_setpoint: np.ndarray, parts: dict[str, Any]) -> BackendSample:
    """The :class:`BackendSample` of a complete set of parts from :class:`SampleJoiner`.

    Args:
        t_s: The sample's time in [s].
        q_setpoint: The setpoint the sample answers, shape (J,), in [rad] (or [m] for a prismatic joint).
        parts: The joiner's parts: measured joints, the tip in base_link and the marker in the tracker's frame.
    """
    position, quat = parts["tip"]
    marker: convert.MarkerFrame = parts["marker"]
    return BackendSample(
        t_s=t_s,
        q_setpoint=q_setpoint,
        q_measured=parts["q_measured"],
        actual_tip_pos_m=position,
        actual_tip_quat_wxyz=quat,
        marker_pos_m=marker.position_m,
        marker_quat_wxyz=marker.quat_wxyz,
        marker_error_m=marker.registration_error_m,
    )
