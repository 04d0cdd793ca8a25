"""The guard and action language: grammar, LT4R's fuzzy comparisons, errors with their column."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim_validation.monitor.statechart.errors import ExpressionError
from cosim_validation.monitor.statechart.evaluation import Interval, evaluate, fuzzy
from cosim_validation.monitor.statechart.expression import (
    Assignment,
    free_names,
    parse_action,
    parse_expression,
)
from cosim_validation.monitor.syntax_tree import Const, Infix, Name, Prefix


def value(text: str, **env: object) -> object:
    return evaluate(parse_expression(text), env)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2 * 3", 7.0),
        ("(1 + 2) * 3", 9.0),
        ("-2 - -3", 1.0),
        ("not true or true", True),
        ("not (true or true)", False),
        ("true and false or true", True),
        ("1 < 2 and 2 <= 2 and 3 > 2 and 3 >= 4", False),
        ("'injection' in ['approach', 'injection']", True),
        ("'reset' not in ['approach', 'injection']", True),
        ("abs(-2) + max(1, 3) - min(4, 5)", 1.0),
        ("1e-3 * 2", 0.002),
        ("true && !false || false", True),
    ],
)
def test_grammar_and_values(text: str, expected: object) -> None:
    assert value(text) == expected


def test_names_vectors_and_functions() -> None:
    v = np.array([0.1, -0.2, 3.0])
    assert value("v.z - v.x", v=v) == pytest.approx(2.9)
    assert value("norm(v)", v=v) == pytest.approx(math.sqrt(0.01 + 0.04 + 9.0))
    assert value("isnan(d)", d=float("nan")) is True
    assert free_names(parse_expression("a + f(b, [c]) < d.x")) == {"a", "b", "c", "d"}


def test_fuzzy_comparisons_follow_lt4r() -> None:
    """``x ~ tol`` compares the interval [x - tol, x + tol] (seed 004, 4.2)."""
    assert value("(x ~ 1) == -0.75", x=0.0)  # the seed's own example: the ball at the origin
    assert not value("(x ~ 1) == 1.5", x=0.0)
    assert value("x ~ 0.001 < 0", x=-0.002)
    assert not value("x ~ 0.001 < 0", x=-0.0005)
    assert value("x ~ 0.001 > 0", x=0.002)
    assert not value("x ~ 0.001 > 0", x=0.0005)
    assert value("x ~ 0.001 != 0", x=0.002)
    assert not value("x ~ 0.001 != 0", x=0.0005)
    assert value("(v ~ 0.1).z > 0", v=np.array([0.0, 0.0, 0.2]))
    assert not value("(v ~ 0.1).z > 0", v=np.array([0.0, 0.0, 0.05]))
    assert not value("x ~ 0.1 < 1", x=float("nan"))  # NaN intervals compare false
    assert fuzzy(2.0, 0.5) == Interval(1.5, 2.5)


def test_precedence_of_the_tree() -> None:
    tree = parse_expression("not a and b ~ 0.1 < c or d")
    assert isinstance(tree, Infix)
    assert tree.op == "or"
    left = tree.left
    assert isinstance(left, Infix)
    assert left.op == "and"
    assert isinstance(left.left, Prefix)
    assert left.left.operand == Name("a")
    assert isinstance(left.right, Infix)
    assert left.right.op == "<"
    assert left.right == Infix("<", Infix("~", Name("b"), Const(0.1)), Name("c"))
    assert (tree.pos, left.pos, left.left.pos, left.left.operand.pos) == (22, 6, 0, 4)  # where each was written


def test_actions_are_commands_or_assignments() -> None:
    assert parse_action("stop_and_hold") == "stop_and_hold"
    action = parse_action("entries = entries + 1")
    assert isinstance(action, Assignment)
    assert action.name == "entries"
    with pytest.raises(ExpressionError, match="an action is a command name"):
        parse_action("1 = x")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a and", "expected a value, found 'end of text' at column 6"),
        ("a < b < c", "comparisons do not chain"),
        ("a $ b", r"unexpected character '\$' at column 3"),
        ("'open", "unterminated string at column 1"),
        ("(a", r"expected '\)'"),
        ("a b", "unexpected text after the expression"),
    ],
)
def test_syntax_errors_give_the_column(text: str, message: str) -> None:
    with pytest.raises(ExpressionError, match=message):
        parse_expression(text)


def test_evaluation_errors() -> None:
    with pytest.raises(ExpressionError, match="unknown name 'y'; known: x"):
        value("y > 1", x=1.0)
    with pytest.raises(ExpressionError, match="unknown function 'sqrt'"):
        value("sqrt(x)", x=1.0)
    with pytest.raises(ExpressionError, match="not a truth value"):
        value("(x ~ 1) and true", x=1.0)
    with pytest.raises(ExpressionError, match="cannot evaluate"):
        value("'a' < 1")


def test_texts_and_lists_are_bounded_before_they_are_made() -> None:
    assert value("['a'] + ['b']") == ["a", "b"]
    assert value("'ab' + 'c'") == "abc"
    with pytest.raises(ExpressionError, match="'\\*' takes numbers or vectors"):
        value("'a' * 10000000000")
    with pytest.raises(ExpressionError, match="'-' takes numbers or vectors"):
        value("[1] - [1]")
    with pytest.raises(ExpressionError, match="'\\+' would make a text or list of 12000 items; at most 10000"):
        value("x + x", x=["a"] * 6000)
