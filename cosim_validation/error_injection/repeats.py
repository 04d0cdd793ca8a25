"""Repeated settled samples of one pose, averaged into one row (the tracker's noise shrinks by sqrt(k)).

The collection (:mod:`~.collection`, ``repeats``) samples the robot several times at each settled step: the arm
stands still, the encoders and the optical tracker report k noisy readings of the same pose. One reading of the
marker is too noisy to label NN2 (at the ER3 Pro's tip the tracker's noise is about twice the kinematic error left
after the hand-eye calibration: docs/ERRORS.md, "Diagnosis"); their mean is sqrt(k) times less so.

A *group* is a run of consecutive rows of one segment with the same setpoint (bit for bit: the collection writes
the same vector k times; a continuous motion has groups of one). Its row keeps the first row's time and setpoint,
the mean of the measured joints, and the mean of the usable marker poses (position mean; orientation: the
normalised mean of the quaternions, signs aligned to the first, exact to second order for the small spreads of
one pose); a group none of whose readings is usable has no marker pose. The spread of the readings around their
mean is what one reading's noise is: :func:`single_reading_gap` measures it, the gap a perfect model still leaves
against one tracked sample (the floor of ``cosim errors evaluate``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from cosim_validation.error_injection.dataset_cleaning import CleanedDataset
from cosim_validation.error_injection.transforms import pose_gap


def groups(cleaned: CleanedDataset) -> np.ndarray:
    """(n,) int64 group index of every row (0, 1, ...): consecutive rows of a segment with equal setpoints.

    Args:
        cleaned: Rows with finite joints and their usable-marker mask.
    """
    data = cleaned.dataset
    new = data.segment_starts().copy()
    new[1:] |= (data.q_setpoint[1:] != data.q_setpoint[:-1]).any(axis=1)
    return np.cumsum(new).astype(np.int64) - 1


def _group_mean(values: np.ndarray, group: np.ndarray, weight: np.ndarray, n_groups: int) -> np.ndarray:
    """(G, D) weighted mean of ``values`` (n, D) per group (NaN where a group's weights are all 0)."""
    total = np.zeros((n_groups, values.shape[1]))
    np.add.at(total, group, np.where(weight[:, None], values, 0.0))
    count = np.bincount(group, weights=weight.astype(np.float64), minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        return total / count[:, None]


def average_repeats(cleaned: CleanedDataset) -> CleanedDataset:
    """One row per group of repeated readings; ``counts["repeats_merged"]`` is the number of rows merged away.

    Args:
        cleaned: Rows with finite joints and their usable-marker mask.
    """
    data, tracked = cleaned.dataset, cleaned.tracked
    group = groups(cleaned)
    n_groups = int(group[-1]) + 1 if len(group) else 0
    first = np.r_[True, group[1:] != group[:-1]] if len(group) else np.zeros(0, dtype=bool)
    everyone = np.ones(data.n_rows, dtype=bool)
    quat = np.nan_to_num(data.marker_quat_wxyz, nan=0.0)
    reference = quat[first][group]
    quat = np.where((np.sum(quat * reference, axis=1) < 0.0)[:, None], -quat, quat)
    mean_quat = _group_mean(quat, group, tracked, n_groups)
    mean_quat /= np.linalg.norm(mean_quat, axis=1, keepdims=True)
    seen = np.bincount(group, weights=tracked.astype(np.float64), minlength=n_groups) > 0
    merged = replace(
        data.rows(first),
        q_measured=_group_mean(data.q_measured, group, everyone, n_groups),
        marker_pos_m=_group_mean(np.nan_to_num(data.marker_pos_m), group, tracked, n_groups),
        marker_quat_wxyz=mean_quat,
        marker_error_m=_group_mean(np.nan_to_num(data.marker_error_m)[:, None], group, tracked, n_groups)[:, 0],
    )
    counts = dict(cleaned.counts) | {"repeats_merged": data.n_rows - n_groups, "tracked_poses": int(seen.sum())}
    return CleanedDataset(merged, seen, counts)


def single_reading_gap(T_readings: np.ndarray, group: np.ndarray, T_means: np.ndarray) -> tuple[float, float] | None:
    """Mean position [m] and rotation [rad] gap of one reading from the pose it measures, from the repeats.

    A reading's deviation from its group's mean of k readings underestimates its deviation from the true pose by
    sqrt((k - 1) / k); each deviation is scaled back by sqrt(k / (k - 1)).

    Args:
        T_readings: (n, 4, 4) tracked poses of the usable readings.
        group: (n,) their group indices.
        T_means: (G, 4, 4) each group's mean pose.

    Returns:
        The two means, or None when no group has two readings.
    """
    k = np.bincount(group, minlength=len(T_means))[group]
    several = k >= 2
    if not several.any():
        return None
    t, r = pose_gap(T_readings[several], T_means[group[several]])
    scale = np.sqrt(k[several] / (k[several] - 1.0))
    return float((t * scale).mean()), float((r * scale).mean())
