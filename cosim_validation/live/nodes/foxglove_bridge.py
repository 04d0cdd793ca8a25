"""foxglove_bridge: serves the session live over the Foxglove WebSocket protocol (foxglove-sdk).

- Every ``/cosim`` topic (and ``/diagnostics``) is forwarded as it is: serialized CDR with its ``ros2msg``
  definition as schema, so Foxglove decodes it as it decodes the recorded ``session.mcap``. A client that
  subscribes later gets the last messages of the latched topics (case status, markers) again.
- Derived channels from the dashboard's model (``cosim_validation.live.dashboard``): each robot's tip deviation
  from the plan (JSON, ``/cosim/dashboard/<robot>/tip_deviation``), the verdicts of the running case (JSON,
  ``/cosim/dashboard/verdicts``) and a scene (``foxglove.SceneUpdate``, ``/cosim/dashboard/scene``): the
  anatomy of the case-study configuration (sent once, and again to each client that subscribes), each robot's
  arm from its joint states, the tip paths of the running case and its target.

Started by ``cosim session --foxglove [PORT]``; the layout to open it with is ``config/foxglove_layout.json``.
"""

from __future__ import annotations

import threading
from typing import Any

import foxglove
import foxglove.channels
import numpy as np
from foxglove.websocket import ServerListener
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.serialization import deserialize_message

from cosim_validation.anatomy import load_anatomy
from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.live.dashboard import DashboardModel
from cosim_validation.live.dashboard.deviation_stream import DeviationStream
from cosim_validation.live.dashboard.events import CaseReported, TipSample, VerdictRow
from cosim_validation.live.dashboard.foxglove_json import (
    DEVIATION_SCHEMA,
    VERDICTS_SCHEMA,
    deviation_json,
    verdicts_json,
)
from cosim_validation.live.dashboard.foxglove_layout import SCENE_TOPIC, VERDICTS_TOPIC, deviation_topic
from cosim_validation.live.dashboard.foxglove_scene import anatomy_entities, arm_entity, case_entities, scene_update
from cosim_validation.live.nodes.node_runtime import declare_parameters, run_node
from cosim_validation.live.ros.bag import project_typestore
from cosim_validation.live.ros.dashboard_events import dashboard_topics
from cosim_validation.live.ros.dashboard_live import message_class
from cosim_validation.live.ros.qos import LATCHED, to_rclpy
from cosim_validation.live.ros.republisher import qos_of
from cosim_validation.live.session.node_parameters import FoxgloveBridgeParams
from cosim_validation.robots.model import RobotConfig

LATCHED_DEPTH = {"/cosim/case_status": 10}  # others: the last message


