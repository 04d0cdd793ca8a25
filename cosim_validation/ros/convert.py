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

from cosim_validation.exceptions import InputError

NS_PER_S = 1_000_000_000


# ---------------------------------------------------------------------------- time
def time_to_msg(t_ns: int) -> Any:
    """builtin_interfaces/Time of ``t_ns`` nanoseconds (>= 0)."""
    from builtin_interfaces.msg import Time

    if t_ns < 0:
        raise InputError(f"a ROS time cannot be negative, got {t_ns} ns")
    return Time(sec=int(t_ns // NS_PER_S), nanosec=int(t_ns % NS_PER_S))


def time_from_msg(stamp: Any) -> int:
    """Nanoseconds of a builtin_interfaces/Time (or the ``header.stamp`` of a message)."""
    return int(stamp.sec) * NS_PER_S + int(stamp.nanosec)


def seconds_to_ns(t_s: float) -> int:
    """Seconds to integer nanoseconds, rounded (sample times at 10 Hz stay exact)."""
    return round(float(t_s) * NS_PER_S)


# ---------------------------------------------------------------------------- poses
def pose_to_msg(position_m: np.ndarray, quat_wxyz: np.ndarray) -> Any:
    """geometry_msgs/Pose from a position (3,) [m] and a unit quaternion (4,) (w, x, y, z)."""
    from geometry_msgs.msg import Point, Pose, Quaternion

    p = np.asarray(position_m, dtype=np.float64)
    q = np.asarray(quat_wxyz, dtype=np.float64)
    return Pose(
        position=Point(x=float(p[0]), y=float(p[1]), z=float(p[2])),
        orientation=Quaternion(w=float(q[0]), x=float(q[1]), y=float(q[2]), z=float(q[3])),
    )


def pose_from_msg(pose: Any) -> tuple[np.ndarray, np.ndarray]:
    """(position (3,) [m], quaternion (4,) (w, x, y, z)) of a geometry_msgs/Pose."""
    p, q = pose.position, pose.orientation
    return np.array([p.x, p.y, p.z], dtype=np.float64), np.array([q.w, q.x, q.y, q.z], dtype=np.float64)


class StampedPose(NamedTuple):
    """A pose at a time: what a tracker or a simulator's ground truth reports."""

    t_ns: int
    frame_id: str
    position_m: np.ndarray  # (3,)
    quat_wxyz: np.ndarray  # (4,)


def pose_stamped_to_msg(pose: StampedPose) -> Any:
    """geometry_msgs/PoseStamped of a :class:`StampedPose`."""
    from geometry_msgs.msg import PoseStamped
    from std_msgs.msg import Header

    return PoseStamped(
        header=Header(stamp=time_to_msg(pose.t_ns), frame_id=pose.frame_id),
        pose=pose_to_msg(pose.position_m, pose.quat_wxyz),
    )


def pose_stamped_from_msg(msg: Any) -> StampedPose:
    """:class:`StampedPose` of a geometry_msgs/PoseStamped."""
    position, quat = pose_from_msg(msg.pose)
    return StampedPose(time_from_msg(msg.header.stamp), str(msg.header.frame_id), position, quat)


# ---------------------------------------------------------------------------- joint states
class JointSample(NamedTuple):
    """Joint positions (and velocities, if known) at a time."""

    t_ns: int
    names: tuple[str, ...]
    position_rad: np.ndarray  # (J,)
    velocity_rad_s: np.ndarray  # (J,) or (0,) if unknown


def joint_state_to_msg(sample: JointSample) -> Any:
    """sensor_msgs/JointState of a :class:`JointSample` (efforts left empty)."""
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Header

    return JointState(
        header=Header(stamp=time_to_msg(sample.t_ns), frame_id=""),
        name=list(sample.names),
        position=[float(v) for v in sample.position_rad],
        velocity=[float(v) for v in sample.velocity_rad_s],
        effort=[],
    )


def joint_state_from_msg(msg: Any, expected_names: tuple[str, ...] | None = None) -> JointSample:
    """:class:`JointSample` of a sensor_msgs/JointState, reordered to ``expected_names`` if given.

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
    """cosim_validation_interfaces/Verdict of a :class:`cosim_validation.properties.Verdict`."""
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
    """(test id, :class:`cosim_validation.properties.Verdict`) of a Verdict message."""
    from cosim_validation.properties import Status, Verdict
    from cosim_validation.record import RobotRole, Stage

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
    """cosim_validation_interfaces/Kpi of a :class:`cosim_validation.properties.Kpi` (its reason is not sent)."""
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
    """(test id, :class:`cosim_validation.properties.Kpi`) of a Kpi message."""
    from cosim_validation.properties import Kpi
    from cosim_validation.record import RobotRole, Stage

    kpi = Kpi(str(msg.name), RobotRole(int(msg.robot)), Stage(int(msg.stage)), float(msg.value), str(msg.unit))
    return str(msg.test_id), kpi
