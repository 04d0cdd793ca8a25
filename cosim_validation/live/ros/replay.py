"""Replaying a recorded session (rosbag2 MCAP) into the monitor, without ROS.

Messages are read in log-time order and fed, through the same conversions and the same
:class:`~cosim_validation.live.session.case_tracker.CaseTracker` as the live monitor node, so the verdicts equal
the ones the live monitor published (the bag holds those too, on ``/cosim/case_reports``; :func:`compare`
checks them). A case is concluded at the samples the live monitor concluded it with (each report says how
many per robot): a case the live monitor had to conclude at a timeout, because a robot stopped answering, is
judged on the same samples even if the robot's late answers were recorded afterwards. A bag recorded by
someone else, with standard ``sensor_msgs/JointState`` topics and no case status, is replayed as one case per
bag: name its topics with :class:`ReplayTopics`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cosim_validation.assembly.monitor_world import MonitorWorld
from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.live.ros import convert
from cosim_validation.live.ros.bag import BagMessage, read_messages, topics_of
from cosim_validation.live.session.case_tracker import CaseEnd, CaseInfo, CaseTracker
from cosim_validation.monitor.properties import Verdict

STATUS_TOPIC = "/cosim/case_status"
EXPECTED_TOPIC = "/cosim/expected"
REPORT_TOPIC = "/cosim/case_reports"


@dataclass(frozen=True)
class ReplayTopics:
    """Where a bag's streams are: per robot its joint-state topic and, if any, its tip-pose and marker topics."""

    joints: dict[RobotRole, str] = field(
        default_factory=lambda: {
            RobotRole.VIRTUAL: "/cosim/virtual/joint_states",
            RobotRole.PHYSICAL: "/cosim/physical/joint_states",
        }
    )
    tips: dict[RobotRole, str] = field(
        default_factory=lambda: {
            RobotRole.VIRTUAL: "/cosim/virtual/tip_pose",
            RobotRole.PHYSICAL: "/cosim/physical/tip_pose",
        }
    )
    markers: dict[RobotRole, str] = field(
        default_factory=lambda: {
            RobotRole.VIRTUAL: "/cosim/virtual/marker",
            RobotRole.PHYSICAL: "/cosim/physical/marker",
        }
    )


@dataclass
class ReplayResult:
    """Every case the replay concluded, and the live reports found in the bag."""

    cases: list[CaseEnd] = field(default_factory=list)
    live_reports: dict[str, Any] = field(default_factory=dict)  # test id -> CaseReport message
    messages: int = 0


def replay_bag(
    path: str | Path,
    world: MonitorWorld,
    topics: ReplayTopics | None = None,
    *,
    rate: float = 0.0,
    on_message: Callable[[BagMessage], None] | None = None,
    keep_records: bool = False,
) -> ReplayResult:
    """Feed a bag into the monitor, case by case.

    Args:
        path: The MCAP file (or rosbag2 folder).
        world: Properties, KPIs, nominal arm, forbidden regions, self distance (as the live monitor's).
        topics: Where the robots' streams are (default: the session's topics).
        rate: Replay speed relative to the recording (0: as fast as possible).
        on_message: Called with every message before it is fed (``--publish`` republishes it).
        keep_records: Rebuild each case's trajectory records.
    """
    topics = topics or ReplayTopics()
    available = topics_of(path)
    joints = {r: t for r, t in topics.joints.items() if t in available}
    tips = {r: t for r, t in topics.tips.items() if t in available}
    markers = {r: t for r, t in topics.markers.items() if t in available}  # bags recorded before markers: none
    if not joints:
        raise InputError(
            f"{path}: none of the joint-state topics {sorted(topics.joints.values())} is in the bag "
            f"(it has {sorted(available)})"
        )
    _check_types(path, available, joints, tips, markers)
    result = ReplayResult()
    tracker = CaseTracker(world, set(tips), result.cases.append, keep_records=keep_records, markers=frozenset(markers))
    by_topic = {t: r for r, t in joints.items()} | {t: r for r, t in tips.items()} | {t: r for r, t in markers.items()}
    if REPORT_TOPIC in available:  # what the live monitor concluded each case with (read ahead)
        result.live_reports = {str(m.message.test_id): m.message for m in read_messages(path, [REPORT_TOPIC])}
    with_status = STATUS_TOPIC in available
    if not with_status:  # someone else's bag: one case over the whole recording, no plan
        tracker = _standalone_tracker(world, set(tips), result, joints, keep_records, frozenset(markers))
    wanted = [STATUS_TOPIC, EXPECTED_TOPIC, REPORT_TOPIC, *by_topic]
    for message in _paced(read_messages(path, [t for t in wanted if t in available]), rate):
        result.messages += 1
        if on_message is not None:
            on_message(message)
        _feed(tracker, message, by_topic, joints, markers, result)
    tracker.conclude_pending()
    return result


