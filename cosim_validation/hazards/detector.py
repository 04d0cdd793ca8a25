"""The hazard detector of [Li et al. 2016]: the robot against its fault-free model, sample by sample.

The nominal model is the virtual robot fed the clean commands ([Li et al. 2016]'s dynamic model run alongside the
robot); the physical robot is the one that may be faulty. At every sample the detector compares

- the needle tips, both from each robot's measured joints through the nominal kinematics ([Li et al. 2016] compares the
  end-effector positions): an alarm when they are more than ``threshold_m`` apart ([Li et al. 2016]: 3 mm);
- every joint: an alarm when a joint of the robot is more than ``joint_threshold`` from the model's;
- (second detector) the physical robot's own two views of its tip, the external tracker against the forward
  kinematics of its encoders: an alarm when they disagree by more than ``tracker_threshold_m`` or the tracker
  reports nothing. It sees what the first cannot: a tracker that drops out, freezes or drifts while the joints
  move as commanded. With ``progress_threshold`` the second detector also checks the robot against its own
  commands (:mod:`~cosim_validation.hazards.command_progress`): commands applied out of order make it stutter.

Everything here is vectorised over the samples of a record, so the same verdicts come from a campaign's stored
records, a replayed bag, or :class:`~cosim_validation.hazards.online_detector.OnlineDetector` fed one sample at a
time.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.hazards.command_progress import command_progress

#: Seed 003's threshold on the tip deviation [m], the documented fallback when none is derived or set.
SEED_003_THRESHOLD_M = 0.003


@dataclass(frozen=True)
class DetectorSettings:
    """Alarm thresholds.

    Attributes:
        threshold_m: Tip deviation robot vs model that raises the alarm [m].
        joint_threshold: Per-joint deviation that raises it [rad, or m for a prismatic joint]; inf = off.
        tracker_threshold_m: Second detector: tracker vs encoder forward kinematics of the robot [m]; inf = off.
        progress_threshold: Second detector: largest ``|rho - 1|`` of the command progress [1]; inf = off.
    """

    threshold_m: float = SEED_003_THRESHOLD_M
    joint_threshold: float = math.inf
    tracker_threshold_m: float = math.inf
    progress_threshold: float = math.inf


@dataclass(frozen=True)
class Detection:
    """The detector's view of one case.

    Attributes:
        t_s: (n,) sample times [s].
        deviation_m: (n,) tip distance robot vs model [m].
        joint_deviation: (n, J) ``|robot - model|`` per joint [rad | m].
        tracker_residual_m: (n,) tracker vs encoder-FK tip of the robot [m]; NaN where the tracker gave nothing.
        tip_alarm: (n,) deviation above the threshold.
        joint_alarm: (n,) some joint above its threshold.
        tracker_alarm: (n,) second detector: residual above its threshold, or no tracker reading (when enabled).
        progress: (n,) ``|rho - 1|`` of the robot's command progress; NaN where not judged.
        progress_alarm: (n,) second detector: progress above its threshold (when enabled).
    """

    t_s: np.ndarray
    deviation_m: np.ndarray
    joint_deviation: np.ndarray
    tracker_residual_m: np.ndarray
    tip_alarm: np.ndarray
    joint_alarm: np.ndarray
    tracker_alarm: np.ndarray
    progress: np.ndarray
    progress_alarm: np.ndarray

    @property
    def alarm(self) -> np.ndarray:
        """(n,) any alarm of the first detector (tip or joint)."""
        return np.asarray(self.tip_alarm | self.joint_alarm, dtype=bool)

    @property
    def second_alarm(self) -> np.ndarray:
        """(n,) any alarm of the second detector (tracker or command progress)."""
        return np.asarray(self.tracker_alarm | self.progress_alarm, dtype=bool)

    def first_alarm_s(self, second: bool = False) -> float:
        """Time of the first alarm [s] (``second``: of the second detector); NaN if none.

        Args:
            second: True: the first alarm of the second detector (tracker or command progress); False: of the first
                (tip or joint).
        """
        alarm = self.second_alarm if second else self.alarm
        hits = np.flatnonzero(alarm)
        return float(self.t_s[hits[0]]) if len(hits) else math.nan


def deviations(physical: TrajectoryRecord, model: TrajectoryRecord) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sample: tip deviation [m] (n,), joint deviation (n, J), tracker residual of ``physical`` [m] (n,).

    Args:
        physical: The case's record of the physical robot (possibly faulty); its tracked tip gives the residual.
        model: The same case's record of the fault-free model: the same joints and sample times (the shorter record
            sets n).

    Raises:
        InputError: The records are not of the same case (other joints or other sample times).
    """
    if physical.joint_names != model.joint_names:
        raise InputError(f"detector: {physical.test_id}: the robot and the model have other joints")
    n = min(len(physical.t_s), len(model.t_s))  # a robot lost during the case answers fewer samples
    if not np.allclose(physical.t_s[:n], model.t_s[:n], atol=1e-6):
        raise InputError(f"detector: {physical.test_id}: the robot and the model were sampled at other times")
    deviation_m = np.linalg.norm(physical.tip_pos_m[:n] - model.tip_pos_m[:n], axis=1)
    joint_deviation = np.abs(physical.q_measured[:n] - model.q_measured[:n])
    residual_m = np.linalg.norm(physical.actual_tip_pos_m[:n] - physical.tip_pos_m[:n], axis=1)
    return deviation_m, joint_deviation, residual_m


