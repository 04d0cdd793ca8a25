"""The expression grammar: precedence, windows, and errors that name the property and the column."""

from __future__ import annotations

import pytest

from cosim_validation.monitor.properties.errors import PropertyError
from cosim_validation.monitor.properties.language import syntax as s
from cosim_validation.monitor.properties.language.parser import parse_formula, tokenize


def test_tokens_keep_positions() -> None:
    toks = tokenize("always q[0] <= -1.5e-2")
    assert [(t.kind, t.text, t.pos) for t in toks] == [
        ("name", "always", 0),
        ("name", "q", 7),
        ("op", "[", 8),
        ("number", "0", 9),
        ("op", "]", 10),
        ("op", "<=", 12),
        ("op", "-", 15),
        ("number", "1.5e-2", 16),
        ("end", "", 22),
    ]


def test_precedence_implies_or_and_until_unary() -> None:
    tree = parse_formula("always a < 1 and b < 2 or not c < 3 until d < 4 -> e < 5")
    assert isinstance(tree, s.Implies)
    assert isinstance(tree.left, s.Junction)
    assert tree.left.op == "or"
    conj = tree.left.operands[0]
    assert isinstance(conj, s.Junction)
    assert conj.op == "and"
    assert isinstance(conj.operands[0], s.Temporal)
    assert conj.operands[0].op == "always"
    until = tree.left.operands[1]
    assert isinstance(until, s.Temporal)
    assert until.op == "until"
    assert isinstance(until.operands[0], s.Not)


def test_implies_is_right_associative() -> None:
    tree = parse_formula("a < 1 -> b < 1 -> c < 1")
    assert isinstance(tree, s.Implies)
    assert isinstance(tree.right, s.Implies)


def test_windows_and_quantifiers() -> None:
    tree = parse_formula("forall j in joints, o in obstacles: eventually[0.5, 2] safedis(joint[j], o, 0.01)")
    assert isinstance(tree, s.Forall)
    assert [(v, d) for v, d, _ in tree.bindings] == [("j", "joints"), ("o", "obstacles")]
    body = tree.body
    assert isinstance(body, s.Temporal)
    assert body.window == s.Window(0.5, 2.0)
    assert isinstance(body.operands[0], s.Predicate)
    assert body.operands[0].func == "safedis"
    until = parse_formula("a < 1 until[0, 3] b > 2")
    assert isinstance(until, s.Temporal)
    assert (until.op, until.window) == ("until", s.Window(0.0, 3.0))
    assert until.operands == (s.Compare("<", s.Name("a"), s.Num(1.0)), s.Compare(">", s.Name("b"), s.Num(2.0)))
    named = parse_formula("eventually[0, settle_s] q[0] < 1")
    assert isinstance(named, s.Temporal)
    assert named.window is not None
    assert (named.window.a, named.window.b) == (0.0, "settle_s")


def test_parenthesised_term_and_formula() -> None:
    term = parse_formula("(x(tip) + 1) * 2 < 3")
    assert isinstance(term, s.Compare)
    assert isinstance(term.left, s.Arith)
    assert term.left.op == "*"
    formula = parse_formula("(a < 1 or b < 2) and c < 3")
    assert isinstance(formula, s.Junction)
    assert formula.op == "and"
    assert isinstance(formula.operands[0], s.Junction)
    assert formula.operands[0].op == "or"


def test_arithmetic_precedence() -> None:
    tree = parse_formula("1 + 2 * 3 - -x < 0")
    assert isinstance(tree, s.Compare)
    left = tree.left
    assert isinstance(left, s.Arith)
    assert left.op == "-"
    assert isinstance(left.left, s.Arith)
    assert left.left.op == "+"
    assert isinstance(left.left.right, s.Arith)
    assert left.left.right.op == "*"
    assert isinstance(left.right, s.Neg)


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("", "empty expression", 1),
        ("   ", "empty expression", 4),
        ("always", "expected a signal", 7),
        ("always tip", "expected a comparison", 11),
        ("always x(tip) < 1 )", "unexpected '\\)'", 19),
        ("always[2, 1] x(tip) < 1", r"0 <= a <= b", 7),
        ("eventually[0, 1e5] x(tip) < 1", r"0 <= a <= b <= 3600 \(seconds\)", 11),  # no case lasts that long
        ("always[1 2] a < 1", "expected ','", 10),
        ("x < 1 $ 2", "unexpected character '\\$'", 7),
        ("forall j joints: a < 1", "expected 'in'", 10),
        ("forall j in joints a < 1", "expected ':'", 20),
        ("safediff(q[0], 1, 2", "expected '\\)'", 20),
        ("always and", "unexpected keyword 'and'", 8),
        # a call that is no predicate, left uncompared: named (it said "expected a comparison ... found the end")
        ("always frobnicate(tip)", r"frobnicate\(\.\.\.\) is not a predicate \(nocollision, safebound", 8),
        ("eventually dist(tip, target) and tip.x < 1", r"dist\(\.\.\.\) is not a predicate .*found 'and'", 12),
        # a "(" left open: the end is named, not the first comparison inside it (read as a term, "(t" wants ")")
        ("always (t < 1", "expected '\\)', found the end of the expression", 14),
        ("always (t < 1) and (t > 0", "expected '\\)', found the end of the expression", 26),
        ("always (stage == injection", "expected '\\)', found the end of the expression", 27),
        ("(always t < 1", "expected '\\)', found the end of the expression", 14),
        ("always (true", "expected '\\)', found the end of the expression", 13),
        ("always (x(tip) < < 1)", "expected a signal, number or function, found '<'", 18),
    ],
)
def test_malformed_expressions_name_property_and_column(text: str, message: str, column: int) -> None:
    with pytest.raises(PropertyError, match=message) as info:
        parse_formula(text, "my_property")
    assert "property 'my_property'" in str(info.value)
    if text.strip():
        assert f"at column {column}" in str(info.value)
    else:  # no column of nothing (it said "empty expression at column 4:", the line it ends with blank)
        assert str(info.value) == "property 'my_property': empty expression"
        assert info.value.position == column - 1


def test_flags_are_conditions() -> None:
    tree = parse_formula("always not self_collision")
    assert isinstance(tree, s.Temporal)
    negation = tree.operands[0]
    assert isinstance(negation, s.Not)
    assert negation.operand == s.Flag("self_collision")
    assert negation.operand.pos == 11
    assert negation.operand != s.Name("self_collision")  # a flag is a condition, not a term
    with pytest.raises(PropertyError, match="expected a comparison"):
        parse_formula("always tip")


def test_nodes_keep_positions_and_compare_by_what_they_say() -> None:
    tree = parse_formula("always  tip.x < 1 + d")
    assert isinstance(tree, s.Temporal)
    compare = tree.operands[0]
    assert isinstance(compare, s.Compare)
    assert (tree.pos, compare.pos, compare.left.pos) == (0, 14, 8)
    assert compare == parse_formula("always tip.x<1+d").operands[0]  # type: ignore[union-attr]
    assert s.Num(1.0) != s.BoolConst(True)  # a term is not a formula, whatever its value
    assert s.Arith("+", s.Num(1.0), s.Name("d")) != s.Compare("+", s.Num(1.0), s.Name("d"))
