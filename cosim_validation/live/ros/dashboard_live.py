"""Live subscriptions for the dashboard: every message becomes events in a thread-safe queue.

The callbacks run on whatever thread spins the node (rqt's spinner thread, or the standalone dashboard's
executor thread) and only convert and enqueue; the Qt thread drains the queue on a timer
(``dashboard.view.dashboard_widget``), so ROS never blocks the window and the window never blocks ROS.
Extra alert/state topics may be of any type the recorder knows (``ros/recorded_types.py``: the project's
interfaces and the standard packages): each is subscribed once it appears in the graph, with the type and the
durability its publishers offer. A topic offered with another type (any participant of the domain decides what
it publishes) is not imported: it is skipped, logged and listed in :attr:`LiveFeed.skipped`.
"""

from __future__ import annotations

import importlib
import queue
from collections.abc import Iterable
from typing import Any

from cosim_validation.live.ros.bag import project_typestore
from cosim_validation.live.ros.dashboard_events import TopicSpec, dashboard_topics
from cosim_validation.live.ros.qos import QosSpec, to_rclpy
from cosim_validation.live.ros.recorded_types import skip_reason

DISCOVERY_PERIOD_S = 0.5


def message_class(msgtype: str) -> Any:
    """The rclpy message class of ``pkg/msg/Name``.

    Args:
        msgtype: The type name, ``pkg/msg/Name``.
    """
    package, kind, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


class LiveFeed:
    """The dashboard's subscriptions on ``node``.

    Args:
        node: An rclpy node (rqt's ``context.node``, or the standalone dashboard's own node).
        events: Where events go (read by the Qt thread).
        robots: Robots whose actual tip is shown (``/cosim/<robot>/tip_pose``).
        extra: Extra alert/state topics (e.g. ``/diagnostics``, hazard alarms, a supervisor state).
    """

    def __init__(
        self,
        node: Any,
        events: queue.SimpleQueue[Any],
        robots: Iterable[str] = ("virtual", "physical"),
        extra: Iterable[str] = (),
    ) -> None:
        self._node, self._events = node, events
        self._subscriptions: dict[str, Any] = {}
        self._pending: list[TopicSpec] = []
        self.rejected = 0  # messages that could not be converted (logged)
        self.skipped: dict[str, str] = {}  # extra topics not subscribed, and why
        for spec in dashboard_topics(robots, extra):
            if spec.msgtype:
                self._subscribe(spec, spec.msgtype, spec.qos)
            else:
                self._pending.append(spec)
        self._timer = node.create_timer(DISCOVERY_PERIOD_S, self._discover) if self._pending else None
        self._discover()

    @property
    def topics(self) -> list[str]:
        """Topics subscribed so far."""
        return sorted(self._subscriptions)

    @property
    def waiting(self) -> list[str]:
        """Extra topics not seen in the graph yet."""
        return [s.topic for s in self._pending]

    def _subscribe(self, spec: TopicSpec, msgtype: str, qos: QosSpec) -> None:
        from rclpy.event_handler import SubscriptionEventCallbacks

        # No QoS event handlers: rclpy's executor does not guard them against a destruction from another thread
        # (InvalidHandle in the spinning thread, which ends rqt's spinner), and close() runs on the Qt thread while
        # rqt spins the node; the subscription itself is guarded. The publishers' offered QoS is matched anyway.
        self._subscriptions[spec.topic] = self._node.create_subscription(
            message_class(msgtype),
            spec.topic,
            lambda msg, s=spec: self._on_message(s, msg),
            to_rclpy(qos),
            event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False),
        )

    def _on_message(self, spec: TopicSpec, msg: Any) -> None:
        now_ns = self._node.get_clock().now().nanoseconds
        try:
            events = spec.convert(msg, now_ns)
        except (AttributeError, TypeError, ValueError) as exc:  # a malformed message never stops the feed
            self.rejected += 1
            self._node.get_logger().warning(f"dashboard: cannot show a message of {spec.topic}: {exc!r}")
            return
        for event in events:
            self._events.put(event)

    def _discover(self) -> None:
        if not self._pending:
            return
        types = dict(self._node.get_topic_names_and_types())
        for spec in list(self._pending):
            found = types.get(spec.topic, [])
            if not found:
                continue
            reason = skip_reason(found, project_typestore().types)
            if reason is not None:
                self.skipped[spec.topic] = reason
                self._pending.remove(spec)
                self._node.get_logger().warning(f"dashboard: not showing {spec.topic}: {reason}")
                continue
            infos = self._node.get_publishers_info_by_topic(spec.topic)
            self._subscribe(spec, found[0], _offered(infos, spec.qos))
            self._pending.remove(spec)

    def close(self) -> None:
        """Destroy the subscriptions and the discovery timer (the node stays: rqt owns it)."""
        if self._timer is not None:
            self._node.destroy_timer(self._timer)
            self._timer = None
        for subscription in self._subscriptions.values():
            self._node.destroy_subscription(subscription)
        self._subscriptions.clear()


def _offered(infos: list[Any], default: QosSpec) -> QosSpec:
    """A profile every publisher of the topic can match: best effort or transient local only if all offer it."""
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    if not infos:
        return default
    reliable = all(i.qos_profile.reliability == ReliabilityPolicy.RELIABLE for i in infos)
    latched = all(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos)
    return QosSpec(
        "reliable" if reliable else "best_effort", "transient_local" if latched else "volatile", default.depth
    )
