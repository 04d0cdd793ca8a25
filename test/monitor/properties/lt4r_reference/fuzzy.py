"""LT4R's interval comparisons: ``value ~ tolerance`` compares the interval [value - tol, value + tol].

``fuzzy(v, tol) > c`` holds when the whole interval lies above c, ``< c`` when it lies below,
``== c`` when c lies inside the interval and ``!= c`` when it does not (seed 004, section 4.2).
Vectors become per-component intervals: ``fuzzy(velocity, 0.1).z > 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Interval:
    """The closed interval [lo, hi]."""

    lo: float
    hi: float

    def __gt__(self, other: float) -> bool:
        return self.lo > other

    def __ge__(self, other: float) -> bool:
        return self.lo >= other

    def __lt__(self, other: float) -> bool:
        return self.hi < other

    def __le__(self, other: float) -> bool:
        return self.hi <= other

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Interval):
            return self.lo == other.lo and self.hi == other.hi
        if isinstance(other, (int, float, np.floating)):
            return bool(self.lo <= float(other) <= self.hi)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash((self.lo, self.hi))


@dataclass(frozen=True)
class FuzzyVector:
    """A 3-vector with the same tolerance on every component."""

    value: np.ndarray
    tolerance: float

    def _component(self, i: int) -> Interval:
        v = float(self.value[i])
        return Interval(v - self.tolerance, v + self.tolerance)

    @property
    def x(self) -> Interval:
        """Interval of the x component."""
        return self._component(0)

    @property
    def y(self) -> Interval:
        """Interval of the y component."""
        return self._component(1)

    @property
    def z(self) -> Interval:
        """Interval of the z component."""
        return self._component(2)


def fuzzy(value: float | np.ndarray, tolerance: float) -> Interval | FuzzyVector:
    """``value ~ tolerance``: an interval (scalar) or per-component intervals (vector).

    Raises:
        ValueError: A negative tolerance.
    """
    if tolerance < 0:
        raise ValueError(f"fuzzy tolerance must be >= 0, got {tolerance!r}")
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        v = float(array)
        return Interval(v - tolerance, v + tolerance)
    return FuzzyVector(array, tolerance)


def fuzzy_scalar(value: float, tolerance: float) -> Interval:
    """``value ~ tolerance`` for a scalar (typed shortcut)."""
    result = fuzzy(float(value), tolerance)
    assert isinstance(result, Interval)
    return result
