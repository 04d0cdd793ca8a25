"""Guards evaluated on many samples at once, to find the samples where a replayed machine may take a transition.

A replayed behaviour machine (:func:`~cosim_validation.monitor.statechart.behaviour.run_behaviours`) changes only
when a transition fires, and between two transitions its state and variables are fixed; the next sample that can
fire is the first one where a candidate transition's guard may hold. This module answers "may hold" for a stretch
of samples in one pass of numpy per guard, in three-valued logic, so that every sample it rules out is one where
the per-sample evaluation (:mod:`.evaluation`) gives false without an error:

- numbers carry a bound of how far they may differ from the per-sample value (sums of products such as a dot
  product may round differently); a comparison closer than that bound is "maybe", as is a division by a value
  that may be zero, an infinity in a comparison, or any value the per-sample evaluation could refuse;
- anything this module does not model (a construct, a type, a function) makes the whole guard "maybe" on every
  sample.

"Maybe" samples are then decided by the per-sample evaluation itself, so the replay's results, errors included,
are those of processing every sample.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim_validation.monitor.statechart.evaluation import FuzzyVector, Interval, evaluate, fuzzy
from cosim_validation.monitor.statechart.expression import Attr, Expr, free_names
from cosim_validation.monitor.syntax_tree import Call, Infix, Name, Prefix

#: Relative rounding slack added to every computed column value (many times a double's 2.2e-16).
ROUNDING = 1e-12
#: Absolute floor of an inexact value's error (far above the subnormal spacing 5e-324, where products underflow).
TINY = 1e-300
#: Values whose magnitude plus error reach this may overflow in one evaluation and not the other.
NEAR_OVERFLOW = 1e307
_COMPONENTS = {"x": 0, "y": 1, "z": 2}


class NotModelledError(Exception):
    """The guard uses something this module does not evaluate on columns: decide it sample by sample."""


@dataclass(frozen=True)
class Num:
    """(n,) float64 values, each within ``err`` of the per-sample value."""

    value: np.ndarray
    err: np.ndarray


@dataclass(frozen=True)
class Vec:
    """(n, d) float64 vectors, each component within ``err`` (n,) of the per-sample value."""

    value: np.ndarray
    err: np.ndarray


@dataclass(frozen=True)
class Text:
    """(n,) texts, exact."""

    value: np.ndarray


@dataclass(frozen=True)
class Truth:
    """Three-valued truth: where the per-sample value may be true, and where it may be false."""

    may_true: np.ndarray
    may_false: np.ndarray


@dataclass(frozen=True)
class Ival:
    """LT4R's interval ``x ~ tol`` on every sample: [lo, hi]."""

    lo: Num
    hi: Num


@dataclass(frozen=True)
class FVec:
    """``v ~ tol`` for vectors: per-component intervals."""

    vec: Vec
    tolerance: float


@dataclass(frozen=True)
class Fixed:
    """A value that is the same on every sample (a literal, a parameter, a variable)."""

    value: Any


Column = Num | Vec | Text | Truth | Ival | FVec | Fixed


