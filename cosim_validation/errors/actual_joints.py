"""The actual joints of a sample: the joint vector whose nominal forward kinematics gives the tracked tool pose.

Seed 001 (III-D) derives the robot's actual joints from the actual tool pose by inverse kinematics, so that both
error networks predict joint offsets. For an arm with more joints than the pose has degrees of freedom (the 7-joint
ER3 Pro) the pose leaves a null-space motion open: :func:`actual_joints` takes the joint vector nearest to the
measured joints that reaches the pose (damped Gauss-Newton from the measured joints, each step the minimum-norm
solution), which for the small errors at hand (below a few mrad) is the smallest joint correction that explains
them. Vectorised over samples: every step is one batch of forward kinematics and one batch of 6 x J solves.
Revolute joints (the Jacobian's columns are a_j x (p_tip - o_j), a_j in base_link).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.spatial.transform import Rotation

from cosim_validation.robot import Kinematics
from cosim_validation.robot.kinematics import RecordKinematics

#: Gauss-Newton steps (the start is within a few mrad: three or four suffice; the rest confirm convergence).
ITERATIONS = 10

#: Damping of the least-squares step [m^2 | rad^2] (keeps a step near a singularity bounded).
DAMPING = 1e-6

#: Largest change of one joint in one step [rad] (a step near a singularity must not throw the arm elsewhere).
MAX_STEP_RAD = 0.02


class ActualJoints(NamedTuple):
    """Joint vectors whose nominal tip pose is the tracked one.

    Attributes:
        q: (n, J) actual joints [rad].
        position_residual_m: (n,) tip position left unexplained [m].
        rotation_residual_rad: (n,) tip rotation left unexplained [rad].
    """

    q: np.ndarray
    position_residual_m: np.ndarray
    rotation_residual_rad: np.ndarray


def _pose_error(kinematics: Kinematics, q: np.ndarray, T_target: np.ndarray) -> tuple[np.ndarray, RecordKinematics]:
    """(n, 6) (position, rotation vector) of target relative to FK(q) in base_link, and the arrays of FK."""
    arrays = kinematics.record_arrays(q)
    tip_R = Rotation.from_quat(arrays.tip_quat_wxyz[:, [1, 2, 3, 0]])
    rot = (Rotation.from_matrix(T_target[:, :3, :3]) * tip_R.inv()).as_rotvec()
    return np.hstack((T_target[:, :3, 3] - arrays.tip_pos_m, rot)), arrays


def actual_joints(kinematics: Kinematics, q_measured: np.ndarray, T_tip_actual: np.ndarray) -> ActualJoints:
    """The joints nearest to ``q_measured`` (n, J) whose nominal tip pose is ``T_tip_actual`` (n, 4, 4).

    Args:
        kinematics: The nominal model (the one the networks' offsets are relative to).
        q_measured: (n, J) start [rad].
        T_tip_actual: (n, 4, 4) tracked tip poses in base_link.
    """
    q = np.array(q_measured, dtype=np.float64)
    for _ in range(ITERATIONS):
        error, arrays = _pose_error(kinematics, q, T_tip_actual)
        lever = arrays.tip_pos_m[:, None, :] - arrays.joint_pos_m
        J = np.concatenate((np.cross(arrays.joint_axis, lever), arrays.joint_axis), axis=2).transpose(0, 2, 1)
        JJt = J @ J.transpose(0, 2, 1) + DAMPING * np.eye(6)
        step = (J.transpose(0, 2, 1) @ np.linalg.solve(JJt, error[:, :, None]))[:, :, 0]
        largest = np.abs(step).max(axis=1, keepdims=True)
        q += step * np.minimum(1.0, MAX_STEP_RAD / np.maximum(largest, 1e-300))
    error, _ = _pose_error(kinematics, q, T_tip_actual)
    return ActualJoints(q, np.linalg.norm(error[:, :3], axis=1), np.linalg.norm(error[:, 3:], axis=1))
