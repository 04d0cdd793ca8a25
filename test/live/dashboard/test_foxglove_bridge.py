"""`cosim session --foxglove PORT` serves the session over the Foxglove WebSocket protocol: a client that
connects while it runs gets every session topic (CDR, ros2msg schemas) and the bridge's channels, with the
values the bag holds."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.common.config import package_root
from cosim_validation.live.dashboard.foxglove_layout import SCENE_TOPIC, VERDICTS_TOPIC, deviation_topic, layout_json
from cosim_validation.live.ros.bag import project_typestore, topics_of
from cosim_validation.live.session.graph import load_graph
from test.live.dashboard.bag_truth import read_truth
from test.live.dashboard.conftest import CASES, RecordedSession

pytestmark = [pytest.mark.ros, pytest.mark.slow]
NS = 1_000_000_000


@pytest.fixture(scope="module")
def session(recorded_session: RecordedSession) -> RecordedSession:
    assert recorded_session.returncode == 0, recorded_session.output[-3000:]
    assert not recorded_session.capture.error, recorded_session.capture.error
    return recorded_session


def test_session_topics_are_forwarded_with_ros2msg_schemas(session: RecordedSession) -> None:
    capture = session.capture
    assert "foxglove: ws://127.0.0.1:" in session.output
    assert capture.server_info.get("name") == "cosim_validation"
    store = project_typestore()
    counts = {c["topic"]: len(capture.messages.get(i, [])) for i, c in capture.channels.items()}
    for topic, (msgtype, count) in topics_of(session.bag).items():
        if topic == "/clock":
            continue  # not forwarded (the bridge takes /cosim and /diagnostics)
        channel, messages = capture.by_topic(topic)
        assert (channel["encoding"], channel["schemaEncoding"], channel["schemaName"]) == ("cdr", "ros2msg", msgtype)
        assert channel["schema"] == store.generate_msgdef(msgtype, ros_version=2)[0]
        if count >= 100:  # sample streams: (nearly) every message of the bag reached the client
            assert 0.9 * count <= len(messages) <= count, (topic, len(messages), count, counts)


def test_case_reports_decode_to_the_bags(session: RecordedSession) -> None:
    store = project_typestore()
    _, messages = session.capture.by_topic("/cosim/case_reports")
    reports = [store.deserialize_cdr(payload, "cosim_validation_interfaces/msg/CaseReport") for _, payload in messages]
    truth = read_truth(session.bag)
    assert [r.test_id for r in reports] == list(truth)
    assert len(reports) == CASES
    for report in reports:
        want = truth[report.test_id].report
        assert [(v.property, v.robot, v.verdict) for v in report.verdicts] == [
            (v.property, v.robot, v.verdict) for v in want.verdicts
        ]


def test_deviation_channels_carry_the_bags_deviations(session: RecordedSession) -> None:
    truth = read_truth(session.bag)
    for robot in ("virtual", "physical"):
        channel, messages = session.capture.by_topic(deviation_topic(robot))
        assert channel["encoding"] == "json"
        assert channel["schemaEncoding"] == "jsonschema"
        assert "deviation_mm" in json.loads(channel["schema"])["properties"]
        assert len(messages) > 100
        for _, payload in messages:
            point = json.loads(payload)
            case = truth[point["test_id"]]
            stamp = point["stamp"]["sec"] * NS + point["stamp"]["nsec"]
            want_m = math.dist(case.actual[robot][stamp], case.expected[stamp][0])
            assert point["robot"] == robot
            assert point["deviation_mm"] == pytest.approx(want_m * 1000.0, rel=1e-9, abs=1e-12)


def test_verdict_table_channel_ends_with_each_report(session: RecordedSession) -> None:
    _, messages = session.capture.by_topic(VERDICTS_TOPIC)
    last = {}
    for _, payload in messages:
        table = json.loads(payload)
        last[table["test_id"]] = table
    labels = {0: "unknown", 1: "holds", 2: "violated"}
    robots = {0: "expected", 1: "virtual", 2: "physical"}
    for test_id, case in read_truth(session.bag).items():
        rows = {(r["property"], r["robot"], r["verdict"]) for r in last[test_id]["rows"]}
        assert rows == {(v.property, robots[int(v.robot)], labels[int(v.verdict)]) for v in case.report.verdicts}


def _decode_protobuf(channel: dict[str, Any], payload: bytes) -> Any:
    """Parse a protobuf message with the FileDescriptorSet the server advertised (base64, per the spec)."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    files = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(channel["schema"]))
    pool = descriptor_pool.DescriptorPool()
    for proto in files.file:
        pool.Add(proto)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(channel["schemaName"]))
    return cls.FromString(payload)


def test_scene_has_arms_paths_and_target(session: RecordedSession) -> None:
    channel, messages = session.capture.by_topic(SCENE_TOPIC)
    assert (channel["encoding"], channel["schemaName"], channel["schemaEncoding"]) == (
        "protobuf",
        "foxglove.SceneUpdate",
        "protobuf",
    )
    ids: set[str] = set()
    for _, payload in messages:
        update = _decode_protobuf(channel, payload)
        for entity in update.entities:
            ids.add(entity.id)
            assert entity.frame_id == "base_link"
            if entity.id.startswith("arm/"):
                assert len(entity.lines[0].points) == 7  # one point per joint origin of the ER3 Pro
            if entity.id == "anatomy/heart":  # the built-in heart: 2562 vertices, 5120 triangles
                (heart,) = entity.triangles
                assert (len(heart.points), len(heart.indices)) == (2562, 3 * 5120)
    assert {"arm/virtual", "arm/physical", "path/expected", "path/virtual", "path/physical", "target"} <= ids
    assert {"anatomy/left_lung", "anatomy/right_lung", "anatomy/heart", "anatomy/torso"} <= ids


def test_shipped_layout_is_made_from_the_graph() -> None:
    graph = load_graph(package_root() / "config" / "digital_twin.yaml")
    shipped = (package_root() / "config" / "foxglove_layout.json").read_text()
    assert shipped == layout_json(graph), "regenerate: cosim dashboard --foxglove-layout config/foxglove_layout.json"
    text = json.dumps(json.loads(shipped))
    for topic in (
        "/cosim/markers/anatomy",
        "/cosim/virtual/tip_pose",
        "/cosim/physical/tip_pose",
        "/cosim/expected.stage",
    ):
        assert topic in text
    for panel in ("ThreeDee", "Plot", "StateTransitions", "Table"):
        assert f'"panelType": "{panel}"' in text


def test_layout_follows_remappings_and_robots(tmp_path: Path) -> None:
    source = (package_root() / "config" / "digital_twin.yaml").read_text()
    source = source.replace("robots: [virtual, physical]}", "robots: [physical]}")
    source = source.replace(
        "    parameters: {config: config/needle_insertion.yaml, backend: emulated}\n",
        "    parameters: {config: config/needle_insertion.yaml, backend: emulated}\n"
        "    remappings: [{from: /cosim/physical/tip_pose, to: /arm/tracker}]\n",
    )
    path = tmp_path / "graph.yaml"
    path.write_text(source)
    text = layout_json(load_graph(path))
    assert "/arm/tracker" in text
    assert "/cosim/physical/tip_pose" not in text
    assert "/cosim/dashboard/physical/tip_deviation" in text
    assert "/cosim/dashboard/virtual/tip_deviation" not in text
