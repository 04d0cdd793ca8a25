"""recorder: writes every /cosim topic (and /diagnostics, /clock) into one rosbag2 MCAP file.

Messages are taken serialized (raw CDR) and written as they are, so recording costs no conversion.
Topics are found by name prefix as they appear; only types the recorder knows are recorded
(:mod:`cosim_validation.live.ros.recorded_types`), the others are logged once and listed, with the reason, in
``<bag stem>.skipped.json`` beside the bag (``cosim session`` copies it into ``summary.json``). The bag is
finished on shutdown (Ctrl-C, SIGTERM).

A topic of the session's own offered with a type its nodes do not publish there (``std_msgs/String`` on
``/cosim/expected``) is a ROS 2 node that is not of the session on its domain: the topic is not recorded, the
publishers are listed in ``<bag stem>.foreign.json`` and the recorder ends with an error at its next discovery
round, which ends the session (``cosim session`` turns the list into its one error line).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from cosim_validation.common.exceptions import CosimError
from cosim_validation.live.nodes.node_runtime import declare_parameters, progress_file, run_node
from cosim_validation.live.ros.bag import BagWriter, project_typestore
from cosim_validation.live.ros.message_types import message_class
from cosim_validation.live.ros.qos import QosSpec
from cosim_validation.live.ros.recorded_types import (
    RECORDED_PACKAGES,
    foreign_file,
    foreign_types,
    own_type,
    skip_reason,
    skipped_file,
)
from cosim_validation.live.session.node_parameters import RecorderParams


def recorded_message_class(msgtype: str) -> Any:
    """The rclpy message class of ``pkg/msg/Name``, for a package of RECORDED_PACKAGES only.

    Args:
        msgtype: The type name, ``pkg/msg/Name``.
    """
    package, kind, _ = msgtype.split("/")
    if package not in RECORDED_PACKAGES or kind != "msg":
        raise ValueError(f"the recorder does not import {msgtype!r}")
    return message_class(msgtype)


class ForeignTopicError(CosimError):
    """A topic of the session's own is offered with a type that none of its nodes publishes there."""


