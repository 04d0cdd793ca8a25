"""The session's messages as dashboard events: one converter per topic, for live messages and bags alike.

Converters only read attributes, so rclpy messages and the objects rosbags decodes from a bag go through
the same code (as in :mod:`cosim_validation.live.ros.convert`). Extra alert/state topics (hazard alarms, a
supervisor state, ``/diagnostics``) need no code: any message with ``level``, ``code`` and ``message``
fields is an alert, one with a ``status`` list of named entries (DiagnosticArray) gives one state per
entry, and any other message gives one state, the value of its ``state``/``data``/``value``/... field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.live.dashboard.events import (
    AlertRaised,
    AnatomyMesh,
    AnatomyShown,
    CaseEnded,
    CaseReported,
    CaseStarted,
    DashboardEvent,
    StageChanged,
    StateReported,
    TipSample,
    VerdictRow,
)
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.qos import LATCHED, RESULT, STATE, QosSpec

Converter = Callable[[Any, int], list[DashboardEvent]]  # (message, receive time [ns]) -> events


class TopicSpec(NamedTuple):
    """How the dashboard listens to one topic."""

    topic: str
    msgtype: str  # pkg/msg/Name; "" for an extra topic (type found in the graph or the bag)
    qos: QosSpec
    convert: Converter


def _stamp(msg: Any, fallback_ns: int) -> int:
    header = getattr(msg, "header", None)
    t_ns = convert.time_from_msg(header.stamp) if header is not None else 0
    return t_ns or fallback_ns


def _int(value: Any) -> int:
    """An int of a message field (rclpy gives ``byte`` fields as bytes)."""
    return value[0] if isinstance(value, bytes | bytearray) else int(value)


def _point(p: Any) -> np.ndarray:
    return np.array([p.x, p.y, p.z], dtype=np.float64)


def case_status_events(msg: Any, t_ns: int) -> list[DashboardEvent]:
    """CaseStatus: STARTED, STAGE, or the end of a case.

    Args:
        msg: The CaseStatus message (an rclpy or rosbags message).
        t_ns: When it was received [ns]; the stamp of a case's start and end if the header has none.
    """
    case, event = msg.test_case, int(msg.event)
    if event == 0:
        return [
            CaseStarted(
                _stamp(msg, t_ns),
                str(case.test_id),
                _point(case.source),
                _point(case.target),
                int(msg.sample_count),
                float(msg.sampling_rate_hz),
                tuple(str(r) for r in msg.robots),
            )
        ]
    if event == 1:
        return [StageChanged(str(case.test_id), Stage(int(msg.stage)))]
    outcome = convert.CASE_OUTCOMES.get(event, "unknown")
    return [CaseEnded(str(case.test_id), outcome, str(msg.message), _stamp(msg, t_ns))]


def expected_events(msg: Any, t_ns: int) -> list[DashboardEvent]:
    """RobotState of the plan: the expected tip with its case and stage.

    Args:
        msg: The RobotState of the plan; its tip pose is in base_link [m].
        t_ns: When it was received [ns]; the sample's time if the header has no stamp.
    """
    position = _point(msg.tip_pose.position)
    return [TipSample(_stamp(msg, t_ns), RobotRole.EXPECTED, position, str(msg.test_id), Stage(int(msg.stage)))]


def tip_events(robot: RobotRole) -> Converter:
    """PoseStamped of ``robot``'s actual tip (simulator ground truth or tracker).

    Args:
        robot: The robot whose tip pose (base_link, [m]) the topic carries.
    """

    def events(msg: Any, t_ns: int) -> list[DashboardEvent]:
        return [TipSample(_stamp(msg, t_ns), robot, _point(msg.pose.position))]

    return events


def verdict_row(msg: Any) -> VerdictRow:
    """A Verdict message as a :class:`VerdictRow`.

    Args:
        msg: The Verdict message (an rclpy or rosbags message).
    """
    return VerdictRow(
        str(msg.test_id),
        str(msg.property),
        RobotRole(int(msg.robot)),
        int(msg.verdict),
        float(msg.margin),
        str(msg.unit),
        float(msg.first_violation_time_s),
        Stage(int(msg.first_violation_stage)),
        bool(msg.final),
        str(msg.reason),
    )


def verdict_events(msg: Any, t_ns: int) -> list[DashboardEvent]:
    """Verdict: a first violation (non-final) or a final verdict.

    Args:
        msg: The Verdict message (an rclpy or rosbags message).
        t_ns: When it was received [ns] (unused: a verdict row has no time).
    """
    return [verdict_row(msg)]


def report_events(msg: Any, t_ns: int) -> list[DashboardEvent]:
    """CaseReport: the case's final verdicts and samples per robot.

    Args:
        msg: The CaseReport message (an rclpy or rosbags message).
        t_ns: When it was received [ns] (unused).
    """
    samples = {RobotRole(int(r)): int(n) for r, n in zip(msg.robots, msg.samples, strict=True)}
    outcome = convert.CASE_OUTCOMES.get(int(msg.outcome), "unknown")
    rows = tuple(verdict_row(v) for v in msg.verdicts)
    return [CaseReported(str(msg.test_id), outcome, rows, samples, str(msg.message))]


def anatomy_events(msg: Any, t_ns: int) -> list[DashboardEvent]:
    """MarkerArray of the anatomy: one triangle mesh per model; the role from the marker's colour.

    Args:
        msg: The visualization_msgs/MarkerArray of TRIANGLE_LIST markers, vertices in base_link [m].
        t_ns: When it was received [ns] (unused).
    """
    meshes = []
    for marker in msg.markers:
        rgba = (marker.color.r, marker.color.g, marker.color.b, marker.color.a)
        role = min(
            convert.ROLE_COLORS_RGBA,
            key=lambda r: sum((a - b) ** 2 for a, b in zip(convert.ROLE_COLORS_RGBA[r], rgba, strict=True)),
        )
        meshes.append(AnatomyMesh(str(marker.ns), role, convert.mesh_from_marker(marker)))
    return [AnatomyShown(tuple(meshes))]


STATE_FIELDS = ("state", "data", "value", "mode", "name", "label")


def extra_events(topic: str) -> Converter:
    """Events of an extra alert/state topic of any type (see the module docstring).

    Args:
        topic: The topic's name, given with each of its alerts and states.
    """

    def events(msg: Any, t_ns: int) -> list[DashboardEvent]:
        t = _stamp(msg, t_ns)
        if all(hasattr(msg, f) for f in ("level", "code", "message")):
            robot = RobotRole(int(msg.robot)).label if hasattr(msg, "robot") else ""
            source = str(getattr(msg, "source", ""))
            return [AlertRaised(t, topic, min(_int(msg.level), 2), source, str(msg.code), str(msg.message), robot)]
        status = getattr(msg, "status", None)
        if status is not None and not isinstance(status, str | bytes) and all(hasattr(s, "name") for s in status):
            return [
                StateReported(t, topic, str(s.name), str(getattr(s, "message", "")), min(_int(s.level), 2))
                for s in status
            ]
        for name in STATE_FIELDS:
            if hasattr(msg, name):
                return [StateReported(t, topic, name, str(getattr(msg, name)))]
        return [StateReported(t, topic, "message", repr(msg)[:200])]

    return events


def alert_events(msg: Any, t_ns: int) -> list[DashboardEvent]:
    """Alert of the monitor, the drivers and the controller.

    Args:
        msg: The Alert message (an rclpy or rosbags message).
        t_ns: When it was received [ns]; the alert's time if the header has no stamp.
    """
    return extra_events("/cosim/alerts")(msg, t_ns)


INTERFACES = "cosim_validation_interfaces/msg"


def dashboard_topics(robots: Iterable[str] = ("virtual", "physical"), extra: Iterable[str] = ()) -> list[TopicSpec]:
    """The topics the dashboard listens to: the session's, each robot's tip, then the extra ones.

    Args:
        robots: Robots whose actual tip is shown (``virtual``, ``physical``).
        extra: Extra alert/state topics (``/diagnostics``); one that is already a session topic is not added twice.
    """
    specs = [
        TopicSpec("/cosim/case_status", f"{INTERFACES}/CaseStatus", LATCHED, case_status_events),
        TopicSpec("/cosim/expected", f"{INTERFACES}/RobotState", STATE, expected_events),
        TopicSpec("/cosim/verdicts", f"{INTERFACES}/Verdict", RESULT, verdict_events),
        TopicSpec("/cosim/case_reports", f"{INTERFACES}/CaseReport", RESULT, report_events),
        TopicSpec("/cosim/alerts", f"{INTERFACES}/Alert", RESULT, alert_events),
        TopicSpec("/cosim/markers/anatomy", "visualization_msgs/msg/MarkerArray", LATCHED, anatomy_events),
    ]
    for name in robots:
        role = RobotRole.parse(name)
        specs.append(
            TopicSpec(f"/cosim/{role.label}/tip_pose", "geometry_msgs/msg/PoseStamped", STATE, tip_events(role))
        )
    known = {s.topic for s in specs}
    specs += [TopicSpec(t, "", RESULT, extra_events(t)) for t in extra if t not in known]
    return specs


def bag_events(
    path: str | Path, robots: Iterable[str] = ("virtual", "physical"), extra: Iterable[str] = ()
) -> list[tuple[int, DashboardEvent]]:
    """Every dashboard event of a bag with its log time [ns], in log-time order.

    Args:
        path: ``session.mcap`` or a rosbag2 folder.
        robots: Robots whose actual tip is shown (``virtual``, ``physical``).
        extra: Extra alert/state topics read from the bag.

    Raises:
        InputError: The bag is missing or unreadable.
    """
    from cosim_validation.live.ros.bag import read_messages

    specs = {s.topic: s for s in dashboard_topics(robots, extra)}
    timeline: list[tuple[int, DashboardEvent]] = []
    for message in read_messages(path, specs):
        for event in specs[message.topic].convert(message.message, message.log_time_ns):
            timeline.append((message.log_time_ns, event))
    return timeline
