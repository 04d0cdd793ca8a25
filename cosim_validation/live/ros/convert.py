"""Every conversion between ROS messages and the core's arrays, one function pair each.

The ``*_to_msg`` functions build rclpy messages (message packages are imported lazily, on first use).
The ``*_from_msg`` functions only read attributes, so they accept rclpy messages and the message objects
that rosbags deserializes from a bag alike: the live monitor and ``cosim replay`` share them.
Units are SI; poses are in ``base_link``; quaternions are (w, x, y, z) in the core and (x, y, z, w) in
geometry_msgs/Quaternion.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import Stage, SupervisorMode

NS_PER_S = 1_000_000_000


# ---------------------------------------------------------------------------- time
def time_to_msg(t_ns: int) -> Any:
    """builtin_interfaces/Time of ``t_ns`` nanoseconds (>= 0).

    Args:
        t_ns: The time in [ns], >= 0.
    """
    from builtin_interfaces.msg import Time

    if t_ns < 0:
        raise InputError(f"a ROS time cannot be negative, got {t_ns} ns")
    return Time(sec=int(t_ns // NS_PER_S), nanosec=int(t_ns % NS_PER_S))


def time_from_msg(stamp: Any) -> int:
    """Nanoseconds of a builtin_interfaces/Time (or the ``header.stamp`` of a message).

    Args:
        stamp: The builtin_interfaces/Time (``.sec``, ``.nanosec``).
    """
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def seconds_to_ns(t_s: float) -> int:
    """Seconds to integer nanoseconds, rounded (sample times at 10 Hz stay exact).

    Args:
        t_s: The time in [s].
    """
    return round(float(t_s) * NS_PER_S)


# ---------------------------------------------------------------------------- poses
def pose_to_msg(position_m: np.ndarray, quat_wxyz: np.ndarray) -> Any:
    """geometry_msgs/Pose from a position (3,) [m] and a unit quaternion (4,) (w, x, y, z).

    Args:
        position_m: The position in the pose's frame, shape (3,), in [m].
        quat_wxyz: The orientation in the pose's frame, a unit quaternion (w, x, y, z), shape (4,).
    """
    from geometry_msgs.msg import Point, Pose, Quaternion

    p = np.asarray(position_m, dtype=np.float64)
    q = np.asarray(quat_wxyz, dtype=np.float64)
    return Pose(
        position=Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
        orientation=Quaternion(w=float(q[0]), x=float(q[1]), y=float(q[2]), z=float(q[3])),
    )


def pose_from_msg(pose: Any) -> tuple[np.ndarray, np.ndarray]:
    """(position (3,) [m], quaternion (4,) (w, x, y, z)) of a geometry_msgs/Pose.

    Args:
        pose: The geometry_msgs/Pose (an rclpy or rosbags message).

    Returns:
        The position, shape (3,), float64, in [m], and the orientation as a quaternion (w, x, y, z), shape (4,),
        float64, both in the pose's frame.
    """
    p, q = pose.position, pose.orientation
    return np.array([p.x, p.y, p.z], dtype=np.float64), np.array([q.w, q.x, q.y, q.z], dtype=np.float64)


class StampedPose(NamedTuple):
    """A pose at a time: what a tracker or a simulator's ground truth reports."""

    t_ns: int
    frame_id: str
    position_m: np.ndarray  # (3,)
    quat_wxyz: np.ndarray  # (4,)


def pose_stamped_msg_type() -> Any:
    """The geometry_msgs/PoseStamped class (for publishers)."""
    from geometry_msgs.msg import PoseStamped

    return PoseStamped


def pose_stamped_to_msg(pose: StampedPose) -> Any:
    """geometry_msgs/PoseStamped of a :class:`StampedPose`.

    Args:
        pose: The pose, its stamp [ns] and frame; position in [m], quaternion (w, x, y, z).
    """
    from geometry_msgs.msg import PoseStamped
    from std_msgs.msg import Header

    return PoseStamped(
        header=Header(stamp=time_to_msg(pose.t_ns), frame_id=pose.frame_id),
        pose=pose_to_msg(pose.position_m, pose.quat_wxyz),
    )


def pose_stamped_from_msg(msg: Any) -> StampedPose:
    """:class:`StampedPose` of a geometry_msgs/PoseStamped.

    Args:
        msg: The geometry_msgs/PoseStamped (an rclpy or rosbags message).
    """
    position, quat = pose_from_msg(msg.pose)
    return StampedPose(time_from_msg(msg.header.stamp), str(msg.header.frame_id), position, quat)


