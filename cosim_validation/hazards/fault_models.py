"""What a fault model makes of a vector inside an injection window ([Li et al. 2016]'s corrupted commands and readings).

One function for every stream the injector corrupts (a joint command, the encoder readings, the tracker's
position or orientation): the caller keeps the stream's history by control cycle, so a delayed or stuck value is
the same in batch and live however often the stream is read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from cosim_validation.hazards.scenario import Fault, FaultModel


class WindowState(NamedTuple):
    """What a fault needs besides the clean value.

    Attributes:
        opening: The clean value of the stream when the window opened (its last value before the fault).
        last_out: The value the receiver got last (a dropped message leaves it there).
        cycles_in: Control cycles since the window opened (0 at the opening cycle).
        earlier: ``earlier(n)`` = the clean value ``n`` cycles ago (the oldest known when the case is younger).
        rng: The random stream of this cycle (noise, drops).
    """

    opening: np.ndarray
    last_out: np.ndarray
    cycles_in: int
    earlier: Callable[[int], np.ndarray]
    rng: np.random.Generator


def corrupt(
    fault: Fault, clean: np.ndarray, index: np.ndarray, state: WindowState, *, lost: float | None
) -> np.ndarray:
    """The value the receiver gets instead of ``clean`` inside a window.

    Args:
        fault: The fault model and its parameters.
        clean: (N,) the true value of the stream this cycle.
        index: Indices of the entries the fault corrupts (the others pass unchanged).
        state: Opening value, last delivered value, history, random stream.
        lost: What a dropped message reads as: None = the receiver keeps ``state.last_out`` (a command), a number
            = that value (NaN: a tracker that reports nothing).

    Returns:
        (N,) the corrupted value (a new array).
    """
    out = np.array(clean, dtype=np.float64, copy=True)
    model = fault.model
    if model is FaultModel.DROP:
        if state.rng.random() < fault.probability:
            out[index] = state.last_out[index] if lost is None else lost
    elif model in (FaultModel.HOLD, FaultModel.STUCK):
        out[index] = state.opening[index]
    elif model is FaultModel.CONSTANT:
        out[index] = fault.value + (state.opening[index] if fault.relative else 0.0)
    elif model is FaultModel.OFFSET:
        out[index] += fault.value
    elif model is FaultModel.SCALE:
        out[index] = state.opening[index] + (clean[index] - state.opening[index]) * fault.value
    elif model is FaultModel.NOISE:
        out[index] += state.rng.normal(0.0, fault.value, size=len(index))
    elif model is FaultModel.DELAY:
        out[index] = state.earlier(fault.delay_cycles)[index]
    elif model is FaultModel.ZERO:
        out[index] = 0.0
    elif model is FaultModel.OUT_OF_ORDER:
        if state.cycles_in % 2 == 1:  # this message arrived before its predecessor: the older one is applied last
            out[index] = state.earlier(1)[index]
    elif model is FaultModel.SWAP:
        out[index] = clean[index[::-1]]
    return out


class StreamHistory:
    """The clean values of one stream by control cycle (the last ``depth`` cycles).

    Args:
        depth: How many cycles to keep (the longest delay + 1).
    """

    def __init__(self, depth: int) -> None:
        self.depth = max(int(depth), 2)
        self._values: dict[int, np.ndarray] = {}

    def clear(self, first: np.ndarray, cycle: int = 0) -> None:
        """A new case whose stream starts with ``first`` at ``cycle``.

        Args:
            first: The stream's first clean value, shape (N,).
            cycle: The control cycle of that value.
        """
        self._values = {cycle: np.array(first, dtype=np.float64)}

    def put(self, cycle: int, value: np.ndarray) -> None:
        """The clean value of ``cycle`` (a later reading in the same cycle replaces it).

        Args:
            cycle: The control cycle of the value; cycles ``depth`` or more before it are forgotten.
            value: The clean value, shape (N,) (copied).
        """
        self._values[cycle] = np.array(value, dtype=np.float64)
        for old in [c for c in self._values if c <= cycle - self.depth]:
            del self._values[old]

    def latest_before(self, cycle: int) -> np.ndarray:
        """The value of the last cycle before ``cycle`` that has one (else the oldest).

        Args:
            cycle: A control cycle.
        """
        known = [c for c in self._values if c < cycle]
        return self._values[max(known)] if known else self._values[min(self._values)]

    def at(self, cycle: int) -> np.ndarray:
        """The value of ``cycle``, or of the last cycle before it that has one (the oldest if none).

        Args:
            cycle: A control cycle.
        """
        known = [c for c in self._values if c <= cycle]
        return self._values[max(known)] if known else self._values[min(self._values)]