class GuardColumns:
    """Evaluates guards on ``n`` samples at once.

    Args:
        signals: Each signal's column (:class:`Num`, :class:`Vec`, :class:`Text`, :class:`Fixed`), n samples.
        n: Number of samples.
    """

    def __init__(self, signals: Mapping[str, Column], n: int) -> None:
        self.signals, self.n = signals, n
        self.risky = np.zeros(n, dtype=bool)

    def may_hold(self, guard: Expr, fixed: Mapping[str, Any]) -> np.ndarray:
        """(n,) where ``guard`` may be true (or its per-sample evaluation may fail): the samples to evaluate.

        Args:
            guard: The parsed guard.
            fixed: The values the same on every sample: parameters and variables (signals shadow them).
        """
        self.risky = np.zeros(self.n, dtype=bool)
        try:
            value = self._eval(guard, fixed)
            if isinstance(value, Fixed):
                truth = self._truth_fixed(value.value)
                return np.full(self.n, truth, dtype=bool) | self.risky
            if not isinstance(value, Truth):
                raise NotModelledError("a guard of a number, vector or text")
        except Exception:  # noqa: BLE001 - not modelled, or failed here: the per-sample evaluation decides
            return np.ones(self.n, dtype=bool)
        return value.may_true | self.risky

    @staticmethod
    def _truth_fixed(value: Any) -> bool:
        if isinstance(value, Interval | FuzzyVector):
            raise NotModelledError("an interval as a truth value")
        try:
            return bool(value)
        except (TypeError, ValueError) as exc:
            raise NotModelledError(str(exc)) from None

    def _eval(self, expr: Expr, fixed: Mapping[str, Any]) -> Column:
        if self.signals.keys().isdisjoint(_names(expr)):  # the same on every sample: the per-sample evaluation's value
            return Fixed(_scalar(lambda: evaluate(expr, fixed)))
        if isinstance(expr, Name):
            return self.signals[expr.ident]
        if isinstance(expr, Attr):
            return self._attribute(self._eval(expr.base, fixed), expr.name)
        if isinstance(expr, Call):
            return self._call(expr, fixed)
        if isinstance(expr, Prefix):
            return self._prefix(expr.op, self._eval(expr.operand, fixed))
        if isinstance(expr, Infix):
            return self._infix(expr, fixed)
        raise NotModelledError(f"a {type(expr).__name__} of per-sample values")

    def _prefix(self, op: str, operand: Column) -> Column:
        if op == "not":
            truth = self._as_truth(operand)
            return Truth(truth.may_false, truth.may_true)
        if op == "-" and isinstance(operand, Num):
            return Num(-operand.value, operand.err)
        if op == "-" and isinstance(operand, Vec):
            return Vec(-operand.value, operand.err)
        raise NotModelledError(f"prefix {op!r}")

    def _as_truth(self, value: Column) -> Truth:
        if isinstance(value, Truth):
            return value
        if isinstance(value, Fixed):
            truth = self._truth_fixed(value.value)
            return Truth(np.full(self.n, truth), np.full(self.n, not truth))
        raise NotModelledError("a number, vector or text as a truth value")

    def _infix(self, expr: Infix[Expr], fixed: Mapping[str, Any]) -> Column:
        op = expr.op
        left, right = self._eval(expr.left, fixed), self._eval(expr.right, fixed)
        if op in ("and", "or"):
            a, b = self._as_truth(left), self._as_truth(right)
            if op == "and":
                return Truth(a.may_true & b.may_true, a.may_false | b.may_false)
            return Truth(a.may_true | b.may_true, a.may_false & b.may_false)
        if op == "~":
            return self._fuzzy(left, right)
        if op == "in":
            return self._member(left, right)
        if op in ("==", "!=", "<", "<=", ">", ">="):
            return self._compare(op, left, right)
        if op in ("+", "-", "*", "/"):
            return self._arithmetic(op, left, right)
        raise NotModelledError(f"operator {op!r}")

    def _fuzzy(self, value: Column, tolerance: Column) -> Column:
        if not isinstance(tolerance, Fixed) or isinstance(tolerance.value, bool):
            raise NotModelledError("a tolerance that is not a fixed number")
        interval = _scalar(lambda: fuzzy(0.0, tolerance.value))  # checks it as the per-sample evaluation does
        if not isinstance(interval, Interval):
            raise NotModelledError("a vector tolerance")
        tol = interval.hi
        if isinstance(value, Num):
            lo, hi = value.value - tol, value.value + tol
            return Ival(Num(lo, _slack(value.err, lo)), Num(hi, _slack(value.err, hi)))
        if isinstance(value, Vec):
            return FVec(value, tol)
        raise NotModelledError("'~' of a text or truth value")

    def _member(self, item: Column, group: Column) -> Column:
        if not (isinstance(item, Text) and isinstance(group, Fixed)):
            raise NotModelledError("'in' other than a text in a fixed list")
        items = group.value
        if isinstance(items, str) or not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
            raise NotModelledError("'in' a text or a list of non-texts")
        inside = np.isin(item.value, list(items))
        return Truth(inside, ~inside)

    def _compare(self, op: str, left: Column, right: Column) -> Truth:
        if isinstance(left, Text) or isinstance(right, Text):
            return self._compare_texts(op, left, right)
        if isinstance(left, Ival):
            if op == "==" or op == "!=":  # lo <= c <= hi
                low = self._compare_nums("<=", left.lo, self._num(right))
                high = self._compare_nums(">=", left.hi, self._num(right))
                truth = Truth(low.may_true & high.may_true, low.may_false | high.may_false)
                return truth if op == "==" else Truth(truth.may_false, truth.may_true)
            # (x ~ t) > c: lo > c, >= : lo >= c, < : hi < c, <= : hi <= c
            bound = left.lo if op in (">", ">=") else left.hi
            return self._compare_nums(op, bound, self._num(right))
        if isinstance(right, Ival | FVec) or isinstance(left, FVec):
            raise NotModelledError("an interval on the right, or a vector interval, compared")
        return self._compare_nums(op, self._num(left), self._num(right))

    def _compare_texts(self, op: str, left: Column, right: Column) -> Truth:
        text, other = (left, right) if isinstance(left, Text) else (right, left)
        if op not in ("==", "!=") or not isinstance(other, Fixed) or not isinstance(other.value, str):
            raise NotModelledError("a text compared other than for (in)equality with a fixed text")
        assert isinstance(text, Text)
        equal = text.value == other.value
        return Truth(equal, ~equal) if op == "==" else Truth(~equal, equal)

    def _num(self, value: Column) -> Num:
        if isinstance(value, Num):
            return value
        if isinstance(value, Fixed) and isinstance(value.value, int | float) and not isinstance(value.value, bool):
            number = _scalar(lambda: float(value.value))
            if number != value.value:  # an integer a float cannot hold: Python compares it exactly
                raise NotModelledError("an integer beyond a float's precision")
            return Num(np.full(self.n, number), np.zeros(self.n))
        raise NotModelledError("not a number")

    def _compare_nums(self, op: str, a: Num, b: Num) -> Truth:
        nan = np.isnan(a.value) | np.isnan(b.value)
        self.risky |= np.isinf(a.value) | np.isinf(b.value)
        with np.errstate(invalid="ignore", over="ignore"):
            diff = a.value - b.value
            margin = a.err + b.err
            margin = np.where(margin > 0, margin + ROUNDING * np.abs(diff), margin)
            lo, hi = diff - margin, diff + margin
        self.risky |= np.isnan(margin)  # an error bound lost (inf * 0): the per-sample evaluation decides
        if op == "<":
            may_true, may_false = lo < 0, hi >= 0
        elif op == "<=":
            may_true, may_false = lo <= 0, hi > 0
        elif op == ">":
            may_true, may_false = hi > 0, lo <= 0
        elif op == ">=":
            may_true, may_false = hi >= 0, lo < 0
        else:
            equal_maybe = (lo <= 0) & (hi >= 0)
            unequal_maybe = (lo != 0) | (hi != 0)
            may_true, may_false = (equal_maybe, unequal_maybe) if op == "==" else (unequal_maybe, equal_maybe)
            if op == "!=":
                return Truth(may_true | nan, may_false & ~nan)
        return Truth(may_true & ~nan, may_false | nan)

    def _attribute(self, value: Column, name: str) -> Column:
        index = _COMPONENTS.get(name)
        if index is None:
            raise NotModelledError(f"attribute {name!r}")
        if isinstance(value, Vec) and index < value.value.shape[1]:
            return Num(value.value[:, index], value.err)
        if isinstance(value, FVec) and index < value.vec.value.shape[1]:
            component = value.vec.value[:, index]
            lo, hi = component - value.tolerance, component + value.tolerance
            return Ival(Num(lo, _slack(value.vec.err, lo)), Num(hi, _slack(value.vec.err, hi)))
        if isinstance(value, Fixed):
            raise NotModelledError("an attribute of a fixed value")
        raise NotModelledError(f"attribute {name!r} of this value")

    def _call(self, expr: Call[Expr], fixed: Mapping[str, Any]) -> Column:
        args = [self._eval(arg, fixed) for arg in expr.args]
        if expr.func == "fuzzy" and len(args) == 2:
            return self._fuzzy(args[0], args[1])
        if expr.func == "norm" and len(args) == 1 and isinstance(args[0], Vec):
            vec = args[0]
            squares = (vec.value * vec.value).sum(axis=1)
            norm = np.sqrt(squares)
            # |fl(norm) - norm| for any order of the sum: relative n*u of the sum, plus the inputs' own error
            err = vec.err * math.sqrt(vec.value.shape[1]) + ROUNDING * norm + TINY
            return Num(norm, err)
        if expr.func == "abs" and len(args) == 1 and isinstance(args[0], Num | Vec):
            arg = args[0]
            return type(arg)(np.abs(arg.value), arg.err)
        if expr.func == "isnan" and len(args) == 1 and isinstance(args[0], Num):
            nan = np.isnan(args[0].value)
            return Truth(nan, ~nan)
        if expr.func in ("min", "max") and len(args) == 2:
            a, b = self._num(args[0]), self._num(args[1])
            # Python's min(a, b) is b if b < a else a; max(a, b) is b if b > a else a (NaN never replaces)
            with np.errstate(invalid="ignore"):
                take_b = b.value < a.value if expr.func == "min" else b.value > a.value
                # where the two are within their errors the per-sample choice may differ: the gap joins the error
                close = ~(np.abs(a.value - b.value) > a.err + b.err)
                err = np.where(take_b, b.err, a.err)
                err = np.where(
                    close & ~np.isnan(a.value) & ~np.isnan(b.value), np.abs(a.value - b.value) + a.err + b.err, err
                )
            return Num(np.where(take_b, b.value, a.value), err)
        raise NotModelledError(f"{expr.func}() of per-sample values")

    def _arithmetic(self, op: str, left: Column, right: Column) -> Column:
        if isinstance(left, Vec) or isinstance(right, Vec):
            return self._vector_arithmetic(op, left, right)
        a, b = self._num(left), self._num(right)
        inexact = (a.err > 0) | (b.err > 0)
        with np.errstate(all="ignore"):
            if op == "+":
                value, err = a.value + b.value, a.err + b.err
            elif op == "-":
                value, err = a.value - b.value, a.err + b.err
            elif op == "*":
                value = a.value * b.value
                err = np.abs(a.value) * b.err + np.abs(b.value) * a.err + a.err * b.err
            else:
                room = np.abs(b.value) - b.err
                self.risky |= ~(room > 0)  # the divisor may be zero (a Python float raises), or is NaN
                value = a.value / b.value
                err = np.where(room > 0, (a.err + np.abs(value) * b.err) / np.where(room > 0, room, 1.0), np.inf)
        return self._result(Num(value, _slack(err, value, inexact)), inexact)

    def _result(self, column: Num | Vec, inexact: np.ndarray) -> Num | Vec:
        """``column``, the samples where an inexact value may overflow in one evaluation and not the other risky."""
        magnitude = np.abs(column.value) if isinstance(column, Num) else row_max(column.value)
        with np.errstate(invalid="ignore", over="ignore"):
            self.risky |= inexact & ~(magnitude + column.err < NEAR_OVERFLOW)
        return column

    def _vector_arithmetic(self, op: str, left: Column, right: Column) -> Column:
        if op in ("+", "-") and isinstance(left, Vec) and isinstance(right, Vec):
            if left.value.shape != right.value.shape:
                raise NotModelledError("vectors of different sizes")
            value = left.value + right.value if op == "+" else left.value - right.value
            inexact = (left.err > 0) | (right.err > 0)
            return self._result(Vec(value, _slack(left.err + right.err, value, inexact)), inexact)
        if op == "*" and (isinstance(left, Vec) != isinstance(right, Vec)):
            vec, other = (left, right) if isinstance(left, Vec) else (right, left)
            assert isinstance(vec, Vec)
            factor = self._num(other)
            inexact = (vec.err > 0) | (factor.err > 0)
            with np.errstate(all="ignore"):
                value = vec.value * factor.value[:, None]
                err = row_max(vec.value) * factor.err + np.abs(factor.value) * vec.err + vec.err * factor.err
            return self._result(Vec(value, _slack(err, value, inexact)), inexact)
        raise NotModelledError(f"vector {op!r}")