# ---------------------------------------------------------------------------- tracked markers
#: The frame of every marker pose (an optical tracker's, not base_link).
TRACKER_FRAME = "tracker"


class MarkerFrame(NamedTuple):
    """One frame of an optical tracker for a tool's marker (NaN pose and error when not seen)."""

    t_ns: int
    position_m: np.ndarray  # (3,) in the tracker's frame
    quat_wxyz: np.ndarray  # (4,)
    registration_error_m: float


def marker_msg_type() -> Any:
    """The cosim_validation_interfaces/TrackedMarker class (for publishers)."""
    from cosim_validation_interfaces.msg import TrackedMarker

    return TrackedMarker


def marker_to_msg(frame: MarkerFrame) -> Any:
    """cosim_validation_interfaces/TrackedMarker of a :class:`MarkerFrame`.

    Args:
        frame: One tracker frame of the marker: stamp [ns], pose in the tracker's frame [m], registration error
            [m] (NaN: not seen).
    """
    from std_msgs.msg import Header

    seen = bool(np.isfinite(frame.registration_error_m))
    return marker_msg_type()(
        header=Header(stamp=time_to_msg(frame.t_ns), frame_id=TRACKER_FRAME),
        seen=seen,
        pose=pose_to_msg(frame.position_m, frame.quat_wxyz),
        registration_error=float(frame.registration_error_m),
    )


def marker_from_msg(msg: Any) -> MarkerFrame:
    """:class:`MarkerFrame` of a TrackedMarker (all NaN unless ``seen``).

    Args:
        msg: The TrackedMarker (an rclpy or rosbags message).
    """
    t_ns = time_from_msg(msg.header.stamp)
    if not msg.seen:
        return MarkerFrame(t_ns, np.full(3, np.nan), np.full(4, np.nan), float("nan"))
    position, quat = pose_from_msg(msg.pose)
    return MarkerFrame(t_ns, position, quat, float(msg.registration_error))


# ---------------------------------------------------------------------------- joint states
class JointSample(NamedTuple):
    """Joint positions (and velocities, if known) at a time."""

    t_ns: int
    names: tuple[str, ...]
    position: np.ndarray  # (J,)
    velocity: np.ndarray  # (J,) or (0,) if unknown


def joint_state_to_msg(sample: JointSample) -> Any:
    """sensor_msgs/JointState of a :class:`JointSample` (efforts left empty).

    Args:
        sample: The joints' names, positions (J,) in [rad] (or [m] for a prismatic joint), velocities (J,) or (0,), and
            stamp [ns].
    """
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Header

    return JointState(
        header=Header(stamp=time_to_msg(sample.t_ns), frame_id=""),
        name=list(sample.names),
        position=[float(v) for v in sample.position],
        velocity=[float(v) for v in sample.velocity],
        effort=[],
    )


def joint_state_from_msg(msg: Any, expected_names: tuple[str, ...] | None = None) -> JointSample:
    """:class:`JointSample` of a sensor_msgs/JointState, reordered to ``expected_names`` if given.

    Args:
        msg: The sensor_msgs/JointState (an rclpy or rosbags message).
        expected_names: The joint order wanted; None: the message's order.

    Raises:
        InputError: Positions missing or of the wrong length, or a joint of ``expected_names`` absent.
    """
    names = tuple(str(n) for n in msg.name)
    position = np.asarray(msg.position, dtype=np.float64)
    velocity = np.asarray(msg.velocity, dtype=np.float64)
    if position.shape != (len(names),):
        raise InputError(f"JointState has {len(names)} names but {position.shape[0]} positions")
    if velocity.size not in (0, len(names)):
        raise InputError(f"JointState has {len(names)} names but {velocity.size} velocities")
    t_ns = time_from_msg(msg.header.stamp)
    if expected_names is not None and names != expected_names:
        missing = [n for n in expected_names if n not in names]
        if missing:
            raise InputError(f"JointState lacks joints {missing}; it has {list(names)}")
        order = [names.index(n) for n in expected_names]
        position = position[order]
        velocity = velocity[order] if velocity.size else velocity
        names = expected_names
    return JointSample(t_ns, names, position, velocity)


