"""Was each injected window detected, how fast, and were there alarms with no fault behind them?

An alarm belongs to a window when it is raised between the window's onset and ``grace_s`` after its end (the
robot takes a while to return to the model after the fault ends); any other alarm episode (a rise of the alarm)
is a false alarm. Latency is measured from the fault's onset, and from the first sample whose tip deviation
crossed the threshold (the goal: the alarm within one control cycle of the crossing).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from cosim_validation.hazards.detector import Detection

#: After a window ends, alarms still count as its detection for this long [s].
GRACE_S = 1.0


class WindowVerdict(NamedTuple):
    """One injected window, judged.

    Attributes:
        number: 0-based number of the window in its case.
        start_s: Onset (case time) [s].
        end_s: End [s] (the case's end for a permanent fault).
        detected: The first detector raised an alarm within the window or its grace time.
        latency_s: First such alarm minus the onset [s]; NaN if none.
        crossing_s: First sample from the onset with the tip deviation above the threshold [s]; NaN if none.
        max_deviation_m: Largest tip deviation within the window and its grace time [m].
        second_detected: The second detector (tracker vs encoders) raised an alarm in the same span.
        second_latency_s: Its latency from the onset [s]; NaN if none.
    """

    number: int
    start_s: float
    end_s: float
    detected: bool
    latency_s: float
    crossing_s: float
    max_deviation_m: float
    second_detected: bool
    second_latency_s: float


def judge_windows(
    detection: Detection, windows: list[tuple[float, float]], threshold_m: float, grace_s: float = GRACE_S
) -> tuple[list[WindowVerdict], int, int]:
    """Each window's verdict, and the false-alarm episodes of the first and of the second detector in the case.

    Args:
        detection: The detector's answers on the case's samples.
        windows: The injected windows as ``(start_s, end_s)`` pairs of case times in [s].
        threshold_m: The tip-deviation threshold in [m] (for the crossing time).
        grace_s: How long after a window's end an alarm still counts as its detection, in [s].
    """
    t = detection.t_s
    covered = np.zeros(len(t), dtype=bool)
    verdicts = []
    for number, (start_s, end_s) in enumerate(windows):
        span = (t >= start_s - 1e-9) & (t <= end_s + grace_s + 1e-9)
        covered |= span
        alarm_s = _first(t, span & detection.alarm)
        second_s = _first(t, span & detection.second_alarm)
        crossing_s = _first(t, span & (detection.deviation_m > threshold_m))
        deviation = detection.deviation_m[span]
        verdicts.append(
            WindowVerdict(
                number,
                start_s,
                end_s,
                not math.isnan(alarm_s),
                alarm_s - start_s,
                crossing_s,
                float(deviation.max()) if len(deviation) else math.nan,
                not math.isnan(second_s),
                second_s - start_s,
            )
        )
    return verdicts, alarm_episodes(detection.alarm & ~covered), alarm_episodes(detection.second_alarm & ~covered)


def alarm_episodes(alarm: np.ndarray) -> int:
    """How many times ``alarm`` rises (an alarm at the first sample counts as one).

    Args:
        alarm: Whether the detector alarms at each sample, shape (n,), bool.
    """
    a = np.asarray(alarm, dtype=bool)
    return int(np.count_nonzero(a[1:] & ~a[:-1]) + (1 if len(a) and a[0] else 0))


def _first(t_s: np.ndarray, mask: np.ndarray) -> float:
    hits = np.flatnonzero(mask)
    return float(t_s[hits[0]]) if len(hits) else math.nan