def detect(physical: TrajectoryRecord, model: TrajectoryRecord, settings: DetectorSettings) -> Detection:
    """Run the detector over a case: ``physical`` (possibly faulty) against ``model`` (fed the clean commands).

    Args:
        physical: The case's record of the physical robot (possibly faulty).
        model: The same case's record of the fault-free model: the same joints and sample times (the shorter record
            sets n).
        settings: The alarm thresholds (an infinite one turns its detector off).
    """
    deviation_m, joint_deviation, residual_m = deviations(physical, model)
    n = len(deviation_m)
    tracker = np.zeros(n, dtype=bool)
    if math.isfinite(settings.tracker_threshold_m):
        with np.errstate(invalid="ignore"):
            tracker = ~(residual_m <= settings.tracker_threshold_m)  # NaN (no reading) alarms too
    progress = command_progress(physical.q_setpoint[:n], physical.q_measured[:n])
    with np.errstate(invalid="ignore"):
        progress_alarm = progress > settings.progress_threshold  # NaN (not judged) never alarms
    return Detection(
        t_s=np.asarray(physical.t_s[:n], dtype=np.float64),
        deviation_m=deviation_m,
        joint_deviation=joint_deviation,
        tracker_residual_m=residual_m,
        tip_alarm=deviation_m > settings.threshold_m,
        joint_alarm=np.any(joint_deviation > settings.joint_threshold, axis=1),
        tracker_alarm=tracker,
        progress=progress,
        progress_alarm=progress_alarm,
    )


def derive_threshold(fault_free_maxima: np.ndarray, margin: float) -> float:
    """A threshold from fault-free runs: their largest deviation times ``margin`` (> 1).

    Args:
        fault_free_maxima: Each fault-free run's largest value of the detector's quantity, shape (r,), in its unit
            (e.g. the tip deviation in [m]); NaN entries are ignored.
        margin: The factor above the largest value, > 1.

    Returns:
        The threshold, in the unit of the maxima.

    Raises:
        InputError: No finite maximum, or a margin not above 1.
    """
    maxima = np.asarray(fault_free_maxima, dtype=np.float64)
    maxima = maxima[np.isfinite(maxima)]
    if not len(maxima):
        raise InputError("detector: no fault-free run to derive a threshold from")
    if not margin > 1.0:
        raise InputError(f"detector: the margin must be > 1, got {margin}")
    return float(maxima.max() * margin)