# ---------------------------------------------------------------------------- verdicts and KPIs
def verdict_to_msg(verdict: Any, test_id: str, t_ns: int) -> Any:
    """cosim_validation_interfaces/Verdict of a :class:`cosim_validation.monitor.properties.Verdict`.

    Args:
        verdict: The verdict.
        test_id: The case the verdict is of.
        t_ns: The header's stamp [ns].
    """
    from std_msgs.msg import Header

    from cosim_validation_interfaces.msg import Verdict as VerdictMsg

    return VerdictMsg(
        header=Header(stamp=time_to_msg(t_ns), frame_id="base_link"),
        test_id=test_id,
        property=verdict.property,
        robot=int(verdict.robot),
        verdict=int(verdict.status),
        holds=bool(verdict.holds),
        final=bool(verdict.final),
        margin=float(verdict.margin),
        first_violation_time_s=float(verdict.first_violation_time_s),
        first_violation_stage=int(verdict.first_violation_stage),
        unit=verdict.unit,
        reason=verdict.reason,
    )


def verdict_from_msg(msg: Any) -> tuple[str, Any]:
    """(test id, :class:`cosim_validation.monitor.properties.Verdict`) of a Verdict message.

    Args:
        msg: The Verdict message (an rclpy or rosbags message).
    """
    from cosim_validation.common.record import RobotRole, Stage
    from cosim_validation.monitor.properties import Status, Verdict

    verdict = Verdict(
        property=str(msg.property),
        robot=RobotRole(int(msg.robot)),
        status=Status(int(msg.verdict)),
        margin=float(msg.margin),
        unit=str(msg.unit),
        first_violation_time_s=float(msg.first_violation_time_s),
        first_violation_stage=Stage(int(msg.first_violation_stage)),
        final=bool(msg.final),
        reason=str(msg.reason),
    )
    return str(msg.test_id), verdict


def kpi_to_msg(kpi: Any, test_id: str, t_ns: int) -> Any:
    """Return the cosim_validation_interfaces/Kpi of a :class:`cosim_validation.monitor.properties.Kpi`.

    Its reason is not sent; the header is stamped ``t_ns`` in ``base_link``.

    Args:
        kpi: The KPI.
        test_id: The case the KPI is of.
        t_ns: The header's stamp [ns].
    """
    from std_msgs.msg import Header

    from cosim_validation_interfaces.msg import Kpi as KpiMsg

    return KpiMsg(
        header=Header(stamp=time_to_msg(t_ns), frame_id="base_link"),
        test_id=test_id,
        name=kpi.name,
        robot=int(kpi.robot),
        stage=int(kpi.stage),
        value=float(kpi.value),
        unit=kpi.unit,
    )


def kpi_from_msg(msg: Any) -> tuple[str, Any]:
    """(test id, :class:`cosim_validation.monitor.properties.Kpi`) of a Kpi message.

    Args:
        msg: The Kpi message (an rclpy or rosbags message).
    """
    from cosim_validation.common.record import RobotRole, Stage
    from cosim_validation.monitor.properties import Kpi

    kpi = Kpi(str(msg.name), RobotRole(int(msg.robot)), Stage(int(msg.stage)), float(msg.value), str(msg.unit))
    return str(msg.test_id), kpi


# ---------------------------------------------------------------------------- markers
ROLE_COLORS_RGBA: dict[str, tuple[float, float, float, float]] = {
    "target": (0.35, 0.75, 0.45, 0.35),  # lungs: translucent green ([Actuators 2025], Figure 5)
    "obstacle": (0.85, 0.15, 0.15, 0.6),  # heart: red, forbidden
    "skin": (0.9, 0.8, 0.7, 0.12),  # torso: faint
}
VERDICT_COLORS_RGBA: dict[int, tuple[float, float, float, float]] = {
    0: (0.6, 0.6, 0.6, 1.0),  # unknown: grey
    1: (0.1, 0.7, 0.2, 1.0),  # holds: green
    2: (0.9, 0.1, 0.1, 1.0),  # violated: red
}


