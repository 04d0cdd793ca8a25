"""Republishing bag messages on their topics (``cosim replay --publish``), for a live monitor node."""

from __future__ import annotations

from typing import Any

from cosim_validation.ros.bag import BagMessage, project_typestore
from cosim_validation.ros.qos import CLOCK, LATCHED, RESULT, STATE, QosSpec, to_rclpy

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
    """The session's QoS profile of ``topic`` (STATE for sample streams)."""
    return _QOS_BY_TOPIC.get(topic, STATE)


class Republisher:
    """An rclpy node that publishes serialized bag messages on their original topics."""

    def __init__(self) -> None:
        import rclpy

        from cosim_validation.nodes.recorder import message_class

        self._rclpy = rclpy
        self._message_class = message_class
        rclpy.init()
        self._node = rclpy.create_node("replay")
        self._publishers: dict[str, Any] = {}
        self._store = project_typestore()

    def publish(self, message: BagMessage) -> None:
        """Publish one bag message (CDR bytes, as recorded)."""
        if message.topic not in self._publishers:
            cls = self._message_class(message.msgtype)
            self._publishers[message.topic] = self._node.create_publisher(
                cls, message.topic, to_rclpy(qos_of(message.topic))
            )
        self._publishers[message.topic].publish(bytes(self._store.serialize_cdr(message.message, message.msgtype)))

    def close(self) -> None:
        """Destroy the node and shut rclpy down."""
        self._node.destroy_node()
        self._rclpy.try_shutdown()