#: The message type each stream of a replayed bag must have.
JOINT_STATE, TIP_POSE = "sensor_msgs/msg/JointState", "geometry_msgs/msg/PoseStamped"
TRACKED_MARKER = "cosim_validation_interfaces/msg/TrackedMarker"
_PROJECT_TYPES = {
    STATUS_TOPIC: "cosim_validation_interfaces/msg/CaseStatus",
    EXPECTED_TOPIC: "cosim_validation_interfaces/msg/RobotState",
    REPORT_TOPIC: "cosim_validation_interfaces/msg/CaseReport",
}


def _check_types(
    path: str | Path,
    available: dict[str, tuple[str, int]],
    joints: dict[RobotRole, str],
    tips: dict[RobotRole, str],
    markers: dict[RobotRole, str],
) -> None:
    """Every stream the replay reads has the type it decodes (a String on a joint-state topic was a traceback)."""
    wanted = dict.fromkeys(joints.values(), JOINT_STATE) | dict.fromkeys(tips.values(), TIP_POSE)
    wanted |= dict.fromkeys(markers.values(), TRACKED_MARKER)
    wanted |= {t: msgtype for t, msgtype in _PROJECT_TYPES.items() if t in available}
    for topic, msgtype in wanted.items():
        if available[topic][0] != msgtype:
            raise InputError(f"{path}: {topic}: type {available[topic][0]}, expected {msgtype}")


def _standalone_tracker(
    world: MonitorWorld,
    tips: set[RobotRole],
    result: ReplayResult,
    joints: dict[RobotRole, str],
    keep_records: bool,
    markers: frozenset[RobotRole],
) -> CaseTracker:
    tracker = CaseTracker(
        world, tips, result.cases.append, keep_records=keep_records, with_expected=False, markers=markers
    )
    tracker.start(CaseInfo("bag", None, tuple(joints), world.kinematics.needle_length_m, 0))
    return tracker


def _feed(
    tracker: CaseTracker,
    message: BagMessage,
    by_topic: dict[str, RobotRole],
    joints: dict[RobotRole, str],
    markers: dict[RobotRole, str],
    result: ReplayResult,
) -> list[Verdict]:
    msg = message.message
    if message.topic == STATUS_TOPIC:
        if msg.event == 0:  # STARTED
            live = result.live_reports.get(str(msg.test_case.test_id))
            caps = convert.case_report_caps(live) if live is not None else None
            return tracker.start(convert.case_info_from_status(msg), caps)
        elif int(msg.event) in convert.CASE_OUTCOMES:
            test_id = str(msg.test_case.test_id)
            live = result.live_reports.get(test_id)
            per_robot = convert.case_report_from_msg(live)[4] if live is not None else None
            # a case the live monitor concluded at its timeout concludes where its report is in the bag
            at_report = live is not None and convert.report_timed_out(live)
            outcome = convert.CASE_OUTCOMES[int(msg.event)]
            tracker.end(outcome, str(msg.message), convert.samples_streamed(msg), per_robot, at_report)
        return []
    if message.topic == REPORT_TOPIC:
        tracker.reported(str(msg.test_id))
        return []
    if message.topic == EXPECTED_TOPIC:
        state = convert.expected_state_from_msg(msg)
        stage, mode = convert.expected_labels(state)
        return tracker.expected(state.t_ns, stage, state.q, state.test_id, mode)
    role = by_topic[message.topic]
    if joints.get(role) == message.topic:
        sample = convert.joint_state_from_msg(msg, tuple(tracker.kinematics.joint_names))
        return tracker.joints(role, sample.t_ns, sample.position)
    if markers.get(role) == message.topic:
        frame = convert.marker_from_msg(msg)
        return tracker.marker(role, frame.t_ns, frame.position_m, frame.quat_wxyz, frame.registration_error_m)
    pose = convert.pose_stamped_from_msg(msg)
    return tracker.tip(role, pose.t_ns, pose.position_m, pose.quat_wxyz)


