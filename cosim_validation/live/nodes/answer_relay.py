"""What the drivers of a robot behind another stack (CRTK, ros2_control) share: the tracker's answers.

The tracker's answers (the needle tip, the optical marker) are joined with the arm's measured joints into one
sample per setpoint, published as the robot's samples.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

from cosim_validation.live.ros import convert
from cosim_validation.live.ros.crtk_answers import AnswerJoiner
from cosim_validation.robots.robot_backend import BackendSample


class SampleSink(Protocol):
    """Where a completed sample goes: a driver's sample topics, or a campaign robot's answers."""

    def publish(self, stamp_ns: int, sample: BackendSample) -> None:
        """Take the answer to the setpoint stamped ``stamp_ns``.

        Args:
            stamp_ns: The setpoint's stamp, in [ns].
            sample: The arm's answer to it.
        """
        ...


class AnswerRelay:
    """The tracker's subscription callbacks and the publishing of a completed sample, as a mixin.

    The object has ``_lock`` (held while joining), ``_joiner`` and ``_samples``.
    """

    _lock: threading.Condition
    _joiner: AnswerJoiner
    _samples: SampleSink

    def _on_tip(self, msg: Any) -> None:
        pose = convert.pose_stamped_from_msg(msg)
        with self._lock:
            self._publish(self._joiner.tip(pose.t_ns, pose.position_m, pose.quat_wxyz))

    def _on_marker(self, msg: Any) -> None:
        with self._lock:
            self._publish(self._joiner.marker(convert.marker_from_msg(msg)))

    def _publish(self, done: Any) -> None:
        """Publish the sample the joiner completed, if any (``(stamp_ns, sample)`` or None)."""
        if done is not None:
            stamp_ns, sample = done
            self._samples.publish(stamp_ns, sample)