class _Subscriptions(ServerListener):
    """foxglove ServerListener: remembers (client, channel) subscriptions so latched messages can be re-sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.new: list[tuple[int, int]] = []

    def on_subscribe(self, client: Any, channel: Any) -> None:
        with self.lock:
            self.new.append((client.id, channel.id))


def _serve(host: str, port: int, context: Any, listener: ServerListener) -> Any:
    """Start the WebSocket server; a port in use (or a bad address) is a one-line error, not a traceback."""
    try:
        return foxglove.start_server(
            name="cosim_validation", host=host, port=port, context=context, server_listener=listener
        )
    except RuntimeError as exc:  # the SDK reports bind failures as RuntimeError("FoxgloveError: ...")
        raise InputError(f"foxglove_bridge: cannot serve on {host}:{port}: {exc}") from None


class FoxgloveBridge(Node):
    """Wiring: raw ROS messages -> Foxglove channels; dashboard model -> derived channels."""

    def __init__(self) -> None:
        super().__init__("foxglove_bridge")
        params = declare_parameters(self, FoxgloveBridgeParams)
        case_config = load_case_config(resolve_resource(params.config))
        self._kin = RobotConfig.from_config(case_config["robot"]).kinematics
        self._anatomy = scene_update(anatomy_entities(load_anatomy(case_config["anatomy"])))
        self._prefixes, self._extra = params.topic_prefixes, set(params.extra_topics)
        self._robots = [RobotRole.parse(r) for r in params.robots]
        self._fox = foxglove.Context()
        self._listener = _Subscriptions()
        self._server = _serve(params.host, params.port, self._fox, self._listener)
        self._specs = {s.topic: s for s in dashboard_topics([r.label for r in self._robots])}
        self._model, self._deviations = DashboardModel(), DeviationStream()
        self._fox_channels: dict[str, Any] = {}
        self._latched: dict[str, list[bytes]] = {}
        self._joints: dict[RobotRole, Any] = {}
        self._scene = foxglove.channels.SceneUpdateChannel(SCENE_TOPIC, context=self._fox)
        self._scene.log(self._anatomy)
        self._deviation_channels = {
            r: foxglove.Channel(deviation_topic(r.label), schema=DEVIATION_SCHEMA, context=self._fox)
            for r in self._robots
        }
        self._verdicts = foxglove.Channel(VERDICTS_TOPIC, schema=VERDICTS_SCHEMA, context=self._fox)
        self._forwarded: dict[str, Any] = {}
        steady = Clock(clock_type=ClockType.STEADY_TIME)  # sim time stands still between cases
        self.create_timer(params.discovery_period_s, self._discover, clock=steady)
        self.create_timer(params.scene_period_s, self._publish_scene, clock=steady)
        self._discover()
        self.get_logger().info(f"Foxglove WebSocket server on ws://{params.host}:{self._server.port}")

    def _wanted(self, topic: str) -> bool:
        return (topic in self._extra or topic.startswith(self._prefixes)) and "/_action/" not in topic

    def _discover(self) -> None:
        store = project_typestore()
        for topic, types in self.get_topic_names_and_types():
            if topic in self._forwarded or not self._wanted(topic) or len(types) != 1:
                continue
            if not self.get_publishers_info_by_topic(topic) or types[0] not in store.types:
                continue
            schema = foxglove.Schema(
                name=types[0], encoding="ros2msg", data=store.generate_msgdef(types[0], ros_version=2)[0].encode()
            )
            self._fox_channels[topic] = foxglove.Channel(
                topic, message_encoding="cdr", schema=schema, context=self._fox
            )
            cls = message_class(types[0])
            self._forwarded[topic] = self.create_subscription(
                cls, topic, lambda data, t=topic, c=cls: self._on_message(t, c, data), to_rclpy(qos_of(topic)), raw=True
            )
        self._resend_latched()

    def _on_message(self, topic: str, cls: Any, data: bytes) -> None:
        now_ns = self.get_clock().now().nanoseconds
        self._fox_channels[topic].log(bytes(data), log_time=now_ns)
        if qos_of(topic) == LATCHED:
            kept = self._latched.setdefault(topic, [])
            kept.append(bytes(data))
            del kept[: -LATCHED_DEPTH.get(topic, 1)]
        role = next((r for r in self._robots if topic == f"/cosim/{r.label}/joint_states"), None)
        if role is not None:
            self._joints[role] = deserialize_message(data, cls).position
        spec = self._specs.get(topic)
        if spec is not None:
            for event in spec.convert(deserialize_message(data, cls), now_ns):
                self._apply(event, now_ns)

    def _apply(self, event: Any, now_ns: int) -> None:
        self._model.apply(event)
        if isinstance(event, TipSample):
            for point in self._deviations.push(event):
                self._deviation_channels[point.robot].log(deviation_json(point), log_time=now_ns)
        elif isinstance(event, VerdictRow | CaseReported):
            case = self._model.current_case
            if case is not None:
                self._verdicts.log(verdicts_json(case), log_time=now_ns)

    def _resend_latched(self) -> None:
        with self._listener.lock:
            new, self._listener.new = self._listener.new, []
        for client_id, channel_id in new:
            if channel_id == self._scene.id():  # the anatomy was sent before this client subscribed
                self._scene.log(self._anatomy, sink_id=client_id)
            for topic, messages in self._latched.items():
                channel = self._fox_channels[topic]
                if channel.id() == channel_id:
                    for data in messages:
                        channel.log(data, sink_id=client_id)

    def _publish_scene(self) -> None:
        self._resend_latched()
        entities = []
        for robot, position in self._joints.items():
            q = [list(position)]
            origins = self._kin.record_arrays(q).joint_pos_m[0]
            mount, tip = self._kin.needle_segments(q)
            entities.append(arm_entity(robot, origins, np.stack([mount[0], tip[0]])))
        case = self._model.current_case
        if case is not None:
            entities += case_entities(case)
        if entities:
            self._scene.log(scene_update(entities), log_time=self.get_clock().now().nanoseconds)

    def close(self) -> None:
        """Stop the WebSocket server."""
        self._server.stop()


def main(args: list[str] | None = None) -> int:
    """Run the ``foxglove_bridge`` node until it ends or is interrupted; return its exit status.

    See :func:`~.node_runtime.run_node`. From a shell::

        ros2 run cosim_validation foxglove_bridge --ros-args -p port:=8765

    Args:
        args: The command line as ``rclpy.init`` takes it (``--ros-args -p name:=value`` ...); None: ``sys.argv``.
    """
    return run_node(FoxgloveBridge, args, threads=1)


if __name__ == "__main__":
    raise SystemExit(main())
