"""The controller's hazard outputs: detector alarms and [Li et al. 2016]'s feedback force, live.

The controller node's lockstep loop runs the hazard detector after every setpoint both robots answered
(:class:`~cosim_validation.hazards.hazard_watch.HazardWatch`); this publishes its verdicts, stamped with the
setpoint's stamp:

- ``/cosim/hazards/alarms`` (``cosim_validation_interfaces/Alert``): one message per sample at which a detector
  alarms, ``code`` ``hazard_alarm``, ``message`` ``DETECTORS: tip deviation D mm[, command progress P] at case
  time T s`` (DETECTORS among ``tip``, ``joint``, ``tracker``, ``progress``; ``hazard_watch.alarm_text``, the
  same text a campaign stores as the alarm's row in its ``events`` table);
- ``/cosim/feedback_wrench`` (``geometry_msgs/WrenchStamped``, frame ``base_link``): the feedback force of every
  sample (zero within the threshold) for a haptic device; no torque ([Li et al. 2016]'s force acts on the tip).

Both are recorded in the session's bag (the recorder takes every ``/cosim`` topic).
"""

from __future__ import annotations

from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node

from cosim_validation.common.record import RobotRole
from cosim_validation.hazards.hazard_watch import ALARM_KIND, HazardSample, alarm_text
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import RESULT, STATE, to_rclpy
from cosim_validation_interfaces.msg import Alert

ALARMS_TOPIC = "/cosim/hazards/alarms"
WRENCH_TOPIC = "/cosim/feedback_wrench"


class HazardFeedback:
    """Publishers of the detector's alarms and feedback wrench on ``node``."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._alarms = node.create_publisher(Alert, ALARMS_TOPIC, to_rclpy(RESULT))
        self._wrench = node.create_publisher(WrenchStamped, WRENCH_TOPIC, to_rclpy(STATE))

    def publish(self, sample: HazardSample) -> None:
        """One sample's wrench, and its alarm if a detector alarms.

        Args:
            sample: The watch's verdict on one answered setpoint: its stamp [ns], the detectors' alarm and the feedback
                force, shape (3,), in base_link, in [N].
        """
        stamp = convert.time_to_msg(sample.stamp_ns)
        wrench = WrenchStamped()
        wrench.header.stamp, wrench.header.frame_id = stamp, "base_link"
        wrench.wrench.force.x, wrench.wrench.force.y, wrench.wrench.force.z = (float(f) for f in sample.force_n)
        self._wrench.publish(wrench)
        if not sample.reported:
            return
        alert = Alert(
            test_id=sample.test_id,
            level=Alert.ERROR,
            robot=int(RobotRole.PHYSICAL),
            source=self._node.get_name(),
            code=ALARM_KIND,
            message=alarm_text(sample.alarm),
        )
        alert.header.stamp = stamp
        self._alarms.publish(alert)