def mesh_to_marker(
    vertices_m: np.ndarray,
    faces: np.ndarray,
    marker_id: int,
    ns: str,
    rgba: tuple[float, float, float, float],
    frame_id: str = "base_link",
) -> Any:
    """visualization_msgs/Marker TRIANGLE_LIST of a triangle mesh ((V, 3) [m], (F, 3) indices).

    Args:
        vertices_m: The mesh's vertices in ``frame_id``, shape (V, 3), in [m].
        faces: Triangles as vertex indices, shape (F, 3).
        marker_id: The marker's id within ``ns``.
        ns: The marker's namespace.
        rgba: The colour, each channel in [0, 1].
        frame_id: The frame of the vertices.
    """
    from geometry_msgs.msg import Point
    from std_msgs.msg import ColorRGBA, Header
    from visualization_msgs.msg import Marker

    corners = np.asarray(vertices_m, dtype=np.float64)[np.asarray(faces).reshape(-1)]
    marker = Marker(
        header=Header(frame_id=frame_id),
        ns=ns,
        id=marker_id,
        type=Marker.TRIANGLE_LIST,
        action=Marker.ADD,
        frame_locked=True,
    )
    marker.pose.orientation.w = 1.0
    marker.scale.x = marker.scale.y = marker.scale.z = 1.0
    marker.color = ColorRGBA(r=rgba[0], g=rgba[1], b=rgba[2], a=rgba[3])
    marker.points = [Point(x=x, y=y, z=z) for x, y, z in corners.tolist()]  # Python floats: half the time
    return marker


def mesh_from_marker(marker: Any) -> np.ndarray:
    """(F, 3, 3) triangle corners [m] of a TRIANGLE_LIST marker (for checks and tools).

    Args:
        marker: A visualization_msgs/Marker TRIANGLE_LIST, three points per triangle.

    Returns:
        The corners of each triangle in the marker's frame, shape (F, 3, 3), float64, in [m].
    """
    points = np.array([[p.x, p.y, p.z] for p in marker.points], dtype=np.float64)
    return points.reshape(-1, 3, 3)


def target_to_marker(
    target_m: np.ndarray, marker_id: int, verdict: int, diameter_m: float = 0.004, frame_id: str = "base_link"
) -> Any:
    """A sphere at a case's target coloured by its verdict (Verdict.msg constants).

    Args:
        target_m: The target in ``frame_id``, shape (3,), in [m].
        marker_id: The marker's id within the ``targets`` namespace.
        verdict: A Verdict.msg status constant: 0 unknown, 1 holds, 2 violated.
        diameter_m: The sphere's diameter in [m].
        frame_id: The frame of the target.
    """
    from std_msgs.msg import ColorRGBA, Header
    from visualization_msgs.msg import Marker

    marker = Marker(header=Header(frame_id=frame_id), ns="targets", id=marker_id, type=Marker.SPHERE, action=Marker.ADD)
    marker.pose = pose_to_msg(np.asarray(target_m, dtype=np.float64), np.array([1.0, 0.0, 0.0, 0.0]))
    marker.scale.x = marker.scale.y = marker.scale.z = float(diameter_m)
    r, g, b, a = VERDICT_COLORS_RGBA[int(verdict)]
    marker.color = ColorRGBA(r=r, g=g, b=b, a=a)
    return marker


def target_from_marker(marker: Any) -> tuple[np.ndarray, int]:
    """(target (3,) [m], verdict constant) of a marker made by :func:`target_to_marker`.

    Args:
        marker: The sphere marker.

    Returns:
        The target in the marker's frame, shape (3,), float64, in [m], and the Verdict.msg constant whose colour
        is nearest the marker's.
    """
    rgba = (marker.color.r, marker.color.g, marker.color.b, marker.color.a)
    distance = {v: sum((a - b) ** 2 for a, b in zip(c, rgba, strict=True)) for v, c in VERDICT_COLORS_RGBA.items()}
    verdict = min(distance, key=distance.__getitem__)
    return pose_from_msg(marker.pose)[0], verdict


# ---------------------------------------------------------------------------- case status and expected states
CASE_OUTCOMES = {2: "completed", 3: "refused", 4: "aborted"}  # CaseStatus event -> outcome label
_OUTCOME_EVENTS = {"completed": 2, "refused": 3, "aborted": 4, "unfinished": 4, "recorded": 2}


def case_report_to_msg(end: Any, t_ns: int) -> Any:
    """cosim_validation_interfaces/CaseReport of a concluded case (:class:`CaseEnd` of the case tracker).

    Args:
        end: The concluded case: its info, outcome, message, conclusion (verdicts, KPIs, samples per robot) and timeout
            flag.
        t_ns: The stamp of the report and of its verdicts and KPIs [ns].
    """
    from std_msgs.msg import Header

    from cosim_validation_interfaces.msg import CaseReport

    test_id = end.info.test_id
    samples = end.conclusion.samples
    return CaseReport(
        header=Header(stamp=time_to_msg(t_ns), frame_id="base_link"),
        test_id=test_id,
        outcome=_OUTCOME_EVENTS[end.outcome],
        message=end.message,
        verdicts=[verdict_to_msg(v, test_id, t_ns) for v in end.conclusion.verdicts],
        kpis=[kpi_to_msg(k, test_id, t_ns) for k in end.conclusion.kpis],
        robots=[int(r) for r in samples],
        samples=[int(n) for n in samples.values()],
        tips=[int(end.conclusion.tips.get(r, 0)) for r in samples],
        markers=[int(end.conclusion.markers.get(r, 0)) for r in samples],
        timed_out=bool(end.timed_out),
    )


