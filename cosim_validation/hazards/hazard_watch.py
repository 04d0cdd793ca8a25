"""The hazard detector inside the control loop: robot vs twin at every answered setpoint, alarms, feedback force.

The lockstep loop (:class:`~cosim_validation.assembly.lockstep.Lockstep`) is where the twin's clean answer and
the physical robot's answer to the same setpoint meet: it waits for both before it streams the next setpoint.
So the watch runs there, in batch (in-process robots) and live (the controller node) alike: after each
exchange it pushes both answers through :class:`~cosim_validation.hazards.online_detector.OnlineDetector` and
:class:`~cosim_validation.hazards.feedback_force.FeedbackForceStream` and hands the result to its sink (live:
the controller publishes ``/cosim/hazards/alarms`` and ``/cosim/feedback_wrench``). With ``stop_on_alarm`` it
is also an :class:`~cosim_validation.assembly.supervision.AlarmSource` of the task supervisor: polled before
the next period's step, an active alarm raises the supervisor's ``events.alarm`` and the robot holds.

Tips are the nominal forward kinematics of each robot's measured joints, as in the stored records the offline
:func:`~cosim_validation.hazards.detector.detect` reads, so the alarms are the offline ones sample for sample.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import NamedTuple, Protocol

import numpy as np

from cosim_validation.exceptions import InputError
from cosim_validation.hazards.detector import DetectorSettings
from cosim_validation.hazards.feedback_force import FeedbackForceStream, FeedbackGains
from cosim_validation.hazards.online_detector import Alarm, OnlineDetector
from cosim_validation.robot import Kinematics

#: The name the watch's alarm has among the supervisor's alarm sources.
ALARM_SOURCE = "hazard_detector"

_KEYS = {"tip_mm": 1e-3, "joint": 1.0, "tracker_mm": 1e-3}


class Answer(Protocol):
    """What a robot answered to a setpoint (:class:`~cosim_validation.assembly.robot_port.Measurement`)."""

    @property
    def q_measured(self) -> np.ndarray:
        """(J,) measured joints (rad, or m for a prismatic joint)."""
        ...

    @property
    def tip_pos_m(self) -> np.ndarray:
        """(3,) the tracked tip, base_link [m]; NaN if none."""
        ...


class HazardSample(NamedTuple):
    """The watch's verdict on one answered setpoint.

    Attributes:
        test_id: The case.
        stamp_ns: The setpoint's stamp [ns of session time].
        alarm: The detector's answer (time, tip deviation, which detectors alarm).
        force_n: (3,) seed 003's feedback force, base_link [N] (zero within the threshold).
    """

    test_id: str
    stamp_ns: int
    alarm: Alarm
    force_n: np.ndarray

    @property
    def alarmed(self) -> bool:
        """Whether the first detector (tip or joint) alarms at this sample."""
        return self.alarm.tip or self.alarm.joint


def parse_detector(text: str, option: str = "--detector") -> DetectorSettings:
    """Thresholds from ``tip_mm=X[,joint=Y][,tracker_mm=Z]`` (joint: rad, or m for a prismatic joint).

    Raises:
        InputError: An unknown key, a missing tip threshold or a value that is not a positive number (naming
            ``option`` and the key).
    """
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, raw = part.partition("=")
        if not sep or key not in _KEYS:
            raise InputError(f"{option}: unknown key {key!r} in {text!r}; expected tip_mm=X[,joint=Y][,tracker_mm=Z]")
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not value > 0 or not math.isfinite(value):
            raise InputError(f"{option}: {key} must be a positive number, got {raw!r}")
        values[key] = value * _KEYS[key]
    if "tip_mm" not in values:
        raise InputError(f"{option}: tip_mm is required (the tip deviation threshold [mm]), got {text!r}")
    return DetectorSettings(values["tip_mm"], values.get("joint", math.inf), values.get("tracker_mm", math.inf))


def format_detector(settings: DetectorSettings) -> str:
    """The option string of ``settings`` (:func:`parse_detector` reads it back; infinite thresholds are left out)."""
    parts = [f"tip_mm={settings.threshold_m * 1e3!r}"]
    if math.isfinite(settings.joint_threshold):
        parts.append(f"joint={settings.joint_threshold!r}")
    if math.isfinite(settings.tracker_threshold_m):
        parts.append(f"tracker_mm={settings.tracker_threshold_m * 1e3!r}")
    return ",".join(parts)


def check_detector(detector: str | None, stop_on_alarm: bool, supervisor: object | None) -> DetectorSettings | None:
    """The thresholds of ``detector`` (None: no detector), checked before a run touches anything.

    Raises:
        InputError: Bad thresholds, or stop on alarm without a detector or without a ``supervisor``.
    """
    if stop_on_alarm and (detector is None or supervisor is None):
        raise InputError("stop on alarm needs a hazard detector (--detector) and a task supervisor (--supervisor)")
    return None if detector is None else parse_detector(detector)


class HazardWatch:
    """The detector and the feedback force of the loop's current case (see the module docstring).

    Args:
        settings: The alarm thresholds.
        kinematics: The nominal arm and needle (tips of the measured joints).
        stop_on_alarm: Also an alarm source of the supervisor (mitigation: the robot holds on an alarm).
        gains: The feedback force's spring-damper.
    """

    def __init__(
        self,
        settings: DetectorSettings,
        kinematics: Kinematics,
        stop_on_alarm: bool = False,
        gains: FeedbackGains | None = None,
    ) -> None:
        self.settings = settings
        self.kinematics = kinematics
        self.stop_on_alarm = stop_on_alarm
        self.detector = OnlineDetector(settings)
        self.force = FeedbackForceStream(settings.threshold_m, gains or FeedbackGains())
        #: Called with every sample's verdict (live: the controller publishes it); None: kept only in ``last``.
        self.sink: Callable[[HazardSample], None] | None = None
        self.test_id = ""
        self.last: HazardSample | None = None
        self.first_alarm_s = math.nan

    def start_case(self, test_id: str) -> None:
        """A new case: no alarm yet, the force's difference starts again."""
        self.test_id, self.last, self.first_alarm_s = test_id, None, math.nan
        self.force.reset()

    def push(self, t_s: float, stamp_ns: int, robot: Answer, model: Answer) -> HazardSample:
        """Judge the answers of the robot and of its fault-free model to the setpoint at case time ``t_s`` [s]."""
        q = np.stack([np.asarray(robot.q_measured, dtype=np.float64), np.asarray(model.q_measured, dtype=np.float64)])
        tips = self.kinematics.record_arrays(q).tip_pos_m
        alarm = self.detector.push(t_s, tips[0], tips[1], q[0], q[1], np.asarray(robot.tip_pos_m))
        sample = HazardSample(self.test_id, int(stamp_ns), alarm, self.force.push(t_s, tips[0], tips[1]))
        if sample.alarmed and math.isnan(self.first_alarm_s):
            self.first_alarm_s = float(t_s)
        self.last = sample
        if self.sink is not None:
            self.sink(sample)
        return sample

    def active_alarms(self, t_s: float) -> Mapping[str, str]:
        """The supervisor's view (when stopping on alarms): the detector's alarm at the last answered setpoint."""
        last = self.last
        if not self.stop_on_alarm or last is None or not last.alarmed:
            return {}
        kinds = "tip" if last.alarm.tip else "joint"
        return {ALARM_SOURCE: f"{kinds} deviation robot vs model {last.alarm.deviation_m * 1e3:.2f} mm at {t_s:.2f} s"}
