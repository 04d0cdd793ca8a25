"""Repeated readings of one settled pose: averaged into one row, and their spread measures one reading's noise."""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.dataset_cleaning import clean
from cosim_validation.error_injection.repeats import average_repeats, groups, single_reading_gap
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.error_injection.transforms import pose_gap, poses, quat_wxyz
from cosim_validation.robots.model import Kinematics

NOISE_M, NOISE_RAD = 2e-4, 1e-3


def _repeated(kinematics: Kinematics, n_poses: int, k: int, seed: int) -> tuple[ErrorDataset, np.ndarray]:
    """k noisy readings of each of n_poses marker poses (one unseen reading per pose); and the true poses."""
    rng = np.random.default_rng(seed)
    J = kinematics.n_joints
    q_s = np.repeat(rng.uniform(-0.5, 0.5, (n_poses, J)), k, axis=0)
    true = poses(
        rng.uniform(-1, 1, (n_poses, 3)), Rotation.random(n_poses, random_state=seed).as_quat()[:, [3, 0, 1, 2]]
    )
    B = np.repeat(true, k, axis=0)
    B[:, :3, :3] = B[:, :3, :3] @ Rotation.from_rotvec(rng.normal(0, NOISE_RAD, (len(B), 3))).as_matrix()
    B[:, :3, 3] += rng.normal(0.0, NOISE_M, (len(B), 3))
    pos, quat, err = B[:, :3, 3].copy(), quat_wxyz(B), np.full(len(B), 1e-4)
    quat[1::2] *= -1.0  # the same rotation, the other sign: the mean must not cancel
    pos[::k] = np.nan  # the first reading of every pose: not seen
    n = len(B)
    data = ErrorDataset(
        RobotIdentity.of(kinematics),
        ("rad",) * J,
        np.array(["train"] * n),
        np.zeros(n, dtype=np.int64),
        0.01 * np.arange(n),
        q_s,
        q_s + rng.normal(0, 1e-5, q_s.shape),
        pos,
        quat,
        err,
    )
    return data, true


def test_readings_of_a_pose_are_averaged_into_one_row(kinematics: Kinematics) -> None:
    data, true = _repeated(kinematics, 200, 9, seed=4)
    readings = clean(data)
    np.testing.assert_array_equal(groups(readings), np.repeat(np.arange(200), 9))
    merged = average_repeats(readings)
    assert merged.dataset.n_rows == 200
    assert merged.tracked.all()
    assert merged.counts["repeats_merged"] == 200 * 8
    np.testing.assert_allclose(merged.dataset.q_measured, data.q_measured.reshape(200, 9, -1).mean(axis=1))
    one_t, one_r = pose_gap(poses(data.marker_pos_m[1::9], data.marker_quat_wxyz[1::9]), true)
    mean_t, mean_r = pose_gap(poses(merged.dataset.marker_pos_m, merged.dataset.marker_quat_wxyz), true)
    # 8 usable readings: the noise shrinks by sqrt(8) ~ 2.8 (at least 2x on 200 poses)
    assert mean_t.mean() < 0.5 * one_t.mean()
    assert mean_r.mean() < 0.5 * one_r.mean()


def test_the_spread_of_the_readings_measures_one_readings_gap(kinematics: Kinematics) -> None:
    data, true = _repeated(kinematics, 300, 5, seed=5)
    readings = clean(data)
    merged = average_repeats(readings)
    seen = readings.tracked
    T = poses(data.marker_pos_m[seen], data.marker_quat_wxyz[seen])
    gap = single_reading_gap(
        T, groups(readings)[seen], poses(merged.dataset.marker_pos_m, merged.dataset.marker_quat_wxyz)
    )
    assert gap is not None
    t_true, r_true = pose_gap(T, np.repeat(true, 5, axis=0)[seen])
    assert abs(gap[0] / t_true.mean() - 1.0) < 0.1
    assert abs(gap[1] / r_true.mean() - 1.0) < 0.1


def test_a_continuous_motion_has_groups_of_one(kinematics: Kinematics) -> None:
    data, _ = _repeated(kinematics, 50, 1, seed=6)
    merged = average_repeats(clean(data))
    assert merged.dataset.n_rows == 50
    assert merged.counts["repeats_merged"] == 0
    assert single_reading_gap(np.tile(np.eye(4), (50, 1, 1)), np.arange(50), np.tile(np.eye(4), (50, 1, 1))) is None
