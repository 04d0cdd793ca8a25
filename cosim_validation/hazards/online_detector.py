"""The hazard detector one sample at a time, for a live monitor: the same comparisons as :func:`detect`.

:func:`~cosim_validation.hazards.detector.detect` judges a whole record at once (numpy over the samples); this
class judges each pair of samples (robot, model) as it arrives, with the same thresholds and the same strict
comparisons, so a live alarm is raised at exactly the sample the offline detector flags. The command progress
(:mod:`~cosim_validation.hazards.command_progress`) needs the previous sample: :meth:`OnlineDetector.reset` at the
start of each case.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from cosim_validation.hazards.command_progress import step_progress
from cosim_validation.hazards.detector import DetectorSettings


class Alarm(NamedTuple):
    """The detector's answer for one sample.

    Attributes:
        t_s: Sample time [s].
        deviation_m: Tip distance robot vs model [m].
        tip: Tip deviation above the threshold.
        joint: Some joint above the joint threshold.
        tracker: Second detector: the robot's tracker disagrees with its encoders (or reports nothing).
        progress: Second detector: the robot's command progress ``|rho - 1|`` is above its threshold.
        progress_value: That ``|rho - 1|`` [1]; NaN where not judged (first sample, small step, no setpoint).
    """

    t_s: float
    deviation_m: float
    tip: bool
    joint: bool
    tracker: bool
    progress: bool = False
    progress_value: float = math.nan

    @property
    def detectors(self) -> tuple[str, ...]:
        """The names of the detectors that alarm: among ``tip``, ``joint``, ``tracker``, ``progress``."""
        flags = (("tip", self.tip), ("joint", self.joint), ("tracker", self.tracker), ("progress", self.progress))
        return tuple(name for name, on in flags if on)


class OnlineDetector:
    """Robot vs model, sample by sample (see :mod:`~cosim_validation.hazards.detector`)."""

    def __init__(self, settings: DetectorSettings) -> None:
        self.settings = settings
        self._previous: tuple[np.ndarray, np.ndarray] | None = None  # (setpoint, measured) of the last sample

    def reset(self) -> None:
        """A new case: the next sample is a first sample (no command progress)."""
        self._previous = None

    def push(
        self,
        t_s: float,
        robot_tip_m: np.ndarray,
        model_tip_m: np.ndarray,
        robot_q: np.ndarray,
        model_q: np.ndarray,
        tracker_tip_m: np.ndarray,
        q_setpoint: np.ndarray | None = None,
    ) -> Alarm:
        """Judge one sample of the robot against its model.

        Args:
            t_s: Sample time in [s].
            robot_tip_m: The robot's tip from its encoders, in base_link, shape (3,), in [m].
            model_tip_m: The model's tip from its encoders, in base_link, shape (3,), in [m].
            robot_q: The robot's measured joints, shape (J,), in [rad] (or [m] for a prismatic joint).
            model_q: The model's measured joints, shape (J,), same units.
            tracker_tip_m: The robot's tracked tip, in base_link, shape (3,), in [m].
            q_setpoint: The clean setpoint of the sample, shape (J,), for the command progress; None: not judged.
        """
        deviation_m = float(np.linalg.norm(np.asarray(robot_tip_m) - np.asarray(model_tip_m)))
        joint = bool(np.any(np.abs(np.asarray(robot_q) - np.asarray(model_q)) > self.settings.joint_threshold))
        tracker = False
        if math.isfinite(self.settings.tracker_threshold_m):
            residual_m = float(np.linalg.norm(np.asarray(tracker_tip_m) - np.asarray(robot_tip_m)))
            tracker = not residual_m <= self.settings.tracker_threshold_m
        value = math.nan
        if q_setpoint is not None:
            setpoint, measured = np.asarray(q_setpoint, dtype=np.float64), np.asarray(robot_q, dtype=np.float64)
            if self._previous is not None:
                value = step_progress(self._previous[0], setpoint, self._previous[1], measured)
            self._previous = (setpoint.copy(), measured.copy())
        progress = bool(value > self.settings.progress_threshold)  # NaN (not judged) never alarms
        tip = deviation_m > self.settings.threshold_m
        return Alarm(float(t_s), deviation_m, tip, joint, tracker, progress, value)
