"""The bounds on expression trees: measured without recursion, shared subtrees expanded, exact at the edge."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cosim_validation.common.exceptions import CosimError
from cosim_validation.monitor.properties.language.parser import parse_formula
from cosim_validation.monitor.statechart.expression import Expr, parse_expression
from cosim_validation.monitor.statechart.ltl import parse_ltl
from cosim_validation.monitor.syntax_bounds import MAX_EXPRESSION_DEPTH, tree_problem, tree_size
from cosim_validation.monitor.syntax_tree import Const, Infix


def test_a_chain_far_deeper_than_the_recursion_limit_is_measured() -> None:
    tree: Expr = Const(1.0)
    for _ in range(100_000):
        tree = Infix("+", tree, Const(1.0))
    size = tree_size(tree)
    assert size == (200_001, 100_001)


def test_shared_subtrees_count_expanded_but_are_walked_once() -> None:
    tree: Expr = Const(True)
    for _ in range(40):  # 2**41 - 1 nodes expanded: a walk that did not share would never end
        tree = Infix("and", tree, tree)
    size, problem = tree_size(tree), str(tree_problem(tree))  # (the tree's repr would not end either)
    assert size == (2**41 - 1, 41)
    assert "more than 10000 terms" in problem


PARSERS: dict[str, tuple[Callable[[str], object], Callable[[int], str]]] = {
    "guard_not": (parse_expression, lambda n: "not " * n + "x"),
    "guard_parentheses": (parse_expression, lambda n: "(" * n + "x" + ")" * n),
    "ltl_always": (parse_ltl, lambda n: "G " * n + "fired"),
    "ltl_parentheses": (parse_ltl, lambda n: "(" * n + "fired" + ")" * n),
    "property_not": (parse_formula, lambda n: "not " * n + "a < b"),
    "property_parentheses": (parse_formula, lambda n: "(" * n + "a < b" + ")" * n),
}


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_nesting_bound_is_exact(name: str) -> None:
    """Every parser accepts nesting up to the bound less one level (the outermost expression is a level) and
    refuses one more with the bound's message, never a RecursionError."""
    parse, text = PARSERS[name]
    parse(text(MAX_EXPRESSION_DEPTH - 2))
    with pytest.raises(CosimError, match=f"nested deeper than {MAX_EXPRESSION_DEPTH} levels"):
        parse(text(MAX_EXPRESSION_DEPTH + 1))
    with pytest.raises(CosimError, match=f"nested deeper than {MAX_EXPRESSION_DEPTH} levels"):
        parse(text(100_000))