def case_report_caps(msg: Any) -> Any:
    """:class:`~cosim_validation.live.session.stream_assembler.StreamCaps` of a CaseReport: what a replay may use.

    Bags recorded before CaseReport carried ``tips`` and ``markers`` cap the samples only.

    Args:
        msg: The CaseReport message (an rclpy or rosbags message).
    """
    from cosim_validation.common.record import RobotRole
    from cosim_validation.live.session.stream_assembler import StreamCaps

    robots = [RobotRole(int(r)) for r in msg.robots]
    per_stream = {}
    for name in ("tips", "markers"):
        found = getattr(msg, name, None)  # a list from rclpy, an array from rosbags, absent in older bags
        counts = [] if found is None else list(found)
        per_stream[name] = dict(zip(robots, map(int, counts), strict=True)) if len(counts) == len(robots) else {}
    samples = dict(zip(robots, map(int, msg.samples), strict=True))
    return StreamCaps(samples, per_stream["tips"], per_stream["markers"])


def report_timed_out(msg: Any) -> bool:
    """Whether the live monitor concluded a CaseReport's case at its timeout.

    False for bags recorded before CaseReport said so.

    Args:
        msg: The CaseReport message (an rclpy or rosbags message).
    """
    return bool(getattr(msg, "timed_out", False))


def case_report_from_msg(msg: Any) -> tuple[str, str, list[Any], list[Any], dict[Any, int]]:
    """(test id, outcome label, verdicts, KPIs, samples per robot) of a CaseReport message.

    Args:
        msg: The CaseReport message (an rclpy or rosbags message).
    """
    from cosim_validation.common.record import RobotRole

    outcome = CASE_OUTCOMES.get(int(msg.outcome), "unknown")
    verdicts = [verdict_from_msg(v)[1] for v in msg.verdicts]
    kpis = [kpi_from_msg(k)[1] for k in msg.kpis]
    samples = {RobotRole(int(r)): int(n) for r, n in zip(msg.robots, msg.samples, strict=True)}
    return str(msg.test_id), outcome, verdicts, kpis, samples


def samples_streamed(status: Any) -> int | None:
    """Return the samples a COMPLETED or ABORTED case streamed: what the monitor waits for before it concludes it.

    An aborted case streamed fewer than planned; a supervised case more, its holds included. None for other
    events, for bags recorded before CaseStatus carried ``samples_sent`` and for a COMPLETED status that leaves it
    0 (unset: a completed case streamed something; its planned ``sample_count`` applies).

    Args:
        status: A CaseStatus message (an rclpy or rosbags message).
    """
    sent = getattr(status, "samples_sent", None)
    if sent is None or int(status.event) not in (2, 4) or (int(status.event) == 2 and int(sent) == 0):
        return None
    return int(sent)


def case_info_from_status(msg: Any) -> Any:
    """:class:`cosim_validation.live.session.case_tracker.CaseInfo` of a CaseStatus STARTED message.

    Args:
        msg: The CaseStatus message of event STARTED (an rclpy or rosbags message).
    """
    from cosim_validation.common.record import RobotRole
    from cosim_validation.live.session.case_tracker import CaseInfo

    target = msg.test_case.target
    return CaseInfo(
        test_id=str(msg.test_case.test_id),
        target_m=np.array([target.x, target.y, target.z], dtype=np.float64),
        robots=tuple(RobotRole.parse(str(r)) for r in msg.robots),
        needle_length_m=float(msg.needle_length_m),
        sample_count=int(msg.sample_count),
        start_ns=time_from_msg(msg.header.stamp),
    )


class ExpectedState(NamedTuple):
    """One sample of the expected trajectory as the controller publishes it."""

    t_ns: int
    test_id: str
    stage: int
    sample_index: int
    names: tuple[str, ...]
    q: np.ndarray
    supervisor: int = 0  # a SupervisorMode (UNSUPERVISED: no supervisor, or a bag recorded before it was sent)