class Recorder(Node):
    """Subscribes to matching topics (raw) and appends them to a BagWriter."""

    def __init__(self) -> None:
        super().__init__("recorder")
        params = declare_parameters(self, RecorderParams)
        self._prefixes = params.topic_prefixes
        self._extra = set(params.extra_topics)
        self._writer = BagWriter(Path(params.output))
        self._recorded: dict[str, Any] = {}
        self._skipped: dict[str, dict[str, str]] = {}  # topic -> {type, reason}
        self._foreign: dict[str, dict[str, Any]] = {}  # topic of ours -> {types, expected, publishers}
        self._unnamed_rounds: dict[str, int] = {}  # topic -> discovery rounds its foreign publisher had no name
        self._known = project_typestore().types
        self._discover()
        # wall-clock timers: in sim time the clock stands still until the controller streams, and the controller
        # waits for the recorder's subscriptions before it streams
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.create_timer(params.discovery_period_s, self._discover_or_stop, clock=steady)
        # how many messages are written, for `cosim session` to let the recorder drain before stopping it
        self._progress = progress_file(self.get_name())
        self._progress_rounds = 0
        self.create_timer(0.1, self._report_progress, clock=steady)
        self.get_logger().info(f"recording to {self._writer.path}")

    def _wanted(self, topic: str) -> bool:
        return topic in self._extra or any(topic.startswith(p) for p in self._prefixes)

    def _offered_qos(self, topic: str) -> QosSpec:
        infos = self.get_publishers_info_by_topic(topic)
        reliable = bool(infos) and all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
        latched = bool(infos) and all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos)
        return QosSpec("reliable" if reliable else "best_effort", "transient_local" if latched else "volatile", 1000)

    def _discover_or_stop(self) -> None:
        self._discover()
        if self._foreign:
            first = min(self._foreign)
            found = self._foreign[first]
            raise ForeignTopicError(
                f"{first} is published with type {', '.join(found['types'])} by "
                f"{', '.join(found['publishers']) or 'an unnamed participant'}, which is not a node of this session "
                f"(expected {found['expected']})"
            )

    def _discover(self) -> None:
        for topic, types in self.get_topic_names_and_types():
            if topic in self._foreign or not self._wanted(topic):
                continue
            if "/_action/" in topic or not self.get_publishers_info_by_topic(topic):
                continue
            self._check_foreign(topic, types)
            if topic in self._recorded or topic in self._skipped or topic in self._foreign:
                continue
            reason = skip_reason(types, self._known)
            if reason is not None:
                self._skipped[topic] = {"type": ", ".join(types), "reason": reason}
                self.get_logger().warning(f"not recording {topic}: {reason}")
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
                recorded_message_class(types[0]),
                topic,
                lambda data, t=topic: self._on_message(t, data),
                profile,
                raw=True,
            )

    def _check_foreign(self, topic: str, types: list[str]) -> None:
        """List ``topic`` as foreign if a type is offered on it that the session's nodes do not publish there.

        A topic already recorded is checked again at every round: a stranger may come after our own publisher.
        """
        foreign = foreign_types(topic, types)
        if not foreign:
            return
        infos = [i for i in self.get_publishers_info_by_topic(topic) if i.topic_type in foreign]
        if any(i.node_name == _UNKNOWN_NODE for i in infos) and self._unnamed_rounds.get(topic, 0) < _NAME_ROUNDS:
            # DDS announces an endpoint before its participant's node names: wait for them to name the stranger
            self._unnamed_rounds[topic] = self._unnamed_rounds.get(topic, 0) + 1
            return
        publishers = sorted({_node_name(i) for i in infos})
        expected = own_type(topic) or "one type from all publishers"
        self._foreign[topic] = {"types": foreign, "expected": expected, "publishers": publishers}
        self.get_logger().error(f"{topic}: type {', '.join(foreign)} from {', '.join(publishers)}; expected {expected}")
        if topic in self._recorded:  # stop writing what a stranger may be sending there too
            self.destroy_subscription(self._recorded.pop(topic))

    def _on_message(self, topic: str, data: bytes) -> None:
        self._writer.write(topic, self.get_clock().now().nanoseconds, data)

    def _report_progress(self) -> None:
        """Write ``"<messages written> <rounds of this timer>"`` to the progress file.

        It is written from the thread that takes the messages, so that ``cosim session`` tells a drained recorder
        (rounds go on, the count stands) from a starved one.
        """
        if self._progress is not None:
            self._progress_rounds += 1
            part = self._progress.with_suffix(".progress.part")
            part.write_text(f"{self._writer.count} {self._progress_rounds}")
            part.replace(self._progress)

    def close(self) -> None:
        """Finish the bag file and list the skipped topics beside it."""
        path = self._writer.close()
        skipped_file(path).write_text(json.dumps(self._skipped, indent=2, sort_keys=True) + "\n")
        if self._foreign:
            foreign_file(path).write_text(json.dumps(self._foreign, indent=2, sort_keys=True) + "\n")
        note = f"; skipped {len(self._skipped)} topics: {', '.join(sorted(self._skipped))}" if self._skipped else ""
        print(f"recorder: wrote {self._writer.count} messages to {path}{note}", flush=True)


_UNKNOWN_NODE = "_NODE_NAME_UNKNOWN_"  # what rmw reports for a node whose participant's names have not arrived
_NAME_ROUNDS = 10  # discovery rounds to wait for a foreign publisher's node name before reporting it unnamed


def _node_name(info: Any) -> str:
    if info.node_name == _UNKNOWN_NODE:
        return "an unnamed participant"
    return f"{info.node_namespace.rstrip('/')}/{info.node_name}"


def main(args: list[str] | None = None) -> int:
    """Run the ``recorder`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation recorder --ros-args -p output:=session.mcap

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(Recorder, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
