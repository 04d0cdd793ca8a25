"""``always atom`` over an expensive atom (exact mesh distances), computing as few exact values as possible.

Two lower bounds rule samples out: the obstacle's own bound (distance to its bounding sphere) and the
Lipschitz bound along the trajectory: a distance changes by at most how far its point (or the ends of its
segment) moved, so an exact value at a grid sample bounds its neighbours. Exact values are then
computed in ascending order of the bound until no bound is below the smallest exact value, and, if that
minimum is <= 0, in time order among samples whose bound is <= 0 until the first violation. The minimum
and the first violation are therefore attained at exactly computed samples: the result is identical
to evaluating every sample (test_obstacles.py checks it).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from cosim_validation.common.record import Stage
from cosim_validation.monitor.properties.language import formula as f
from cosim_validation.monitor.properties.language.robustness import ClauseResult
from cosim_validation.monitor.properties.language.terms import Env

GRID_STRIDE = 32  # samples between exact values of the Lipschitz grid
#: Subtracted from Lipschitz bounds [m]: exact values may sit slightly above the true distance (float32
#: queries, segment minima found within a tolerance of 1e-6 m), which must not make a bound too high.
LIPSCHITZ_SLACK_M = 1e-5

Exact = Callable[[np.ndarray], np.ndarray]  # exact atom values at absolute sample indices


def lipschitz_bound(points: np.ndarray, exact: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Max over the neighbouring grid samples g of exact[g] - max displacement of the points from g.

    Args:
        points: (m, k, 3) the points the value depends on (1-Lipschitz in each) [m].
        exact: (m,) exact values, finite at ``grid``.
        grid: (g,) sorted int indices of the grid samples, starting at 0 and ending at m - 1.
    """
    m = points.shape[0]
    right = np.searchsorted(grid, np.arange(m), side="left")  # grid sample at or after each sample
    after = grid[np.minimum(right, grid.size - 1)]
    before = grid[np.maximum(right - 1, 0)]
    before = np.where(grid[np.minimum(right, grid.size - 1)] == np.arange(m), np.arange(m), before)

    def from_grid(g: np.ndarray) -> np.ndarray:
        moved = np.sqrt(((points - points[g]) ** 2).sum(axis=2)).max(axis=1)
        return np.asarray(exact[g] - moved - LIPSCHITZ_SLACK_M)

    return np.asarray(np.maximum(from_grid(before), from_grid(after)))


class BoundedAlways:
    """Evaluates ``always atom`` on samples [start, stop) of ``env`` with few exact atom values."""

    def __init__(self, atom: f.Atom, env: Env, start: int, stop: int, exact: Exact) -> None:
        self.atom, self.env, self.start, self.stop, self.exact_at = atom, env, start, stop, exact
        self.bound: np.ndarray | None = None

    def lower_bound_min(self) -> float | None:
        """Smallest cheap bound over the window, or None if the atom has no (finite) bound."""
        if not self.atom.term.rowwise:
            return None
        bound = self.atom.term.lower_bound(self.env)
        if bound is None:
            return None
        window = np.asarray(bound[self.start : self.stop], dtype=np.float64)
        if np.isnan(window).any():
            return None
        self.bound = window
        return float(window.min())

    def evaluate(self) -> ClauseResult | None:
        """The clause's exact value and first violation; None where exact values are NaN."""
        assert self.bound is not None
        bound = self.bound.copy()
        exact = np.full(bound.size, np.nan)
        first = np.argpartition(bound, min(16, bound.size) - 1)[:16]
        self._fill(exact, first)
        if np.isnan(exact[first]).any():
            return None
        crowded = self._tighten(bound, exact[first].min())
        points = self.atom.term.lipschitz_points(self.env) if crowded else None
        if points is not None:  # the object's bound leaves too many samples: add the trajectory's
            grid = np.unique(np.append(np.arange(0, bound.size, GRID_STRIDE), bound.size - 1))
            self._fill(exact, grid)
            if np.isnan(exact[grid]).any():
                return None
            bound = np.maximum(bound, lipschitz_bound(points[self.start : self.stop], exact, grid))
            bound[grid] = exact[grid]
        minimum = self._minimum(bound, exact)
        if math.isnan(minimum):
            return None
        if minimum > 0.0:
            return ClauseResult(minimum, minimum)
        violation = self._first_violation(bound, exact) + self.start
        block = self.env.block
        return ClauseResult(minimum, minimum, float(block.t_s[violation]), Stage(int(block.stage[violation])))

    def _tighten(self, bound: np.ndarray, best: float) -> bool:
        """Tighter bounds where the cheap ones are below ``best`` (or <= 0); whether many samples remain so."""
        open_ = np.flatnonzero((bound < best) | (bound <= 0.0))
        if open_.size == 0:
            return False
        sub = self._rows(open_ + self.start)
        tight = self.atom.term.lower_bound(sub, tight=True)
        if tight is not None and not np.isnan(tight).any():
            bound[open_] = np.maximum(bound[open_], tight)
        return bool(np.count_nonzero(bound < best) > 2 * bound.size / GRID_STRIDE)

    def _rows(self, index: np.ndarray) -> Env:
        env = self.env
        expected = env.expected.take(index) if env.expected is not None else None
        return Env(env.block.take(index), expected, env.context, {}, env.kpis)

    def _fill(self, exact: np.ndarray, index: np.ndarray) -> None:
        missing = index[np.isnan(exact[index])]
        if missing.size:
            exact[missing] = self.exact_at(missing + self.start)

    def _minimum(self, bound: np.ndarray, exact: np.ndarray) -> float:
        known = exact[~np.isnan(exact)]
        minimum = float(known.min()) if known.size else math.inf
        below = np.flatnonzero(bound < minimum)  # only these can hold a lower value
        order = below[np.argsort(bound[below], kind="stable")]
        pos, chunk = 0, 16
        while pos < order.size and bound[order[pos]] < minimum:  # ascending bounds until none can be lower
            index = order[pos : pos + chunk]
            self._fill(exact, index)
            if np.isnan(exact[index]).any():
                return math.nan
            minimum = min(minimum, float(exact[index].min()))
            pos, chunk = pos + chunk, chunk * 2
        return minimum

    def _first_violation(self, bound: np.ndarray, exact: np.ndarray) -> int:
        """Earliest window index with a value <= 0 (only samples whose bound is <= 0 can be)."""
        candidates = np.flatnonzero(bound <= 0.0)
        pos, chunk = 0, 16
        while pos < candidates.size:
            index = candidates[pos : pos + chunk]
            self._fill(exact, index)
            bad = index[exact[index] <= 0.0]
            if bad.size:
                return int(bad[0])
            pos, chunk = pos + chunk, chunk * 2
        raise AssertionError("minimum <= 0 but no sample <= 0")
