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
The command progress (the robot against its own commands, :mod:`~cosim_validation.hazards.command_progress`) is
judged from the setpoint the loop sent and the robot's measured joints, as from the records.

Every alarmed sample is also kept as an event (:meth:`HazardWatch.events`: kind ``hazard_alarm``, name the
detectors that alarm, detail :func:`alarm_detail`); a campaign stores them in its ``events`` table, as the
live controller publishes them on ``/cosim/hazards/alarms``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import NamedTuple, Protocol

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.hazards.detector import DetectorSettings
from cosim_validation.hazards.feedback_force import FeedbackForceStream, FeedbackGains
from cosim_validation.hazards.online_detector import Alarm, OnlineDetector
from cosim_validation.robots.filters.robot_filter import FilterEvent
from cosim_validation.robots.model import Kinematics

#: The name the watch's alarm has among the supervisor's alarm sources.
ALARM_SOURCE = "hazard_detector"

_KEYS = {"tip_mm": 1e-3, "joint": 1.0, "tracker_mm": 1e-3, "progress": 1.0}
#: The largest threshold of each key that can still raise an alarm: a tip or a tracked marker a metre off (beyond
#: the reach of every arm here), a joint a full turn off, a command progress ten times off. Above it the detector
#: is silently off; it is refused instead (leave the key out to turn that detector off).
MAX_THRESHOLDS = {"tip_mm": 1000.0, "joint": 2.0 * math.pi, "tracker_mm": 1000.0, "progress": 10.0}
_GRAMMAR = "[tip_mm=X][,joint=Y][,tracker_mm=Z][,progress=P] (at least one)"
#: The kind of an alarm event (stored rows, Alert code).
ALARM_KIND = "hazard_alarm"


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
        force_n: (3,) [Li et al. 2016]'s feedback force, base_link [N] (zero within the threshold).
    """

    test_id: str
    stamp_ns: int
    alarm: Alarm
    force_n: np.ndarray

    @property
    def alarmed(self) -> bool:
        """Whether a detector of the robot's motion alarms at this sample: tip, joint or command progress.

        This is what stops the task with ``stop_on_alarm``; a tracker alarm says the tracker is wrong, not the robot.
        """
        return self.alarm.tip or self.alarm.joint or self.alarm.progress

    @property
    def reported(self) -> bool:
        """Whether any detector alarms (the sample is published and stored as an alarm)."""
        return bool(self.alarm.detectors)


def alarm_detail(alarm: Alarm) -> str:
    """``tip deviation D mm[, command progress P] at case time T s`` of an alarmed sample.

    Args:
        alarm: The detector's answer for the sample.
    """
    progress = f", command progress {alarm.progress_value:.6f}" if alarm.progress else ""
    return f"tip deviation {alarm.deviation_m * 1e3:.6f} mm{progress} at case time {alarm.t_s:.6f} s"


def alarm_text(alarm: Alarm) -> str:
    """``DETECTORS: DETAIL`` (detectors comma-separated, e.g. ``tip,progress``), as published live.

    Args:
        alarm: The detector's answer for the sample.
    """
    return f"{','.join(alarm.detectors)}: {alarm_detail(alarm)}"


def parse_detector(text: str, option: str = "--detector") -> DetectorSettings:
    """Thresholds from ``[tip_mm=X][,joint=Y][,tracker_mm=Z][,progress=P]``.

    Units: joint in rad, or m for a prismatic joint; progress of ``|rho - 1|``, no unit. A detector left out is
    off, so ``tip_mm=X`` alone is the tip detector, ``progress=P`` alone the command progress, both together both.

    Args:
        text: Comma-separated ``key=value``: ``tip_mm`` [mm], ``joint`` [rad, or m for a prismatic joint],
            ``tracker_mm`` [mm], ``progress`` [1]; each a positive finite number.
        option: The command-line option the text came from, for the error messages.

    Raises:
        InputError: An unknown key, no key at all or a value that is not a positive number (naming ``option`` and
            the key).
    """
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, raw = part.partition("=")
        if not sep or key not in _KEYS:
            raise InputError(f"{option}: unknown key {key!r} in {text!r}; expected {_GRAMMAR}")
        if key in values:
            raise InputError(f"{option}: {key} given twice in {text!r}; expected each key at most once")
        try:
            value = float(raw)
        except ValueError:
            value = math.nan
        if not value > 0 or not math.isfinite(value):
            raise InputError(f"{option}: {key} must be a positive number, got {raw!r}")
        if value > MAX_THRESHOLDS[key]:
            raise InputError(
                f"{option}: {key} {raw} would never raise an alarm; expected at most {MAX_THRESHOLDS[key]:g} "
                "(leave the key out to turn that detector off)"
            )
        values[key] = value * _KEYS[key]
    if not values:
        raise InputError(f"{option}: no detector chosen in {text!r}; expected {_GRAMMAR}")
    return DetectorSettings(
        values.get("tip_mm", math.inf),
        values.get("joint", math.inf),
        values.get("tracker_mm", math.inf),
        values.get("progress", math.inf),
    )


def format_detector(settings: DetectorSettings) -> str:
    """The option string of ``settings`` (:func:`parse_detector` reads it back; infinite thresholds are left out).

    Args:
        settings: The alarm thresholds.
    """
    parts = []
    if math.isfinite(settings.threshold_m):
        parts.append(f"tip_mm={settings.threshold_m * 1e3!r}")
    if math.isfinite(settings.joint_threshold):
        parts.append(f"joint={settings.joint_threshold!r}")
    if math.isfinite(settings.tracker_threshold_m):
        parts.append(f"tracker_mm={settings.tracker_threshold_m * 1e3!r}")
    if math.isfinite(settings.progress_threshold):
        parts.append(f"progress={settings.progress_threshold!r}")
    return ",".join(parts)


def check_detector(detector: str | None, stop_on_alarm: bool, supervisor: object | None) -> DetectorSettings | None:
    """The thresholds of ``detector`` (None: no detector), checked before a run touches anything.

    Args:
        detector: The thresholds in :func:`parse_detector`'s syntax, or None: no detector.
        stop_on_alarm: Whether an alarm is to stop the task (needs a detector and a supervisor).
        supervisor: The task supervisor (e.g. its configuration file), or None: none; only whether it is None matters.

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
        self._events: list[FilterEvent] = []

    def start_case(self, test_id: str) -> None:
        """A new case: no alarm yet, the force's difference and the command progress start again.

        Args:
            test_id: The new case's test id (carried by every :class:`HazardSample`).
        """
        self.test_id, self.last, self.first_alarm_s = test_id, None, math.nan
        self.force.reset()
        self.detector.reset()
        self._events.clear()

    def push(self, t_s: float, stamp_ns: int, robot: Answer, model: Answer, q_setpoint: np.ndarray) -> HazardSample:
        """Judge the answers of the robot and of its fault-free model to the setpoint ``q_setpoint``.

        Args:
            t_s: Case time of the setpoint in [s].
            stamp_ns: The setpoint's stamp in [ns] of session time.
            robot: The physical robot's answer.
            model: The fault-free model's answer.
            q_setpoint: The clean setpoint the loop sent, shape (J,), in [rad] (or [m] for a prismatic joint).
        """
        q = np.stack([np.asarray(robot.q_measured, dtype=np.float64), np.asarray(model.q_measured, dtype=np.float64)])
        tips = self.kinematics.record_arrays(q).tip_pos_m
        alarm = self.detector.push(t_s, tips[0], tips[1], q[0], q[1], np.asarray(robot.tip_pos_m), q_setpoint)
        sample = HazardSample(self.test_id, int(stamp_ns), alarm, self.force.push(t_s, tips[0], tips[1]))
        if sample.alarmed and math.isnan(self.first_alarm_s):
            self.first_alarm_s = float(t_s)
        if sample.reported:
            self._events.append(FilterEvent(float(t_s), ALARM_KIND, ",".join(alarm.detectors), alarm_detail(alarm)))
        self.last = sample
        if self.sink is not None:
            self.sink(sample)
        return sample

    def events(self) -> list[FilterEvent]:
        """The alarms of the case since the last call, as events of the physical robot (then forgotten)."""
        events, self._events = self._events, []
        return events

    def active_alarms(self, t_s: float) -> Mapping[str, str]:
        """The supervisor's view (when stopping on alarms): the detector's alarm at the last answered setpoint.

        Args:
            t_s: Case time of the poll [s], quoted in the reason.
        """
        last = self.last
        if not self.stop_on_alarm or last is None or not last.alarmed:
            return {}
        if not (last.alarm.tip or last.alarm.joint):
            value = last.alarm.progress_value
            return {ALARM_SOURCE: f"command progress of the robot {value:.2f} off its commands at {t_s:.2f} s"}
        kinds = "tip" if last.alarm.tip else "joint"
        return {ALARM_SOURCE: f"{kinds} deviation robot vs model {last.alarm.deviation_m * 1e3:.2f} mm at {t_s:.2f} s"}
