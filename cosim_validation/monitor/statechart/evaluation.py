"""Evaluating guard and action expressions on a snapshot of named values.

Values are floats, bools, strings, lists and numpy vectors. ``x ~ tol`` makes LT4R's interval ([Fabry and Sinclair
2016],
section 4.2): ``(x ~ tol) > c`` holds when the whole interval [x - tol, x + tol] lies above c, ``< c`` when it
lies below, ``== c`` when c lies inside and ``!= c`` when it does not; a vector becomes per-component intervals
(``(v ~ 0.1).z > 0``). NaN values make every ordered comparison false, as in numpy. Texts and lists only join
with ``+``, and never past :data:`MAX_ITEMS` items.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim_validation.monitor.statechart.errors import ExpressionError
from cosim_validation.monitor.statechart.expression import Attr, Expr, ListLit
from cosim_validation.monitor.syntax_tree import Call, Const, Infix, Name, Prefix


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
        return compiled(expr)(env)
    except ExpressionError:
        raise
    except (ArithmeticError, TypeError, ValueError, IndexError, KeyError, AttributeError) as exc:
        raise ExpressionError(f"cannot evaluate: {exc}") from None


Evaluator = Callable[[Mapping[str, Any]], Any]
_COMPILED: dict[int, tuple[Expr, Evaluator]] = {}
_COMPILED_MAX = 4096


def compiled(expr: Expr) -> Evaluator:
    """``expr`` as a function of the values by name, built once per expression object (a guard runs every sample).

    The function decides exactly as walking the tree would; errors (unknown names, functions, attributes) are raised
    when it is called, as :func:`evaluate` reports them.

    Args:
        expr: A parsed guard or action value.
    """
    hit = _COMPILED.get(id(expr))
    if hit is not None and hit[0] is expr:
        return hit[1]
    if len(_COMPILED) >= _COMPILED_MAX:
        _COMPILED.clear()
    fn = _build(expr)
    _COMPILED[id(expr)] = (expr, fn)  # the expression is kept, so its id is not reused while cached
    return fn


def _build(expr: Expr) -> Evaluator:
    if isinstance(expr, Const):
        value = expr.value
        return lambda env: value
    if isinstance(expr, Name):
        return _variable(expr.ident)
    if isinstance(expr, Attr):
        base, name = _build(expr.base), expr.name
        return lambda env: _attribute(base(env), name)
    if isinstance(expr, Call):
        return _call(expr)
    if isinstance(expr, ListLit):
        items = tuple(_build(item) for item in expr.items)
        return lambda env: [item(env) for item in items]
    if isinstance(expr, Prefix):
        operand = _build(expr.operand)
        if expr.op == "not":
            return lambda env: not _truth(operand(env))
        return lambda env: -operand(env)
    return _binary(expr)


def _variable(name: str) -> Evaluator:
    def value(env: Mapping[str, Any]) -> Any:
        if name not in env:
            raise ExpressionError(f"unknown name {name!r}; known: {', '.join(sorted(env))}")
        return env[name]

    return value


def _call(expr: Call[Expr]) -> Evaluator:
    func = FUNCTIONS.get(expr.func)
    args = tuple(_build(a) for a in expr.args)
    if func is None:
        message = f"unknown function {expr.func!r}; functions: {', '.join(sorted(FUNCTIONS))}"

        def unknown(env: Mapping[str, Any]) -> Any:
            raise ExpressionError(message)

        return unknown
    return lambda env: func(*(a(env) for a in args))


_COMPARISONS = frozenset(("==", "!=", "<", "<=", ">", ">="))


def _binary(expr: Infix[Expr]) -> Evaluator:
    left, right, op = _build(expr.left), _build(expr.right), expr.op
    if op == "and":
        return lambda env: _truth(left(env)) and _truth(right(env))
    if op == "or":
        return lambda env: _truth(left(env)) or _truth(right(env))
    if op == "~":
        return lambda env: fuzzy(left(env), right(env))
    if op == "in":
        return lambda env: left(env) in right(env)
    function = _ARITHMETIC[op]
    if op in _COMPARISONS:
        return lambda env: bool(function(left(env), right(env)))
    return lambda env: _arithmetic(op, function, left(env), right(env))


#: The most items a text or list made by ``+`` may hold: a variable grown every step must not eat the memory.
MAX_ITEMS = 10_000
_SEQUENCES = (str, list, tuple)


def _arithmetic(op: str, function: Callable[[Any, Any], Any], a: Any, b: Any) -> Any:
    """``a op b``, refused before it is computed when it would repeat or grow a text or list past :data:`MAX_ITEMS`."""
    if isinstance(a, _SEQUENCES) or isinstance(b, _SEQUENCES):
        if op != "+" or not (isinstance(a, _SEQUENCES) and isinstance(b, _SEQUENCES)):
            joins = "texts and lists only join with '+'"
            raise ExpressionError(f"cannot evaluate: {op!r} takes numbers or vectors ({joins})")
        if (items := len(a) + len(b)) > MAX_ITEMS:
            raise ExpressionError(
                f"cannot evaluate: '+' would make a text or list of {items} items; at most {MAX_ITEMS}"
            )
    return function(a, b)


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
