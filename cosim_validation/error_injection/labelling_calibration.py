"""Which calibration :func:`~.learning.label` makes, from which rows, and the tracker's floor it reports.

The kinematic calibration (:mod:`~.kinematic_calibration`) prefers the settled training rows (averaged readings of
an arm at rest: no lag in them) and needs each joint's last move (its lost motion); ``kinematic=False`` keeps the
hand-eye calibration of the nominal model (:mod:`~.hand_eye`) on every tracked training row.
"""

from __future__ import annotations

import numpy as np

from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.dataset_cleaning import CleanedDataset
from cosim_validation.error_injection.features import DEFAULT_DEADBAND, series_directions
from cosim_validation.error_injection.hand_eye import HandEye, calibrate
from cosim_validation.error_injection.kinematic_calibration import (
    KinematicCalibration,
    calibrate_kinematics,
    kinematics_poses,
)
from cosim_validation.error_injection.repeats import groups, single_reading_gap
from cosim_validation.error_injection.training import MIN_TRAINING_ROWS
from cosim_validation.error_injection.transforms import poses
from cosim_validation.robots.model import Kinematics


def marker_reading_gap(readings: CleanedDataset, B_means: np.ndarray) -> tuple[float, float] | None:
    """The marker-pose spread of single readings around their group's mean (any frame: the gap is invariant).

    Args:
        readings: The single readings (before averaging) and their usable-marker mask.
        B_means: Each group's mean marker pose in the tracker's frame, shape (G, 4, 4), translations in [m].
    """
    tracked = readings.tracked
    if not tracked.any():
        return None
    data = readings.dataset
    B = poses(data.marker_pos_m[tracked], data.marker_quat_wxyz[tracked])
    return single_reading_gap(B, groups(readings)[tracked], B_means)


def last_moves(data: ErrorDataset) -> np.ndarray:
    """(n, J) the direction of each joint's last move in its segment (+1, -1; 0 before the first).

    From the measured joints: the CPE direction of :mod:`~.features`, as the injector's history gives it.

    Args:
        data: The rows, in segment order.
    """
    q = data.q_measured
    starts = data.segment_starts()
    previous = np.vstack((q[:1], q[:-1]))
    previous[starts] = q[starts]
    return series_directions(q - previous, DEFAULT_DEADBAND, starts)


def calibration_rows(train: np.ndarray, settled: np.ndarray, kinematic: bool) -> np.ndarray:
    """The tracked rows to calibrate on.

    The kinematic calibration prefers the settled training rows (averaged readings of an arm at rest, no lag in
    them) when there are :data:`MIN_TRAINING_ROWS`; else every training row.

    Args:
        train: Whether each tracked row is a training row, shape (m,), bool.
        settled: Whether each tracked row averages several readings of a settled pose, shape (m,), bool.
        kinematic: Whether the kinematic calibration is made (False: every training row).
    """
    preferred = train & settled
    return preferred if kinematic and int(preferred.sum()) >= MIN_TRAINING_ROWS else train


def calibrated(
    kinematics: Kinematics, q: np.ndarray, moves: np.ndarray, B: np.ndarray, kinematic: bool
) -> tuple[HandEye, KinematicCalibration | None]:
    """X and Y with the kinematic calibration (``kinematic``), or of the nominal model alone.

    Args:
        kinematics: The nominal model.
        q: Measured joints of the tracked poses, shape (n, J), in [rad] (or [m] for a prismatic joint).
        moves: Direction of each joint's last move (+1, -1, 0), shape (n, J).
        B: Marker poses in the tracker's frame, shape (n, 4, 4), translations in [m].
        kinematic: Calibrate the joint offsets, ratios, couplings and lost motions too (False: X and Y of the
            nominal model alone).
    """
    if not kinematic:
        return calibrate(kinematics_poses(kinematics, q), B), None
    calibration = calibrate_kinematics(kinematics, q, B, moves)
    return calibration.hand_eye, calibration


def single_tip_reading_gap(
    readings: CleanedDataset, hand_eye: HandEye, B_means: np.ndarray
) -> tuple[float, float] | None:
    """The tip-pose spread of single readings around their group's mean (:func:`~.repeats.single_reading_gap`).

    Args:
        readings: The single readings (before averaging) and their usable-marker mask.
        hand_eye: The calibration that turns a marker pose into a tip pose in base_link.
        B_means: Each group's mean marker pose in the tracker's frame, shape (G, 4, 4), translations in [m].
    """
    tracked = readings.tracked
    if not tracked.any():
        return None
    data = readings.dataset
    T = hand_eye.actual_tool_poses(poses(data.marker_pos_m[tracked], data.marker_quat_wxyz[tracked]))
    return single_reading_gap(T, groups(readings)[tracked], hand_eye.actual_tool_poses(B_means))
