"""The actual joints of a sample: the joint vector whose nominal forward kinematics gives the tracked tool pose.

Seed 001 (III-D) derives the robot's actual joints from the actual tool pose by inverse kinematics, so that both
error networks predict joint offsets. For an arm with more joints than the pose has degrees of freedom (the 7-joint
ER3 Pro) the pose leaves a null-space motion open: :func:`actual_joints` takes the joint vector nearest to the
measured joints that reaches the pose (damped Gauss-Newton from the measured joints, each step the minimum-norm
solution), which for the small errors at hand (below a few mrad) is the smallest joint correction that explains
them. Vectorised over samples: every step is one batch of forward kinematics and one batch of 6 x J solves.
The Jacobian's column of a revolute joint is (a_j x (p_tip - o_j), a_j), of a prismatic joint (a_j, 0), a_j in
base_link (as :func:`cosim_validation.robots.model.fk_kernels.jacobian_from_frames`); joint values are rad, or m for a
prismatic joint.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.spatial.transform import Rotation

from cosim_validation.robots.model import PRISMATIC, Kinematics
from cosim_validation.robots.model.kinematics import RecordKinematics

#: Gauss-Newton steps (the start is within a few mrad: a well-conditioned arm needs three or four; the PSM's and
#: the Raven-II's wrists, Jacobian condition numbers up to ~5000 in their workspace, need about twenty).
ITERATIONS = 30

#: Damping of the least-squares step [m^2 | rad^2] (keeps a step near a singularity bounded; 1e-6 held the
#: PSM's short levers back by micrometres and milliradians after ten steps; test/error_injection/test_prismatic.py).
DAMPING = 1e-10

#: Largest change of one joint in one step [rad | m] (a step near a singularity must not throw the arm elsewhere).
MAX_STEP_RAD = 0.02


class ActualJoints(NamedTuple):
    """Joint vectors whose nominal tip pose is the tracked one.

    Attributes:
        q: (n, J) actual joints [rad | m].
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
        q_measured: (n, J) start [rad | m].
        T_tip_actual: (n, 4, 4) tracked tip poses in base_link.
    """
    q = np.array(q_measured, dtype=np.float64)
    prismatic = (kinematics.chain.joint_type == PRISMATIC)[None, :, None]
    for _ in range(ITERATIONS):
        error, arrays = _pose_error(kinematics, q, T_tip_actual)
        lever = arrays.tip_pos_m[:, None, :] - arrays.joint_pos_m
        axis = arrays.joint_axis
        linear = np.where(prismatic, axis, np.cross(axis, lever))
        J = np.concatenate((linear, np.where(prismatic, 0.0, axis)), axis=2).transpose(0, 2, 1)
        JJt = J @ J.transpose(0, 2, 1) + DAMPING * np.eye(6)
        step = (J.transpose(0, 2, 1) @ np.linalg.solve(JJt, error[:, :, None]))[:, :, 0]
        largest = np.abs(step).max(axis=1, keepdims=True)
        q += step * np.minimum(1.0, MAX_STEP_RAD / np.maximum(largest, 1e-300))
    error, _ = _pose_error(kinematics, q, T_tip_actual)
    return ActualJoints(q, np.linalg.norm(error[:, :3], axis=1), np.linalg.norm(error[:, 3:], axis=1))
