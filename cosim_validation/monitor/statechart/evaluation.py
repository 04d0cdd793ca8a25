"""Evaluating guard and action expressions on a snapshot of named values.

Values are floats, bools, strings, lists and numpy vectors. ``x ~ tol`` makes LT4R's interval ([Fabry and Sinclair
2016],
section 4.2): ``(x ~ tol) > c`` holds when the whole interval [x - tol, x + tol] lies above c, ``< c`` when it
lies below, ``== c`` when c lies inside and ``!= c`` when it does not; a vector becomes per-component intervals
(``(v ~ 0.1).z > 0``). NaN values make every ordered comparison false, as in numpy.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim_validation.monitor.statechart.errors import ExpressionError
from cosim_validation.monitor.statechart.expression import Attr, Binary, Call, Const, Expr, ListLit, Unary, Var


@dataclass(frozen=True)
class Interval:
    """The closed interval [lo, hi] compared as LT4R does."""

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
            return (self.lo, self.hi) == (other.lo, other.hi)
        if isinstance(other, int | float | np.floating):
            return bool(self.lo <= float(other) <= self.hi)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash((self.lo, self.hi))


@dataclass(frozen=True)
class FuzzyVector:
    """A vector whose components are compared as intervals of half-width ``tolerance``."""

    value: np.ndarray
    tolerance: float

    def component(self, index: int) -> Interval:
        """The interval of one component.

        Args:
            index: Component index, 0 for ``x``, 1 for ``y``, 2 for ``z``.
        """
        v = float(self.value[index])
        return Interval(v - self.tolerance, v + self.tolerance)


def fuzzy(value: Any, tolerance: Any) -> Interval | FuzzyVector:
    """``value ~ tolerance`` (scalar: an :class:`Interval`; vector: a :class:`FuzzyVector`).

    Args:
        value: A number, or a vector (list or array) compared per component, in its own unit.
        tolerance: Half-width of the interval, >= 0, in the unit of ``value``.

    Raises:
        ValueError: ``tolerance`` is negative or NaN.
    """
    tol = float(tolerance)
    if not tol >= 0:
        raise ValueError(f"fuzzy tolerance must be >= 0, got {tolerance!r}")
    array = np.asarray(value, dtype=np.float64)
    if array.ndim == 0:
        v = float(array)
        return Interval(v - tol, v + tol)
    return FuzzyVector(array, tol)


def _norm(value: Any) -> float:
    array = np.asarray(value, dtype=np.float64)
    return float(np.sqrt(array @ array))


#: Built-in functions of the language.
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "fuzzy": fuzzy,
    "abs": abs,
    "min": min,
    "max": max,
    "norm": _norm,
    "isnan": lambda v: math.isnan(float(v)),
    "len": len,
}

_COMPONENTS = {"x": 0, "y": 1, "z": 2}
_ARITHMETIC: dict[str, Callable[[Any, Any], Any]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def evaluate(expr: Expr, env: Mapping[str, Any]) -> Any:
    """The value of ``expr`` with names looked up in ``env``.

    Args:
        expr: A parsed guard or action value.
        env: Values by name: signals, variables, parameters and input guards of the current step.

    Raises:
        ExpressionError: An unknown name or function, or an operation on values of the wrong kind.
    """
    try:
        return _eval(expr, env)
    except ExpressionError:
        raise
    except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
        raise ExpressionError(f"cannot evaluate: {exc}") from None


def _eval(expr: Expr, env: Mapping[str, Any]) -> Any:
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, Var):
        if expr.name not in env:
            raise ExpressionError(f"unknown name {expr.name!r}; known: {', '.join(sorted(env))}")
        return env[expr.name]
    if isinstance(expr, Attr):
        return _attribute(_eval(expr.base, env), expr.name)
    if isinstance(expr, Call):
        if expr.func not in FUNCTIONS:
            raise ExpressionError(f"unknown function {expr.func!r}; functions: {', '.join(sorted(FUNCTIONS))}")
        return FUNCTIONS[expr.func](*(_eval(a, env) for a in expr.args))
    if isinstance(expr, ListLit):
        return [_eval(item, env) for item in expr.items]
    if isinstance(expr, Unary):
        value = _eval(expr.operand, env)
        return (not _truth(value)) if expr.op == "not" else -value
    return _binary(expr, env)


def _binary(expr: Binary, env: Mapping[str, Any]) -> Any:
    if expr.op == "and":
        return _truth(_eval(expr.left, env)) and _truth(_eval(expr.right, env))
    if expr.op == "or":
        return _truth(_eval(expr.left, env)) or _truth(_eval(expr.right, env))
    left, right = _eval(expr.left, env), _eval(expr.right, env)
    if expr.op == "~":
        return fuzzy(left, right)
    if expr.op == "in":
        return left in right
    result = _ARITHMETIC[expr.op](left, right)
    return bool(result) if expr.op in ("==", "!=", "<", "<=", ">", ">=") else result


def _attribute(value: Any, name: str) -> Any:
    if name not in _COMPONENTS:
        raise ExpressionError(f"unknown attribute {name!r}; attributes: x, y, z")
    if isinstance(value, FuzzyVector):
        return value.component(_COMPONENTS[name])
    return float(np.asarray(value, dtype=np.float64)[_COMPONENTS[name]])


def _truth(value: Any) -> bool:
    if isinstance(value, Interval | FuzzyVector):
        raise ExpressionError("an interval (x ~ tol) is not a truth value; compare it with a number")
    return bool(value)
