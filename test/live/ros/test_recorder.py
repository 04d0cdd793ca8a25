"""The recorder node writes what is published on /cosim topics into an MCAP that rosbags and mcap read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mcap.reader import make_reader

from cosim_validation.live.ros.bag import read_messages, topics_of
from cosim_validation.live.ros.convert import JointSample, joint_state_from_msg, joint_state_to_msg
from cosim_validation.live.ros.qos import LATCHED, STATE, to_rclpy
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec
from test.live.ros.ros_harness import spin_until

pytestmark = pytest.mark.ros


def test_recorder_writes_published_messages(tmp_path: Path, rclpy_context: Any, node_env: dict[str, str]) -> None:
    from lifecycle_msgs.msg import State
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from cosim_validation_interfaces.msg import CaseStatus

    bag = tmp_path / "session.mcap"
    group = ProcessGroup(tmp_path, env=node_env)
    node = Node("publisher", context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    try:
        joints = node.create_publisher(JointState, "/cosim/virtual/joint_states", to_rclpy(STATE))
        status = node.create_publisher(CaseStatus, "/cosim/case_status", to_rclpy(LATCHED))
        ignored = node.create_publisher(JointState, "/other/joint_states", to_rclpy(STATE))
        # a type the recorder does not know, on a topic it would record: skipped and reported, never imported
        foreign = node.create_publisher(State, "/cosim/foreign_state", to_rclpy(STATE))
        group.start(ProcessSpec("recorder", "recorder", ("-p", f"output:={bag}", "-p", "discovery_period_s:=0.05")))
        group.wait_ready(["recorder"], timeout_s=60)
        matched = spin_until(
            node,
            executor,
            lambda: joints.get_subscription_count() > 0 and status.get_subscription_count() > 0,
            timeout_s=20,
        )
        assert matched, "the recorder never subscribed"
        foreign.publish(State(id=3, label="active"))
        names = tuple(f"joint{i}" for i in range(1, 8))
        sent = [JointSample(k * 100_000_000, names, np.full(7, 0.1 * k), np.full(7, 0.5)) for k in range(20)]
        for sample in sent:
            joints.publish(joint_state_to_msg(sample))
            ignored.publish(joint_state_to_msg(sample))
        status.publish(CaseStatus(event=CaseStatus.STARTED, controller="straight"))
        spin_until(node, executor, lambda: False, timeout_s=1.0)
        foreign_subscribers = foreign.get_subscription_count()
    finally:
        codes = group.stop()
        executor.shutdown()
        node.destroy_node()
    assert codes["recorder"] == 0, group.log_tail("recorder")
    topics = topics_of(bag)
    assert topics["/cosim/virtual/joint_states"] == ("sensor_msgs/msg/JointState", 20)
    assert topics["/cosim/case_status"] == ("cosim_validation_interfaces/msg/CaseStatus", 1)
    assert "/other/joint_states" not in topics
    assert "/cosim/foreign_state" not in topics
    assert foreign_subscribers == 0  # never subscribed
    skipped = json.loads((tmp_path / "session.skipped.json").read_text())
    assert skipped == {
        "/cosim/foreign_state": {
            "type": "lifecycle_msgs/msg/State",
            "reason": skipped["/cosim/foreign_state"]["reason"],
        }
    }
    assert "not of a package the recorder knows" in skipped["/cosim/foreign_state"]["reason"]
    assert "not recording /cosim/foreign_state" in group.log_tail("recorder", lines=200)
    got = [joint_state_from_msg(m.message) for m in read_messages(bag, ["/cosim/virtual/joint_states"])]
    assert [g.t_ns for g in got] == [s.t_ns for s in sent]
    np.testing.assert_array_equal(np.stack([g.position for g in got]), np.stack([s.position for s in sent]))
    with bag.open("rb") as f:  # the mcap library reads it too, with the schemas embedded
        summary = make_reader(f).get_summary()
    assert summary is not None
    schemas = {summary.schemas[c.schema_id].name for c in summary.channels.values()}
    assert {"sensor_msgs/msg/JointState", "cosim_validation_interfaces/msg/CaseStatus"} <= schemas


class _Discovery:
    """What the recorder's discovery sees of a stranger's endpoint: nameless at first, named from round ``named_at``."""

    def __init__(self, named_at: int) -> None:
        self.rounds, self.named_at = 0, named_at
        self._foreign: dict[str, Any] = {}
        self._recorded: dict[str, Any] = {}
        self._unnamed_rounds: dict[str, int] = {}
        self.logged: list[str] = []

    def get_publishers_info_by_topic(self, topic: str) -> list[Any]:
        from types import SimpleNamespace

        self.rounds += 1
        named = self.rounds >= self.named_at
        return [
            SimpleNamespace(
                node_name="stranger" if named else "_NODE_NAME_UNKNOWN_",
                node_namespace="/" if named else "_NODE_NAMESPACE_UNKNOWN_",
                topic_type="std_msgs/msg/String",
            )
        ]

    def get_logger(self) -> Any:
        from types import SimpleNamespace

        return SimpleNamespace(error=self.logged.append)


@pytest.mark.parametrize(("named_at", "expected"), [(3, ["/stranger"]), (100, ["an unnamed participant"])])
def test_a_foreign_publisher_is_named_once_discovery_names_it(named_at: int, expected: list[str]) -> None:
    """DDS announces an endpoint before its node's name: the recorder waits some rounds for the name, not forever."""
    from cosim_validation.live.nodes.recorder import Recorder

    seen = _Discovery(named_at)
    rounds = 0
    while "/cosim/expected" not in seen._foreign:
        Recorder._check_foreign(seen, "/cosim/expected", ["std_msgs/msg/String"])  # type: ignore[arg-type]
        rounds += 1
        assert rounds <= 11
    assert seen._foreign["/cosim/expected"]["publishers"] == expected
    assert rounds == min(named_at, 11)
    assert len(seen.logged) == 1
    assert expected[0] in seen.logged[0]