def expected_labels(state: ExpectedState) -> tuple[Stage, SupervisorMode]:
    """The stage and supervisor mode of an expected state.

    Args:
        state: The expected state, as :func:`expected_state_from_msg` gives it.

    Raises:
        InputError: Either is not a known value.
    """
    try:
        return Stage(state.stage), SupervisorMode(state.supervisor)
    except ValueError:
        raise InputError(
            f"RobotState at {state.t_ns} ns: stage {state.stage} or supervisor mode {state.supervisor} is unknown"
        ) from None


def expected_state_to_msg(state: ExpectedState, tip_position_m: np.ndarray, tip_quat_wxyz: np.ndarray) -> Any:
    """cosim_validation_interfaces/RobotState (robot EXPECTED) of a planned sample and its tip pose.

    Args:
        state: The planned sample; its joints become both the setpoint and the position.
        tip_position_m: The planned needle tip in base_link, shape (3,), in [m].
        tip_quat_wxyz: The planned tip orientation in base_link, a unit quaternion (w, x, y, z), shape (4,).
    """
    from std_msgs.msg import Header

    from cosim_validation_interfaces.msg import Robot, RobotState

    q = [float(v) for v in state.q]
    return RobotState(
        header=Header(stamp=time_to_msg(state.t_ns), frame_id="base_link"),
        test_id=state.test_id,
        robot=Robot.EXPECTED,
        stage=int(state.stage),
        supervisor=int(state.supervisor),
        sample_index=int(state.sample_index),
        joint_names=list(state.names),
        setpoint=q,
        position=q,
        velocity=[],
        tip_pose=pose_to_msg(tip_position_m, tip_quat_wxyz),
        has_actual_tip=False,
    )


def expected_state_from_msg(msg: Any) -> ExpectedState:
    """:class:`ExpectedState` of a RobotState message.

    Args:
        msg: A RobotState message of the plan (an rclpy or rosbags message); its setpoint gives ``q``.
    """
    names = tuple(str(n) for n in msg.joint_names)
    q = np.asarray(msg.setpoint, dtype=np.float64)
    if q.shape != (len(names),):
        raise InputError(f"RobotState has {len(names)} joint names but {q.shape[0]} setpoints")
    mode = int(getattr(msg, "supervisor", 0))  # a RobotState recorded before the field existed has none
    return ExpectedState(
        time_from_msg(msg.header.stamp), str(msg.test_id), int(msg.stage), int(msg.sample_index), names, q, mode
    )


# ---------------------------------------------------------------------------- test cases
def test_case_to_msg(case: Any) -> Any:
    """cosim_validation_interfaces/TestCase of a :class:`cosim_validation.testgen.TestCase`.

    Args:
        case: The test case; source and target in its ``frame_id``, in [m].
    """
    from geometry_msgs.msg import Point

    from cosim_validation_interfaces.msg import TestCase as TestCaseMsg

    source, target = np.asarray(case.source_m, float), np.asarray(case.target_m, float)
    return TestCaseMsg(
        test_id=case.test_id,
        suite_id=case.suite_id,
        frame_id=case.frame_id,
        source=Point(x=float(source[0]), y=float(source[1]), z=float(source[2])),
        target=Point(x=float(target[0]), y=float(target[1]), z=float(target[2])),
        cube_index=[int(v) for v in case.cube_index],
        granularity_m=float(case.granularity_m),
        generator=case.generator,
        seed=int(case.seed),
        target_depth_m=float(case.target_depth_m),
    )


def test_case_from_msg(msg: Any) -> Any:
    """:class:`cosim_validation.testgen.TestCase` of a TestCase message.

    Args:
        msg: The TestCase message (an rclpy or rosbags message).
    """
    from cosim_validation.testgen.test_case import TestCase

    return TestCase(
        test_id=str(msg.test_id),
        suite_id=str(msg.suite_id),
        frame_id=str(msg.frame_id),
        source_m=np.array([msg.source.x, msg.source.y, msg.source.z], dtype=np.float64),
        target_m=np.array([msg.target.x, msg.target.y, msg.target.z], dtype=np.float64),
        cube_index=np.asarray(msg.cube_index, dtype=np.int64),
        granularity_m=float(msg.granularity_m),
        generator=str(msg.generator),
        seed=int(msg.seed),
        target_depth_m=float(msg.target_depth_m),
    )