def _slack(err: np.ndarray, value: np.ndarray, inexact: np.ndarray | None = None) -> np.ndarray:
    """``err`` plus rounding slack where the value is not exact (``inexact``, default err > 0).

    The slack has an absolute floor (:data:`TINY`), so an error that underflowed is still an error.
    """
    magnitude = np.abs(value) if value.ndim == 1 else row_max(value)
    with np.errstate(invalid="ignore", over="ignore"):
        loose = (err > 0) if inexact is None else (inexact | (err > 0))
        return np.asarray(np.where(loose, err + ROUNDING * magnitude + TINY, err))


def row_max(values: np.ndarray) -> np.ndarray:
    """(n,) the largest magnitude of each row of (n, d) ``values``, NaN components ignored (NaN if all are).

    Args:
        values: Vectors, shape (n, d).
    """
    return np.asarray(np.fmax.reduce(np.abs(values), axis=1))


_NAMES: dict[int, tuple[Expr, frozenset[str]]] = {}


def _names(expr: Expr) -> frozenset[str]:
    """The names in ``expr``, found once per expression object (a guard is evaluated at every stretch of samples)."""
    hit = _NAMES.get(id(expr))
    if hit is not None and hit[0] is expr:
        return hit[1]
    if len(_NAMES) >= 4096:
        _NAMES.clear()
    names = frozenset(free_names(expr))
    _NAMES[id(expr)] = (expr, names)  # the expression is kept, so its id is not reused while cached
    return names


def _scalar(compute: Any) -> Any:
    """The per-sample evaluation's value of a fixed expression; NotModelledError if it fails."""
    try:
        return compute()
    except NotModelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever it raises, the per-sample evaluation reports it
        raise NotModelledError(str(exc)) from None
