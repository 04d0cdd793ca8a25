"""The hazard detector one sample at a time, for a live monitor: the same comparisons as :func:`detect`.

:func:`~cosim_validation.hazards.detector.detect` judges a whole record at once (numpy over the samples); this
class judges each pair of samples (robot, model) as it arrives, with the same thresholds and the same strict
comparisons, so a live alarm is raised at exactly the sample the offline detector flags.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from cosim_validation.hazards.detector import DetectorSettings


class Alarm(NamedTuple):
    """The detector's answer for one sample.

    Attributes:
        t_s: Sample time [s].
        deviation_m: Tip distance robot vs model [m].
        tip: Tip deviation above the threshold.
        joint: Some joint above the joint threshold.
        tracker: Second detector: the robot's tracker disagrees with its encoders (or reports nothing).
    """

    t_s: float
    deviation_m: float
    tip: bool
    joint: bool
    tracker: bool


class OnlineDetector:
    """Robot vs model, sample by sample (see :mod:`~cosim_validation.hazards.detector`)."""

    def __init__(self, settings: DetectorSettings) -> None:
        self.settings = settings

    def push(
        self,
        t_s: float,
        robot_tip_m: np.ndarray,
        model_tip_m: np.ndarray,
        robot_q: np.ndarray,
        model_q: np.ndarray,
        tracker_tip_m: np.ndarray,
    ) -> Alarm:
        """One sample: tips (3,) [m] from each robot's encoders, joints (J,), the robot's tracker tip (3,) [m]."""
        deviation_m = float(np.linalg.norm(np.asarray(robot_tip_m) - np.asarray(model_tip_m)))
        joint = bool(np.any(np.abs(np.asarray(robot_q) - np.asarray(model_q)) > self.settings.joint_threshold))
        tracker = False
        if math.isfinite(self.settings.tracker_threshold_m):
            residual_m = float(np.linalg.norm(np.asarray(tracker_tip_m) - np.asarray(robot_tip_m)))
            tracker = not residual_m <= self.settings.tracker_threshold_m
        return Alarm(float(t_s), deviation_m, deviation_m > self.settings.threshold_m, joint, tracker)
