"""recorder: writes every /cosim topic (and /diagnostics, /clock) into one rosbag2 MCAP file.

Messages are taken serialized (raw CDR) and written as they are, so recording costs no conversion.
Topics are found by name prefix as they appear; the bag is finished on shutdown (Ctrl-C, SIGTERM).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from cosim_validation.nodes.node_runtime import declare_parameters, progress_file, run_node
from cosim_validation.ros.bag import BagWriter
from cosim_validation.ros.message_types import message_class
from cosim_validation.ros.qos import QosSpec


class Recorder(Node):
    """Subscribes to matching topics (raw) and appends them to a BagWriter."""

    def __init__(self) -> None:
        super().__init__("recorder")
        params = declare_parameters(self, "recorder")
        self._prefixes = tuple(params["topic_prefixes"])
        self._extra = set(params["extra_topics"])
        self._writer = BagWriter(Path(params["output"]))
        self._recorded: dict[str, Any] = {}
        self._discover()
        # wall-clock timers: in sim time the clock stands still until the controller streams, and the controller
        # waits for the recorder's subscriptions before it streams
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(float(params["discovery_period_s"]), self._discover, clock=steady)
        # how many messages are written, for `cosim session` to let the recorder drain before stopping it
        self._progress = progress_file(self.get_name())
        self.create_timer(0.1, self._report_progress, clock=steady)
        self.get_logger().info(f"recording to {self._writer.path}")

    def _wanted(self, topic: str) -> bool:
        return topic in self._extra or any(topic.startswith(p) for p in self._prefixes)

    def _offered_qos(self, topic: str) -> QosSpec:
        infos = self.get_publishers_info_by_topic(topic)
        reliable = bool(infos) and all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
        latched = bool(infos) and all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos)
        return QosSpec("reliable" if reliable else "best_effort", "transient_local" if latched else "volatile", 1000)

    def _discover(self) -> None:
        for topic, types in self.get_topic_names_and_types():
            if topic in self._recorded or not self._wanted(topic) or len(types) != 1:
                continue
            if "/_action/" in topic or not self.get_publishers_info_by_topic(topic):
                continue
            qos = self._offered_qos(topic)
            self._writer.add_topic(topic, types[0], qos)
            profile = QoSProfile(
                depth=qos.depth,
                reliability=ReliabilityPolicy.RELIABLE
                if qos.reliability == "reliable"
                else ReliabilityPolicy.BEST_EFFORT,
                durability=DurabilityPolicy.TRANSIENT_LOCAL
                if qos.durability == "transient_local"
                else DurabilityPolicy.VOLATILE,
            )
            self._recorded[topic] = self.create_subscription(
                message_class(types[0]), topic, lambda data, t=topic: self._on_message(t, data), profile, raw=True
            )

    def _on_message(self, topic: str, data: bytes) -> None:
        self._writer.write(topic, self.get_clock().now().nanoseconds, data)

    def _report_progress(self) -> None:
        if self._progress is not None:
            self._progress.write_text(str(self._writer.count))

    def close(self) -> None:
        """Finish the bag file."""
        path = self._writer.close()
        self.get_logger().info(f"wrote {self._writer.count} messages to {path}")


def main(args: list[str] | None = None) -> int:
    """ros2 run cosim_validation recorder --ros-args -p output:=session.mcap"""
    return run_node(Recorder, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
