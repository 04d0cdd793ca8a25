"""``entry(x, M)`` of a supervisor mode: the value of x where the robot last entered mode M, held while it stays.

A stage is entered once per case, so ``entry(x, injection)`` holds the value of its first sample. A supervisor
mode can be entered again and again (stopped, recovered, stopped again), so its entry is the first sample of the
*current* stay in the mode, and outside the mode the term is unknown (NaN): ``always (supervisor == stopped ->
dist(tip, entry(tip, stopped)) < 0.002)`` reads "while stopped, the tip stays within 2 mm of where it stopped".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.common.record import SupervisorMode
from cosim_validation.monitor.properties.language.terms import Env, Term


@dataclass(eq=False)
class ModeEntry(Term):
    """``entry(x, M)`` for a supervisor mode M (see the module docstring); memory carried from block to block.

    Attributes:
        arg: The term x (any kind; its kind and unit are the entry's).
        mode: The supervisor mode M.
    """

    arg: Term
    mode: SupervisorMode

    def __post_init__(self) -> None:
        self.kind = self.arg.kind
        self.unit = self.arg.unit
        self.uses_expected = self.arg.uses_expected
        self.rowwise = False

    def evaluate(self, env: Env) -> np.ndarray:
        """The argument's value where the current stay in the mode began, held while in it; NaN outside it.

        Args:
            env: The samples (``env.block``, n rows, their ``supervisor`` modes) and ``env.state``, which carries
                the stay and its held value from the previous block and is updated here.

        Returns:
            float64 values shaped like the argument's: (n,), (n, 3) or (n, 2, 3).
        """
        value = np.asarray(self.arg.evaluate(env), dtype=np.float64)
        n = value.shape[0]
        out = np.full_like(value, np.nan)
        if n == 0:
            return out
        was_inside, held = env.state.get(id(self), (False, None))
        inside = np.asarray(env.block.supervisor == int(self.mode))
        before = np.concatenate([[was_inside], inside[:-1]])
        starts = np.where(inside & ~before, np.arange(n), -1)
        run_start = np.maximum.accumulate(starts)  # the sample that began each sample's stay (-1: an earlier block)
        fresh = inside & (run_start >= 0)
        out[fresh] = value[run_start[fresh]]
        carried = inside & (run_start < 0)
        if carried.any() and held is not None:
            out[carried] = held
        if run_start[-1] >= 0:
            held = np.array(value[run_start[-1]], dtype=np.float64)
        env.state[id(self)] = (bool(inside[-1]), held)
        return out
