"""A robot's recorded run as a CRTK-style rosbag2 (MCAP), and such a bag as an error dataset (docs/CRTK.md).

Written (one message of each per sample, stamped ``round(t_s 1e9)`` ns of case time, log time = stamp):

- ``<namespace>/setpoint_js``, ``<namespace>/measured_js`` (sensor_msgs/JointState, the model's joint names;
  rad, or m for a prismatic joint): the setpoint sent and the encoders' reading;
- ``<namespace>/measured_cp`` (geometry_msgs/PoseStamped, frame ``base_link``): the tool tip by forward
  kinematics of the measured joints, as the arm reports it;
- ``<tracker>/marker/measured_cp`` (PoseStamped, frame ``tracker``): the tool's marker as the optical tracker saw
  it, only for samples where it was seen; ``<tracker>/marker`` (cosim TrackedMarker): the same with ``seen`` and
  the registration error, one per sample.

Read back: rows are the stamps with both ``setpoint_js`` and ``measured_js``; the marker comes from
``<tracker>/marker`` when the bag has it, else from ``<tracker>/marker/measured_cp`` (a bag from elsewhere: no
registration error, so NaN, which ``cosim errors`` counts as a marker not seen), else NaN.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.live.ros.bag import BagWriter, project_typestore, read_messages, topics_of

JOINT_STATE = "sensor_msgs/msg/JointState"
POSE_STAMPED = "geometry_msgs/msg/PoseStamped"
TRACKED_MARKER = "cosim_validation_interfaces/msg/TrackedMarker"


def _header(store: Any, stamp_ns: int, frame_id: str) -> Any:
    t = store.types["builtin_interfaces/msg/Time"](sec=stamp_ns // 1_000_000_000, nanosec=stamp_ns % 1_000_000_000)
    return store.types["std_msgs/msg/Header"](stamp=t, frame_id=frame_id)


def _pose(store: Any, pos_m: np.ndarray, quat_wxyz: np.ndarray) -> Any:
    point = store.types["geometry_msgs/msg/Point"](x=float(pos_m[0]), y=float(pos_m[1]), z=float(pos_m[2]))
    w, x, y, z = (float(v) for v in quat_wxyz)
    return store.types["geometry_msgs/msg/Pose"](
        position=point, orientation=store.types["geometry_msgs/msg/Quaternion"](x=x, y=y, z=z, w=w)
    )


def export_crtk_bag(record: TrajectoryRecord, path: str | Path, namespace: str, tracker: str = "/tracker") -> int:
    """Write ``record`` as a CRTK-style MCAP at ``path`` (must not exist); returns the number of messages.

    Args:
        record: The robot's recorded run: times [s], setpoint and measured joints (n, J), tip in base_link and marker in
            the tracker's frame.
        path: The ``.mcap`` file to write (must not exist).
        namespace: The arm's CRTK namespace (``/PSM1``) of the joint and ``measured_cp`` topics.
        tracker: The tracker's namespace of the marker topics.
    """
    store = project_typestore()
    writer = BagWriter(path)
    topics = {
        "setpoint": f"{namespace}/setpoint_js",
        "measured": f"{namespace}/measured_js",
        "cp": f"{namespace}/measured_cp",
        "marker_cp": f"{tracker}/marker/measured_cp",
        "marker": f"{tracker}/marker",
    }
    for key, topic in topics.items():
        writer.add_topic(
            topic, {"cp": POSE_STAMPED, "marker_cp": POSE_STAMPED, "marker": TRACKED_MARKER}.get(key, JOINT_STATE)
        )
    names = list(record.joint_names)
    joint_state, pose_stamped = store.types[JOINT_STATE], store.types[POSE_STAMPED]
    empty = np.zeros(0)
    for k, t_s in enumerate(record.t_s):
        stamp = round(float(t_s) * 1e9)
        for key, q in (("setpoint", record.q_setpoint[k]), ("measured", record.q_measured[k])):
            position = np.asarray(q, dtype=np.float64)
            header = _header(store, stamp, "")
            msg = joint_state(header=header, name=names, position=position, velocity=empty, effort=empty)
            writer.write_message(topics[key], stamp, msg, JOINT_STATE)
        cp = pose_stamped(
            header=_header(store, stamp, "base_link"), pose=_pose(store, record.tip_pos_m[k], record.tip_quat_wxyz[k])
        )
        writer.write_message(topics["cp"], stamp, cp, POSE_STAMPED)
        error = float(record.marker_error_m[k])
        seen = bool(np.isfinite(error))
        pose = _pose(store, record.marker_pos_m[k], record.marker_quat_wxyz[k])
        if seen:
            writer.write_message(
                topics["marker_cp"],
                stamp,
                pose_stamped(header=_header(store, stamp, "tracker"), pose=pose),
                POSE_STAMPED,
            )
        marker = store.types[TRACKED_MARKER](
            header=_header(store, stamp, "tracker"), seen=seen, pose=pose, registration_error=error
        )
        writer.write_message(topics["marker"], stamp, marker, TRACKED_MARKER)
    count = writer.count
    writer.close()
    return count


def _stamp_ns(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 1_000_000_000 + int(msg.header.stamp.nanosec)


def _namespace_of(topics: dict[str, tuple[str, int]], path: Path) -> str:
    """The one namespace with both ``measured_js`` and ``setpoint_js`` (not a jaw's)."""
    found = sorted(
        t.removesuffix("/measured_js")
        for t in topics
        if t.endswith("/measured_js")
        and not t.endswith("/jaw/measured_js")
        and t.removesuffix("/measured_js") + "/setpoint_js" in topics
    )
    if len(found) == 1:
        return found[0]
    if not found:
        has = ", ".join(sorted(topics)) or "no topics"
        raise InputError(
            f"{path}: no <namespace>/setpoint_js and <namespace>/measured_js topics ({JOINT_STATE}); the bag has: {has}"
        )
    raise InputError(f"{path}: several arms ({', '.join(found)}); choose one with --namespace")


def _positions(msg: Any, joint_names: tuple[str, ...], topic: str, path: Path) -> np.ndarray:
    names = list(msg.name)
    missing = [n for n in joint_names if n not in names]
    if missing:
        raise InputError(f"{path}: topic {topic!r}: joint {missing[0]!r} missing (joints: {', '.join(names)})")
    position = np.asarray(msg.position, dtype=np.float64)
    return np.array([position[names.index(n)] for n in joint_names])


def _check_markers(position: np.ndarray, quaternion: np.ndarray, registration: np.ndarray, where: str) -> None:
    """The checks of the CSV import on the bag's marker (a registration error of -1, a zero quaternion were taken).

    Rows are counted from 1 in stamp order.
    """
    from cosim_validation.error_injection.dataset_io import check_marker, check_marker_quaternion

    check_marker(
        position, registration, where, ("pose.position.x", "pose.position.y", "pose.position.z"), "registration_error"
    )
    check_marker_quaternion(quaternion, where, "pose.orientation")


def import_crtk_bag(
    path: str | Path, robot: RobotIdentity, joint_units: tuple[str, ...], namespace: str = "", tracker: str = "/tracker"
) -> ErrorDataset:
    """The error dataset of a CRTK-style bag (see the module docstring), one row per setpoint/measured stamp.

    Args:
        path: The bag: an ``.mcap`` file or a rosbag2 folder.
        robot: The robot the data comes from; its joint names are looked up in each joint state.
        joint_units: ``rad`` or ``m`` for each of the J joints.
        namespace: The arm's CRTK namespace (``/PSM1``); "": the bag's only arm with both ``setpoint_js`` and
            ``measured_js``.
        tracker: The tracker's namespace of the marker topics.

    Raises:
        InputError: Not a bag, a missing topic or joint, or no stamp with both joint states (one line each).
    """
    path = Path(path)
    topics = topics_of(path)
    ns = namespace or _namespace_of(topics, path)
    wanted = {"setpoint": f"{ns}/setpoint_js", "measured": f"{ns}/measured_js"}
    for topic in wanted.values():
        if topic not in topics:
            raise InputError(
                f"{path}: topic {topic!r} ({JOINT_STATE}) missing; the bag has: {', '.join(sorted(topics))}"
            )
        if topics[topic][0] != JOINT_STATE:
            raise InputError(f"{path}: topic {topic!r} has type {topics[topic][0]}, expected {JOINT_STATE}")
    kinds = {"/marker": TRACKED_MARKER, "/marker/measured_cp": POSE_STAMPED}  # an RViz Marker is no tracker's
    tracked = {t for t, (msgtype, _) in topics.items() if any(t.endswith(k) and msgtype == v for k, v in kinds.items())}
    marker_topic = next((t for t in (f"{tracker}/marker", f"{tracker}/marker/measured_cp") if t in tracked), None)
    elsewhere = sorted(tracked)
    if marker_topic is None and elsewhere:  # every row read as "marker not seen", exit 0
        raise InputError(
            f"{path}: no marker topic of the tracker namespace {tracker!r} ({tracker}/marker or "
            f"{tracker}/marker/measured_cp); the bag has {', '.join(elsewhere)}: give its namespace with "
            "--tracker-namespace"
        )
    joints: dict[str, dict[int, np.ndarray]] = {"setpoint": {}, "measured": {}}
    markers: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}
    which = {topic: key for key, topic in wanted.items()}
    for m in read_messages(path, [*wanted.values(), *([marker_topic] if marker_topic else [])]):
        stamp = _stamp_ns(m.message)
        if m.topic in which:
            joints[which[m.topic]][stamp] = _positions(m.message, robot.joint_names, m.topic, path)
        elif m.msgtype == TRACKED_MARKER and not m.message.seen:
            continue
        else:
            p, q = m.message.pose.position, m.message.pose.orientation
            error = float(m.message.registration_error) if m.msgtype == TRACKED_MARKER else float("nan")
            markers[stamp] = (np.array([p.x, p.y, p.z]), np.array([q.w, q.x, q.y, q.z]), error)
    stamps = sorted(set(joints["setpoint"]) & set(joints["measured"]))
    if not stamps:
        raise InputError(f"{path}: no stamp has both {wanted['setpoint']} and {wanted['measured']}")
    n = len(stamps)
    unseen = (np.full(3, np.nan), np.full(4, np.nan), float("nan"))
    marker_rows = [markers.get(s, unseen) for s in stamps]
    position = np.array([r[0] for r in marker_rows]).reshape(n, 3)
    quaternion = np.array([r[1] for r in marker_rows]).reshape(n, 4)
    registration = np.array([r[2] for r in marker_rows], dtype=np.float64)
    _check_markers(position, quaternion, registration, f"{path}: topic {marker_topic!r}")
    return ErrorDataset(
        robot=robot,
        joint_units=tuple(joint_units),
        set_name=np.full(n, "train"),
        segment=np.zeros(n, dtype=np.int64),
        time_s=(np.array(stamps, dtype=np.int64) - stamps[0]) / 1e9,
        q_setpoint=np.array([joints["setpoint"][s] for s in stamps]),
        q_measured=np.array([joints["measured"][s] for s in stamps]),
        marker_pos_m=position,
        marker_quat_wxyz=quaternion,
        marker_error_m=registration,
        meta={"source": f"crtk bag import of {path.name} ({ns})"},
    )