def _paced(messages: Iterator[BagMessage], rate: float) -> Iterator[BagMessage]:
    if rate <= 0:
        yield from messages
        return
    start_wall = time.monotonic()
    start_log: int | None = None
    for message in messages:
        start_log = message.log_time_ns if start_log is None else start_log
        delay = (message.log_time_ns - start_log) / 1e9 / rate - (time.monotonic() - start_wall)
        if delay > 0:
            time.sleep(delay)
        yield message


def compare(result: ReplayResult) -> list[str]:
    """Differences between the replayed verdicts and the live ones stored in the bag ([] if equal).

    Args:
        result: What :func:`replay_bag` gave: the replayed cases and the live reports read from the bag.
    """
    problems = []
    for end in result.cases:
        live = result.live_reports.get(end.info.test_id)
        if live is None and end is result.cases[-1]:
            continue  # the recording stopped before the monitor's report of its last case: see unreported()
        if live is None:
            problems.append(f"{end.info.test_id}: no live case report in the bag")
            continue
        live_verdicts = convert.case_report_from_msg(live)[2]
        if len(live_verdicts) != len(end.conclusion.verdicts):
            problems.append(
                f"{end.info.test_id}: {len(live_verdicts)} live verdicts, {len(end.conclusion.verdicts)} replayed"
            )
            continue
        for a, b in zip(live_verdicts, end.conclusion.verdicts, strict=True):
            if not a.same_outcome(b):
                problems.append(f"{end.info.test_id}: {b.property}@{b.robot.label}: {_difference(a, b)}")
    return problems


def unreported(result: ReplayResult) -> list[str]:
    """The test ids of cases :func:`compare` leaves out: the last case, when it has no live report.

    That happens when the recording stopped (a Ctrl-C, a node that died) before the monitor's report was recorded.

    Args:
        result: What :func:`replay_bag` gave.
    """
    if not result.cases:
        return []
    last = result.cases[-1].info.test_id
    return [] if last in result.live_reports else [last]


def not_compared_line(test_id: str) -> str:
    """How ``cosim replay`` and ``cosim session`` name a case :func:`unreported` left out of the comparison.

    Args:
        test_id: The case's test id.
    """
    return f"not compared: {test_id}, the last case: the recording stopped before the monitor's report of it"


def _difference(live: Verdict, replayed: Verdict) -> str:
    """What differs between two verdicts of the same property, field by field (live first)."""
    fields = {
        "status": (live.status.label, replayed.status.label),
        "margin": (live.margin, replayed.margin),
        "first violation at": (live.first_violation_time_s, replayed.first_violation_time_s),
        "in stage": (live.first_violation_stage.label, replayed.first_violation_stage.label),
    }
    differing = [
        f"{name} {a!r} live, {b!r} replayed"
        for name, (a, b) in fields.items()
        if not (a == b or (isinstance(a, float) and isinstance(b, float) and a != a and b != b))
    ]
    return "; ".join(differing) or "same fields, other property"


def _unshared_topic(node: ConfigNode, key: str, used: dict[str, str]) -> str:
    """The topic at ``node``, refused when another key of the section named it already (two robots, one stream)."""
    topic = node.to_str()
    if topic in used:
        raise node.error(f"{topic} is also topics.{used[topic]}; each robot and stream needs its own topic")
    used[topic] = key
    return topic


def topics_from_config(root: Any) -> ReplayTopics | None:
    """The ``topics`` section of a properties file, if any.

    In YAML::

        topics:
          virtual: {joint_states: /my_arm/joint_states, tip_pose: /tracker/tip}   # tip_pose optional
          physical: {joint_states: /real_arm/joint_states, marker: /tracker/marker}  # marker (TrackedMarker) optional

    Args:
        root: The properties file as read (a config node); its optional ``topics`` section is read.
    """
    node = root.get("topics")
    if node is None:
        return None
    joints: dict[RobotRole, str] = {}
    tips: dict[RobotRole, str] = {}
    markers: dict[RobotRole, str] = {}
    used: dict[str, str] = {}  # topic -> the key that named it first
    for name, robot in node.items():
        try:
            role = RobotRole.parse(name)
        except InputError as exc:
            raise robot.error(f"unknown robot {name!r}; expected virtual or physical") from exc
        if role is RobotRole.EXPECTED:
            raise robot.error("the expected trajectory comes from /cosim/expected; name virtual or physical robots")
        robot.reject_unknown(["joint_states", "tip_pose", "marker"])
        for key, into in (("joint_states", joints), ("tip_pose", tips), ("marker", markers)):
            if key == "joint_states" or robot.has(key):
                into[role] = _unshared_topic(robot[key], f"{name}.{key}", used)
    return ReplayTopics(joints, tips, markers)
