"""CRTK messages to and from arrays.

Joint states by name, and ``_cp`` poses as PoseStamped (dVRK 2.x) or TransformStamped (Raven-II), per
:mod:`cosim_validation.live.ros.crtk_topics`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.live.ros import convert
from cosim_validation.live.ros.crtk_topics import BASE_FRAME, POSE_STAMPED, TRANSFORM_STAMPED
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.model.fk_kernels import matrix_to_quat_wxyz


def joint_state(stamp_ns: int, names: tuple[str, ...], q: np.ndarray) -> Any:
    """sensor_msgs/JointState of positions ``q`` ((J,) rad, or m for a prismatic joint), stamped ``stamp_ns``.

    Args:
        stamp_ns: The stamp [ns].
        names: Names of the J joints.
        q: The joint positions, shape (J,), in [rad] (or [m] for a prismatic joint).
    """
    return convert.joint_state_to_msg(convert.JointSample(stamp_ns, names, np.asarray(q, dtype=np.float64), q[:0]))


def cp_message(
    type_name: str, stamp_ns: int, frame_id: str, pos_m: np.ndarray, R: np.ndarray, child_frame_id: str = ""
) -> Any:
    """Return a ``_cp`` message of ``type_name`` (PoseStamped or TransformStamped) of a pose in ``frame_id``.

    Args:
        type_name: :data:`~crtk_topics.POSE_STAMPED` or :data:`~crtk_topics.TRANSFORM_STAMPED`.
        stamp_ns: The message's stamp in [ns].
        frame_id: The frame the pose is in.
        pos_m: The position in ``frame_id``, shape (3,), in [m].
        R: The rotation in ``frame_id``, shape (3, 3).
        child_frame_id: A TransformStamped's child frame; "": ``<frame_id>_tool_tip``.

    Raises:
        ValueError: ``type_name`` is neither.
    """
    quat = matrix_to_quat_wxyz(np.ascontiguousarray(R, dtype=np.float64))
    if type_name == POSE_STAMPED:
        return convert.pose_stamped_to_msg(convert.StampedPose(stamp_ns, frame_id, pos_m, quat))
    if type_name != TRANSFORM_STAMPED:
        raise ValueError(f"not a CRTK _cp type: {type_name}")
    from geometry_msgs.msg import Quaternion, TransformStamped, Vector3

    msg = TransformStamped()
    msg.header.stamp = convert.time_to_msg(stamp_ns)
    msg.header.frame_id = frame_id
    msg.child_frame_id = child_frame_id or f"{frame_id}_tool_tip"
    msg.transform.translation = Vector3(x=float(pos_m[0]), y=float(pos_m[1]), z=float(pos_m[2]))
    msg.transform.rotation = Quaternion(w=float(quat[0]), x=float(quat[1]), y=float(quat[2]), z=float(quat[3]))
    return msg


def publish_arm_state(
    pubs: dict[str, Any],
    stamp_ns: int,
    kinematics: Kinematics,
    cp_type: str,
    tip_frame: str,
    measured: np.ndarray,
    setpoint: np.ndarray,
) -> None:
    """Publish an arm's ``measured_js``/``measured_cp`` and ``setpoint_js``/``setpoint_cp``, all stamped ``stamp_ns``.

    Each is the joints and the forward kinematics of the needle tip, in :data:`~crtk_topics.BASE_FRAME` (the
    child frame of a TransformStamped: ``tip_frame``).

    Args:
        pubs: The publishers by those names.
        stamp_ns: The stamp in [ns].
        kinematics: The arm's kinematics: joint names and the needle tip's forward kinematics.
        cp_type: The ``_cp`` message type, PoseStamped or TransformStamped.
        tip_frame: The child frame of a TransformStamped.
        measured: The measured joints, shape (J,), in [rad] (or [m] for a prismatic joint).
        setpoint: The joints last commanded, shape (J,), in [rad] (or [m] for a prismatic joint).
    """
    for name, q in (("measured", measured), ("setpoint", setpoint)):
        pubs[f"{name}_js"].publish(joint_state(stamp_ns, tuple(kinematics.joint_names), q))
        pose = kinematics.tip_pose(q)
        pubs[f"{name}_cp"].publish(cp_message(cp_type, stamp_ns, BASE_FRAME, pose.pos_m, pose.R, tip_frame))
