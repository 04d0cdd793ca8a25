"""From a dataset to an error model: calibrate, label every sample with its actual joints, train NN1 and NN2.

1. :func:`~.dataset_cleaning.clean` drops rows with non-finite joints and marks the rows with a usable marker pose
   (the counts are reported); :func:`~.repeats.average_repeats` merges the repeated readings of each settled pose
   into one row (their spread is the tracker's noise: :attr:`Labelled.single_reading_gap`);
2. kinematic calibration (:mod:`~.kinematic_calibration`: joint offsets, ratios and wrist couplings with X and
   Y) on the (measured joints, marker pose) pairs of the training set, or with ``kinematic=False`` the hand-eye
   calibration alone (:mod:`~.hand_eye`, the nominal model), unless a calibration is given;
3. the actual tip pose of every tracked row, Y B X^-1, and its actual joints (:mod:`~.actual_joints`);
4. NN1 on every training row (setpoint [+ history] -> measured - setpoint), NN2 on the tracked training rows
   (measured [+ history] -> actual - calibrated, the calibrated joints m(measured) of the joint map; the
   nominal model's are the measured ones); the history is the previous row's measured joints of the same
   segment, as the injector sees it;
5. unless ``plain``: each network's guard (:mod:`~.support`): blocks of consecutive rows (15 %) are kept from its
   fit; its training support is that of the rows it was fitted to, and its joint mask keeps the joints whose
   (support-weighted) offsets lower the squared error on the kept blocks.

The tool frame of the calibration is the needle tip (rigidly on the last link, so X = T_tip_marker is constant).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from cosim_validation.error_injection.actual_joints import actual_joints
from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.dataset_cleaning import DEFAULT_MAX_REGISTRATION_ERROR_M, CleanedDataset, clean
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.features import FeatureSpec, feature_matrix, setpoint_steps
from cosim_validation.error_injection.hand_eye import HandEye
from cosim_validation.error_injection.kinematic_calibration import KinematicCalibration
from cosim_validation.error_injection.labelling_calibration import (
    calibrated,
    calibration_rows,
    last_moves,
    marker_reading_gap,
    single_tip_reading_gap,
)
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.repeats import average_repeats, groups
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.error_injection.support import Guard, joint_mask, residual_spread, support_of
from cosim_validation.error_injection.training import (
    MIN_TRAINING_ROWS,
    TrainedNetwork,
    TrainingSettings,
    check_rows,
    search,
    train_network,
)
from cosim_validation.error_injection.transforms import poses
from cosim_validation.robots.model import Kinematics

#: A tracked pose the actual joints miss by more than this is not used for NN2 (counted as ``ik_unreached``) [m].
IK_TOLERANCE_M = 1e-4
#: Consecutive rows per validation block of a guard, and the share of blocks kept for validation.
VALIDATION_BLOCK_ROWS = 50
VALIDATION_SHARE = 0.15


@dataclass(frozen=True)
class Labelled:
    """A cleaned dataset with the actual joints of its tracked rows.

    Attributes:
        cleaned: The rows kept, which are tracked, and the counts of what was dropped.
        hand_eye: The calibration used.
        q_actual: (n, J) actual joints [rad, or m for a prismatic joint]; NaN on rows without a usable marker
            pose or whose pose the joints do not reach within :data:`IK_TOLERANCE_M` (next to a singularity).
        ik_residual_m: (n,) tip position the actual joints leave unexplained [m]; NaN likewise.
        single_reading_gap: Mean position [m] and rotation [rad] gap of one tracked reading from the pose it
            measures, from the spread of repeated readings (None without repeats): what even a perfect model
            leaves against single tracked samples.
        settled: (n,) bool: the row averages several readings of a settled pose (None: not known, none).
        dataset_hash: :meth:`~.dataset.ErrorDataset.content_hash` of the dataset as given (before cleaning).
        kinematic: The kinematic calibration (None: the nominal model, hand-eye alone).
        marker_reading_gap: Mean position [m] and rotation [rad] gap of one tracked reading of the marker from
            the pose it measures (from the repeats; None without): the tracker's floor under the calibration's
            residuals, which are those of the marker (the mean of k readings: about 1 / sqrt(k) of it).
    """

    cleaned: CleanedDataset
    hand_eye: HandEye
    q_actual: np.ndarray
    ik_residual_m: np.ndarray
    single_reading_gap: tuple[float, float] | None = None
    settled: np.ndarray | None = None
    dataset_hash: str = ""
    kinematic: KinematicCalibration | None = None
    marker_reading_gap: tuple[float, float] | None = None

    def calibrated_joints(self) -> np.ndarray:
        """(n, J) the calibrated model's joints of the measured ones (the measured joints without a calibration)."""
        q = self.data.q_measured
        return q if self.kinematic is None else self.kinematic.joint_map.apply(q, last_moves(self.data))

    def settled_rows(self) -> np.ndarray:
        """(n,) bool: rows averaged from several readings of a settled pose (all False for a dataset without)."""
        return np.zeros(self.data.n_rows, dtype=bool) if self.settled is None else self.settled

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


