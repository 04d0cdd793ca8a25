"""LT4R's interval comparisons: ``value ~ tolerance`` compares the interval [value - tol, value + tol].

``fuzzy(v, tol) > c`` holds when the whole interval lies above c, ``< c`` when it lies below,
``== c`` when c lies inside the interval and ``!= c`` when it does not (seed 004, section 4.2).
Vectors become per-component intervals: ``fuzzy(velocity, 0.1).z > 0``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: How a point compares with a number, per LT4R comparison
_RELATIONS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


@dataclass(frozen=True, eq=False)
class Interval:
    """The closed interval [lo, hi], compared with a number as LT4R does.

    An order comparison holds when it holds for every point of the interval (its two ends decide); ``==`` holds
    when the number is one of its points, ``!=`` when it is none.
    """

    lo: float
    hi: float

    def holds(self, relation: str, number: float) -> bool:
        """Whether ``interval <relation> number`` holds.

        Args:
            relation: ``>``, ``>=``, ``<``, ``<=``, ``==`` or ``!=``.
            number: The number compared with.
        """
        if relation in ("==", "!="):
            return (self.lo <= number <= self.hi) == (relation == "==")
        return all(_RELATIONS[relation](end, number) for end in (self.lo, self.hi))

    def __gt__(self, other: float) -> bool:
        return self.holds(">", other)

    def __ge__(self, other: float) -> bool:
        return self.holds(">=", other)

    def __lt__(self, other: float) -> bool:
        return self.holds("<", other)

    def __le__(self, other: float) -> bool:
        return self.holds("<=", other)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Interval):
            return (other.lo, other.hi) == (self.lo, self.hi)
        return self.holds("==", float(other)) if isinstance(other, int | float | np.floating) else NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, Interval):
            return not self == other
        return self.holds("!=", float(other)) if isinstance(other, int | float | np.floating) else NotImplemented

    def __hash__(self) -> int:
        return hash(("interval", self.lo, self.hi))


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
    if np.ndim(value) > 0:
        return FuzzyVector(np.asarray(value, dtype=np.float64), tolerance)
    return Interval(float(value) - tolerance, float(value) + tolerance)  # type: ignore[arg-type]


def fuzzy_scalar(value: float, tolerance: float) -> Interval:
    """``value ~ tolerance`` for a scalar (typed shortcut)."""
    result = fuzzy(float(value), tolerance)
    assert isinstance(result, Interval)
    return result
