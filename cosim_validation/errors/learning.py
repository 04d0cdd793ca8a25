"""From a dataset to an error model: calibrate, label every sample with its actual joints, train NN1 and NN2.

1. :func:`~.dataset_cleaning.clean` drops rows with non-finite joints and marks the rows with a usable marker pose
   (the counts are reported);
2. hand-eye calibration (:mod:`~.hand_eye`) on the (FK(measured joints), marker pose) pairs of the training set,
   unless a calibration is given;
3. the actual tip pose of every tracked row, Y B X^-1, and its actual joints (:mod:`~.actual_joints`);
4. NN1 on every training row (setpoint [+ history] -> measured - setpoint), NN2 on the tracked training rows
   (measured [+ history] -> actual - measured); the history is the previous row's measured joints of the same
   segment, as the injector sees it.

The tool frame of the calibration is the needle tip (rigidly on the last link, so X = T_tip_marker is constant).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim_validation.errors.actual_joints import actual_joints
from cosim_validation.errors.dataset import ErrorDataset
from cosim_validation.errors.dataset_cleaning import DEFAULT_MAX_REGISTRATION_ERROR_M, CleanedDataset, clean
from cosim_validation.errors.error_types import DatasetError
from cosim_validation.errors.features import FeatureSpec, feature_matrix
from cosim_validation.errors.hand_eye import HandEye, calibrate
from cosim_validation.errors.model_file import ErrorModel
from cosim_validation.errors.robot_identity import RobotIdentity
from cosim_validation.errors.training import TrainedNetwork, TrainingSettings, search, train_network
from cosim_validation.errors.transforms import poses
from cosim_validation.robot import Kinematics

#: A tracked pose the actual joints miss by more than this is not used for NN2 (counted as ``ik_unreached``) [m].
IK_TOLERANCE_M = 1e-4


@dataclass(frozen=True)
class Labelled:
    """A cleaned dataset with the actual joints of its tracked rows.

    Attributes:
        cleaned: The rows kept, which are tracked, and the counts of what was dropped.
        hand_eye: The calibration used.
        q_actual: (n, J) actual joints [rad]; NaN on rows without a usable marker pose or whose pose the joints
            do not reach within :data:`IK_TOLERANCE_M` (next to a singularity).
        ik_residual_m: (n,) tip position the actual joints leave unexplained [m]; NaN likewise.
    """

    cleaned: CleanedDataset
    hand_eye: HandEye
    q_actual: np.ndarray
    ik_residual_m: np.ndarray

    @property
    def data(self) -> ErrorDataset:
        """The kept rows."""
        return self.cleaned.dataset

    def previous_measured(self) -> np.ndarray:
        """(n, J) the measured joints of the row before in the same segment (the row itself at a start)."""
        q = self.data.q_measured
        previous = np.vstack((q[:1], q[:-1]))
        starts = self.data.segment_starts()
        previous[starts] = q[starts]
        return previous

    def actual_tip_poses(self) -> np.ndarray:
        """(n, 4, 4) the tracked tip poses Y B X^-1 in base_link (NaN on untracked rows)."""
        B = poses(self.data.marker_pos_m, np.nan_to_num(self.data.marker_quat_wxyz, nan=1.0))
        T = self.hand_eye.actual_tool_poses(B)
        T[~self.cleaned.tracked] = np.nan
        return T


def label(dataset: ErrorDataset, kinematics: Kinematics, hand_eye: HandEye | None = None,
          max_registration_error_m: float = DEFAULT_MAX_REGISTRATION_ERROR_M) -> Labelled:  # fmt: skip
    """Clean ``dataset``, calibrate on its tracked training rows (unless ``hand_eye`` is given), label every row.

    Raises:
        DatasetError: The dataset is another robot's.
        CalibrationError: Too few tracked training rows, or motion that leaves the calibration open.
    """
    identity = RobotIdentity.of(kinematics)
    if dataset.robot != identity:
        raise DatasetError(
            f"dataset: recorded on another robot (joints {list(dataset.robot.joint_names)}, model hash "
            f"{dataset.robot.model_hash[:12]}...), not this one ({identity.model_hash[:12]}...)"
        )
    cleaned = clean(dataset, max_registration_error_m)
    data, tracked = cleaned.dataset, cleaned.tracked
    B = poses(data.marker_pos_m[tracked], data.marker_quat_wxyz[tracked])
    A = np.stack([kinematics.tip_transform(q) for q in data.q_measured[tracked]]) if tracked.any() else B
    if hand_eye is None:
        train = data.set_name[tracked] == "train"
        hand_eye = calibrate(A[train], B[train])
    q_actual = np.full(data.q_measured.shape, np.nan)
    residual = np.full(data.n_rows, np.nan)
    if tracked.any():
        solved = actual_joints(kinematics, data.q_measured[tracked], hand_eye.actual_tool_poses(B))
        q_actual[tracked], residual[tracked] = solved.q, solved.position_residual_m
    unreached = tracked & ~(residual <= IK_TOLERANCE_M)  # near a singularity no small joint change reaches it
    q_actual[unreached] = np.nan
    cleaned.counts["ik_unreached"] = int(unreached.sum())
    return Labelled(cleaned, hand_eye, q_actual, residual)


@dataclass(frozen=True)
class LearnSettings:
    """What to train.

    Attributes:
        nn1_features, nn2_features: ``OC``, ``CP`` or ``CPE`` (seed 001's best: CPE for both).
        training: Hyper-parameters (seed 001's by default).
        search: Try :data:`~.training.SEARCH_GRID` and keep the best on the validation rows.
    """

    nn1_features: str = "CPE"
    nn2_features: str = "CPE"
    training: TrainingSettings = field(default_factory=TrainingSettings)
    search: bool = False


def _fit(spec: FeatureSpec, x: np.ndarray, y: np.ndarray, settings: LearnSettings, what: str) -> TrainedNetwork:
    if settings.search:
        return search(spec, x, y, settings.training, what)[0]
    return train_network(spec, x, y, settings.training, what)


def learn(labelled: Labelled, settings: LearnSettings, source: str = "dataset") -> tuple[ErrorModel, dict[str, Any]]:
    """NN1 and NN2 from the training rows of ``labelled``; the model and a JSON report of how it went.

    Raises:
        DatasetError: Too few training rows (naming the minimum) for either network.
    """
    data = labelled.data
    n_joints = data.robot.n_joints
    starts, previous = data.segment_starts(), labelled.previous_measured()
    train = data.set_name == "train"
    spec1, spec2 = FeatureSpec(settings.nn1_features, n_joints), FeatureSpec(settings.nn2_features, n_joints)
    x1 = feature_matrix(spec1, data.q_setpoint, previous, starts)
    x2 = feature_matrix(spec2, data.q_measured, previous, starts)
    nn1 = _fit(spec1, x1[train], (data.q_measured - data.q_setpoint)[train], settings, "NN1 (training rows)")
    rows2 = train & np.isfinite(labelled.q_actual).all(axis=1)
    nn2 = _fit(spec2, x2[rows2], (labelled.q_actual - data.q_measured)[rows2], settings, "NN2 (tracked training rows)")
    report = {
        "source": source,
        "rows": labelled.cleaned.counts,
        "calibration": labelled.hand_eye.summary(),
        "nn1": nn1.to_json() | {"features": spec1.kind},
        "nn2": nn2.to_json() | {"features": spec2.kind},
    }
    return ErrorModel(data.robot, nn1.network, nn2.network, data.content_hash(), report), report