def label(
    dataset: ErrorDataset,
    kinematics: Kinematics,
    hand_eye: HandEye | None = None,
    max_registration_error_m: float = DEFAULT_MAX_REGISTRATION_ERROR_M,
    kinematic: bool = True,
) -> Labelled:
    """Clean ``dataset``, calibrate on its tracked training rows (unless ``hand_eye`` is given), label every row.

    Args:
        dataset: As read or collected.
        kinematics: The nominal arm and needle; the dataset must be recorded on it.
        hand_eye: A calibration to use; None: calibrated here.
        max_registration_error_m: Marker poses with a larger registration error are not used [m].
        kinematic: Calibrate the joint offsets, ratios and wrist couplings with X and Y (False: X and Y alone,
            the nominal model).

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
    readings = clean(dataset, max_registration_error_m)
    cleaned = average_repeats(readings)
    settled = np.bincount(groups(readings)) > 1
    data, tracked = cleaned.dataset, cleaned.tracked
    B = poses(data.marker_pos_m[tracked], data.marker_quat_wxyz[tracked])
    calibration, start, moves = None, data.q_measured[tracked], last_moves(data)[tracked]
    if hand_eye is None:
        rows = calibration_rows(data.set_name[tracked] == "train", settled[tracked], kinematic)
        hand_eye, calibration = calibrated(kinematics, start[rows], moves[rows], B[rows], kinematic)
    if calibration is not None:
        start = calibration.joint_map.apply(start, moves)
    gap = single_tip_reading_gap(
        readings, hand_eye, poses(data.marker_pos_m, np.nan_to_num(data.marker_quat_wxyz, nan=1.0))
    )
    q_actual = np.full(data.q_measured.shape, np.nan)
    residual = np.full(data.n_rows, np.nan)
    if tracked.any():
        solved = actual_joints(kinematics, start, hand_eye.actual_tool_poses(B))
        q_actual[tracked], residual[tracked] = solved.q, solved.position_residual_m
    unreached = tracked & ~(residual <= IK_TOLERANCE_M)  # near a singularity no small joint change reaches it
    q_actual[unreached] = np.nan
    cleaned.counts["ik_unreached"] = int(unreached.sum())
    marker_gap = marker_reading_gap(readings, poses(data.marker_pos_m, np.nan_to_num(data.marker_quat_wxyz, nan=1.0)))
    return Labelled(
        cleaned, hand_eye, q_actual, residual, gap, settled, dataset.content_hash(), calibration, marker_gap
    )


@dataclass(frozen=True)
class LearnSettings:
    """What to train.

    Attributes:
        nn1_features, nn2_features: ``OC``, ``CP``, ``CPE`` or ``CS`` ([Barragan et al. 2024]'s best: CPE for both;
            here CS for NN1: docs/ERRORS.md, "Diagnosis").
        training: Hyper-parameters ([Barragan et al. 2024]'s by default).
        search: Try :data:`~.training.SEARCH_GRID` and keep the best on the validation rows.
        plain: No guards: the networks fitted to every row and injected everywhere (the model before guards).
    """

    nn1_features: str = "CS"
    nn2_features: str = "CPE"
    training: TrainingSettings = field(default_factory=TrainingSettings)
    search: bool = False
    plain: bool = False


def _fit(spec: FeatureSpec, x: np.ndarray, y: np.ndarray, settings: LearnSettings, what: str) -> TrainedNetwork:
    if settings.search:
        return search(spec, x, y, settings.training, what)[0]
    return train_network(spec, x, y, settings.training, what)


def validation_blocks(n_rows: int, seed: int) -> np.ndarray:
    """(n,) bool: rows kept for a guard's validation.

    Whole blocks of :data:`VALIDATION_BLOCK_ROWS` consecutive rows (a random share :data:`VALIDATION_SHARE` of
    them, at least one), so they are not the neighbours of rows the network was fitted to.

    Args:
        n_rows: n, the number of rows.
        seed: Seed of the blocks drawn.
    """
    block = np.arange(n_rows) // VALIDATION_BLOCK_ROWS
    n_blocks = int(block[-1]) + 1 if n_rows else 0
    k = max(1, round(VALIDATION_SHARE * n_blocks))
    chosen = np.random.default_rng(seed).choice(n_blocks, size=min(k, n_blocks), replace=False)
    return np.isin(block, chosen)


def fit_guarded(
    spec: FeatureSpec, x: np.ndarray, y: np.ndarray, settings: LearnSettings, what: str
) -> tuple[TrainedNetwork, Guard | None]:
    """The network and its guard (None when ``plain``).

    Args:
        spec: The feature set of ``x``.
        x: Features, shape (n, F).
        y: Joint-offset targets, shape (n, J), in [rad] (or [m] for a prismatic joint).
        settings: What to train (``plain``: no guard; the training seed also draws the validation blocks).
        what: The network's name in messages.
    """
    if settings.plain:
        return _fit(spec, x, y, settings, what), None
    check_rows(x, y, what)
    held = validation_blocks(len(x), settings.training.seed)
    trained = _fit(spec, x[~held], y[~held], settings, f"{what}, without its validation blocks")
    net = trained.network
    guard = support_of((x[~held] - net.x_mean) / net.x_std, settings.training.seed)
    guard = replace(guard, mask=np.ones(spec.n_joints, dtype=bool))
    z_held = (x[held] - net.x_mean) / net.x_std
    predicted = guard.weight(z_held)[:, None] * net.predict(x[held])
    mask = joint_mask(y[held], predicted)
    rows = np.flatnonzero(held)
    spread = residual_spread(y[held] - predicted * mask, np.diff(rows) == 1)  # what the injected offsets leave
    # its rows: every row it was given, the validation blocks included (as sklearn's own validation rows are)
    return replace(trained, train_rows=len(x)), replace(guard, mask=mask, spread=spread)


def _prefer(rows: np.ndarray, preferred: np.ndarray, preferred_what: str, what: str) -> tuple[np.ndarray, str]:
    """The ``preferred`` rows if there are enough to train on, else all ``rows``; and which, for messages.

    NN1 learns the controller error of motion, so it prefers the rows sampled in motion (continuous training
    motion) over settled ones (no lag there); NN2 learns where the links are, which averaged readings of a settled
    pose tell best. A dataset without repeated readings (a CSV) trains both on every row, as [Barragan et al. 2024]
    does.
    """
    if int(preferred.sum()) >= MIN_TRAINING_ROWS:
        return preferred, preferred_what
    return rows, what


def learn(labelled: Labelled, settings: LearnSettings, source: str = "dataset") -> tuple[ErrorModel, dict[str, Any]]:
    """NN1 and NN2 from the training rows of ``labelled``; the model and a JSON report of how it went.

    Args:
        labelled: The cleaned, labelled dataset.
        settings: What to train.
        source: Where the dataset came from, stored in the report.

    Raises:
        DatasetError: Too few training rows (naming the minimum) for either network.
    """
    data = labelled.data
    n_joints = data.robot.n_joints
    starts, previous = data.segment_starts(), labelled.previous_measured()
    step = setpoint_steps(data.q_setpoint, starts)
    train, settled = data.set_name == "train", labelled.settled_rows()
    spec1, spec2 = FeatureSpec(settings.nn1_features, n_joints), FeatureSpec(settings.nn2_features, n_joints)
    x1 = feature_matrix(spec1, data.q_setpoint, previous, starts, step)
    x2 = feature_matrix(spec2, data.q_measured, previous, starts, step)
    if settled.any():  # the collection's settled steps are known: the rows between them are the motion
        rows1, what1 = _prefer(train, train & ~settled, "NN1 (training rows in motion)", "NN1 (training rows)")
    else:  # nothing tells settled rows from moving ones (a CSV of quasi-static poses, say): every row
        rows1, what1 = train, "NN1 (training rows)"
    nn1, guard1 = fit_guarded(spec1, x1[rows1], (data.q_measured - data.q_setpoint)[rows1], settings, what1)
    labelled_rows = train & np.isfinite(labelled.q_actual).all(axis=1)
    rows2, what2 = _prefer(
        labelled_rows, labelled_rows & settled, "NN2 (settled tracked training rows)", "NN2 (tracked training rows)"
    )
    target2 = labelled.q_actual - labelled.calibrated_joints()
    nn2, guard2 = fit_guarded(spec2, x2[rows2], target2[rows2], settings, what2)
    kin = labelled.kinematic
    report = {
        "source": source,
        "rows": labelled.cleaned.counts,
        "calibration": labelled.hand_eye.summary(),
        "kinematic_calibration": None if kin is None else kin.summary(data.robot.joint_names),
        "nn1": nn1.to_json() | {"features": spec1.kind, "rows_used": what1} | _guard_json(guard1),
        "nn2": nn2.to_json() | {"features": spec2.kind, "rows_used": what2} | _guard_json(guard2),
    }
    source_hash = labelled.dataset_hash or data.content_hash()
    guards = {key: g for key, g in (("nn1", guard1), ("nn2", guard2)) if g is not None}
    joint_map = None if kin is None else kin.joint_map
    return ErrorModel(data.robot, nn1.network, nn2.network, source_hash, report, guards, joint_map), report


def _guard_json(guard: Guard | None) -> dict[str, Any]:
    """The injected joints (``mask``; None: no guard, every joint) and the residual spread (``spread``; None: none)."""
    if guard is None:
        return {"mask": None, "spread": None}
    return {"mask": [bool(m) for m in guard.mask], "spread": None if guard.spread is None else guard.spread.to_json()}
