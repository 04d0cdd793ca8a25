"""When a scenario's windows are open, control cycle by control cycle ([Li et al. 2016]'s injection trigger).

The schedule advances once per setpoint (a control cycle), with the case time and the stage of that setpoint, in
the same order in batch and live; its random draws (``probability`` triggers) come from a stream seeded by the
case seed, so the same case opens the same windows in every mode.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from cosim_validation.common.record.stage import Stage
from cosim_validation.hazards.scenario import Scenario, TriggerKind

#: Tolerance on case times [s] (setpoint times are sums of periods).
TIME_EPS_S = 1e-9
#: Stream number of the window trigger (the faults' own draws use 0).
TRIGGER_STREAM = 1


def case_stream(name: str, case_seed: int, stream: int, cycle: int) -> np.random.Generator:
    """The random stream ``stream`` of scenario ``name`` at control cycle ``cycle`` of the case ``case_seed``.

    Args:
        name: The scenario's name (hashed into the seed).
        case_seed: The case's seed.
        stream: Stream number: 0 for the faults' own draws, :data:`TRIGGER_STREAM` for the window trigger.
        cycle: The control cycle (the trigger's stream uses 0 for the whole case).
    """
    return np.random.default_rng([int(case_seed), zlib.crc32(name.encode()), stream, cycle])


class WindowChange(NamedTuple):
    """A window opening or closing at a control cycle.

    Attributes:
        t_s: Case time of the cycle [s].
        opened: True when the window opens, False when it closes.
        number: 0-based number of the window in the case.
    """

    t_s: float
    opened: bool
    number: int


class FaultWindow:
    """The open/closed state of one scenario's windows in one case.

    Args:
        scenario: What opens the windows and how long they last.
    """

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._rng = np.random.default_rng(0)
        self.reset(np.random.default_rng(0))

    def reset(self, rng: np.random.Generator) -> None:
        """A new case; ``rng`` is the case's stream for the ``probability`` trigger.

        Args:
            rng: The random stream of a ``probability`` trigger for the case (:func:`case_stream` with
                :data:`TRIGGER_STREAM`, cycle 0).
        """
        self._rng = rng
        self.cycle = 0
        self.is_open = False
        self.opened_at_s = math.nan
        self.opened_cycle = 0
        self.count = 0
        self.stage = Stage.NONE

    def step(self, t_s: float, stage: Stage = Stage.NONE) -> WindowChange | None:
        """Advance to the next control cycle; what changed, if anything.

        Args:
            t_s: Case time at which the cycle is due, in [s].
            stage: The stage of the cycle's setpoint.
        """
        self.cycle += 1
        self.stage = stage
        if self.is_open and self._closes(t_s):
            self.is_open = False
            change = WindowChange(t_s, False, self.count - 1)
            if self._opens(t_s):  # back to back (a window per cycle of a probability trigger, say)
                return self._open(t_s)
            return change
        if not self.is_open and self._opens(t_s):
            return self._open(t_s)
        return None

    def _closes(self, t_s: float) -> bool:
        trigger = self.scenario.trigger
        if trigger.kind is TriggerKind.STAGE and self.stage is not trigger.stage:
            return True
        return not self.scenario.permanent and t_s >= self.opened_at_s + self.scenario.duration_s - TIME_EPS_S

    def _open(self, t_s: float) -> WindowChange:
        self.is_open, self.opened_at_s, self.opened_cycle = True, t_s, self.cycle
        self.count += 1
        return WindowChange(t_s, True, self.count - 1)

    def _opens(self, t_s: float) -> bool:
        trigger = self.scenario.trigger
        if trigger.kind is TriggerKind.PROBABILITY:
            return bool(self._rng.random() < trigger.probability)
        if trigger.kind is TriggerKind.SAMPLE:
            return self.cycle == trigger.sample
        if trigger.kind is TriggerKind.STAGE:
            return self.count == 0 and self.stage is trigger.stage
        if t_s < trigger.at_s - TIME_EPS_S:
            return False
        if trigger.kind is TriggerKind.TIME:
            return self.count == 0
        window = math.floor((t_s - trigger.at_s + TIME_EPS_S) / trigger.period_s)
        return window >= self.count and t_s < trigger.at_s + window * trigger.period_s + self.scenario.duration_s


def schedule(
    scenario: Scenario, times_s: np.ndarray, case_seed: int, stages: np.ndarray | None = None
) -> list[tuple[float, float]]:
    """The windows ``(start_s, end_s)`` the injector opens in a case whose setpoints are due at ``times_s``.

    ``times_s`` (m,) are the case times of the setpoints after the first (the first reaches no filter) and
    ``stages`` (m,) their stages (``Stage`` values, a record's ``stage`` column; needed by a stage trigger, which
    never fires without them); a window still open at the end of the case ends at the last setpoint's time. The
    same schedule as the injector's, from the same seed (a campaign's records carry the times and stages, so their
    windows need not be stored).

    Args:
        scenario: The fault scenario whose trigger opens the windows.
        times_s: Case times of the setpoints after the first, shape (m,), in [s].
        case_seed: The case's seed (the trigger's random stream).
        stages: The stages of those setpoints (``Stage`` values), shape (m,); None: none known.

    Returns:
        The windows as ``(start_s, end_s)`` pairs of case times in [s].
    """
    window = FaultWindow(scenario)
    window.reset(case_stream(scenario.name, case_seed, TRIGGER_STREAM, 0))
    windows: list[tuple[float, float]] = []
    times = np.asarray(times_s, dtype=np.float64)
    stage_of = np.zeros(len(times), dtype=np.int64) if stages is None else np.asarray(stages, dtype=np.int64)
    for t_s, stage in zip(times, stage_of, strict=True):
        change = window.step(float(t_s), Stage(int(stage)))
        if change is not None and change.opened:
            if windows and math.isnan(windows[-1][1]):
                windows[-1] = (windows[-1][0], float(t_s))
            windows.append((float(t_s), math.nan))
        elif change is not None:
            windows[-1] = (windows[-1][0], float(t_s))
    if windows and math.isnan(windows[-1][1]):
        windows[-1] = (windows[-1][0], float(times_s[-1]) if len(times_s) else windows[-1][0])
    return windows


def windows_of_events(events: Sequence[tuple[float, str]], end_s: float) -> list[tuple[float, float]]:
    """The windows ``(start_s, end_s)`` of a case from its filter's events as they happened.

    Args:
        events: ``(t_s, kind)`` in order, kind ``fault_start`` or ``fault_end`` (others are ignored).
        end_s: The case's last setpoint time [s]: the end of a window still open when the case ended.
    """
    windows: list[tuple[float, float]] = []
    for t_s, kind in events:
        if kind == "fault_start":
            if windows and math.isnan(windows[-1][1]):
                windows[-1] = (windows[-1][0], float(t_s))
            windows.append((float(t_s), math.nan))
        elif kind == "fault_end" and windows:
            windows[-1] = (windows[-1][0], float(t_s))
    if windows and math.isnan(windows[-1][1]):
        windows[-1] = (windows[-1][0], float(end_s))
    return windows
