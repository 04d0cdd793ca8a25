"""The guard and action language: a small expression grammar parsed into frozen syntax trees.

Grammar, loosest binding first::

    expr    := or
    or      := and ("or" and)*            also "||"
    and     := not ("and" not)*           also "&&"
    not     := ("not" | "!") not | compare
    compare := fuzzy (("==" | "!=" | "<" | "<=" | ">" | ">=" | "in" | "not in") fuzzy)?
    fuzzy   := sum ("~" sum)?             LT4R's interval: ``x ~ tol`` ([Fabry and Sinclair 2016], section 4.2)
    sum     := product (("+" | "-") product)*
    product := unary (("*" | "/") unary)*
    unary   := "-" unary | postfix
    postfix := atom ("." name | "(" args ")")*
    atom    := number | string | "true" | "false" | name | "[" args "]" | "(" expr ")"

An action is either a command name or an assignment ``name = expr``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from cosim_validation.monitor.statechart.errors import ExpressionError
from cosim_validation.monitor.statechart.tokens import Cursor
from cosim_validation.monitor.syntax_bounds import tree_problem
from cosim_validation.monitor.syntax_tree import Call, Const, Infix, Name, Prefix

KEYWORDS = frozenset({"and", "or", "not", "in", "true", "false"})
COMPARISONS = ("==", "!=", "<=", ">=", "<", ">", "in")


@dataclass(frozen=True)
class Attr:
    """``base.name`` (vector components ``x``, ``y``, ``z``)."""

    base: Expr
    name: str


@dataclass(frozen=True)
class ListLit:
    """``[a, b, ...]``."""

    items: tuple[Expr, ...]


#: a literal number, string or bool; a name (a signal, variable, parameter or input guard); a built-in
#: function's call; ``not x`` or ``-x``; arithmetic, ``and``/``or``, ``~`` and comparisons (``&&`` as ``and``)
Expr: TypeAlias = "Const[float | str | bool] | Name | Attr | Call[Expr] | ListLit | Prefix[Expr] | Infix[Expr]"


@dataclass(frozen=True)
class Assignment:
    """An action that sets a variable: ``name = value``."""

    name: str
    value: Expr


def parse_expression(text: str) -> Expr:
    """The syntax tree of ``text``.

    Args:
        text: A guard or other expression of the grammar, e.g. ``distance_m < 0.002 and not hold``.

    Raises:
        ExpressionError: The text is not an expression of the grammar (message gives the column).
    """
    cursor = Cursor(text)
    expr = _or(cursor)
    cursor.finish()
    return bounded(expr, text)


def bounded(expr: Expr, text: str) -> Expr:
    """``expr``, unless it is nested too deep or too big to evaluate.

    Args:
        expr: A parsed syntax tree (after any named guards are expanded into it).
        text: The expression as written, for the error message.

    Raises:
        ExpressionError: What :func:`~cosim_validation.monitor.syntax_bounds.tree_problem` found.
    """
    problem = tree_problem(expr)
    if problem is not None:
        raise ExpressionError(problem, text)
    return expr


def parse_action(text: str) -> str | Assignment:
    """A command name (returned as the name) or an assignment ``name = expr``.

    Args:
        text: The action as written, e.g. ``start_insertion`` or ``retries = retries + 1``.

    Raises:
        ExpressionError: Neither a name (keywords excluded) nor ``name = expression``.
    """
    cursor = Cursor(text)
    first = cursor.take()
    if first.kind != "name" or first.text in KEYWORDS:
        raise ExpressionError("an action is a command name or 'variable = expression'", text, first.pos)
    if cursor.accept("="):
        value = _or(cursor)
        cursor.finish()
        return Assignment(first.text, bounded(value, text))
    cursor.finish()
    return first.text


def subexpressions(expr: Expr) -> list[Expr]:
    """``expr`` and every expression inside it, each once (the tree's nodes, parents before their children).

    Args:
        expr: A syntax tree.
    """
    found, todo = [], [expr]
    while todo:  # not recursive: an expression is bounded in size, not in how its nodes nest
        item = todo.pop()
        found.append(item)
        if isinstance(item, Attr):
            todo.append(item.base)
        elif isinstance(item, Call):
            todo.extend(reversed(item.args))
        elif isinstance(item, ListLit):
            todo.extend(reversed(item.items))
        elif isinstance(item, Prefix):
            todo.append(item.operand)
        elif isinstance(item, Infix):
            todo.extend((item.right, item.left))
    return found


def free_names(expr: Expr) -> set[str]:
    """Every :class:`~cosim_validation.monitor.syntax_tree.Name` in ``expr`` (function names excluded).

    Args:
        expr: A syntax tree.
    """
    return {e.ident for e in subexpressions(expr) if isinstance(e, Name)}


def functions_used(expr: Expr) -> set[str]:
    """Names of the functions called in ``expr``.

    Args:
        expr: A syntax tree.
    """
    return {e.func for e in subexpressions(expr) if isinstance(e, Call)}


# ---------------------------------------------------------------------- recursive descent
def _or(c: Cursor) -> Expr:
    with c.deeper():  # every parenthesis, argument and list item comes back here
        expr = _and(c)
        while (op := c.accept("or", "||")) is not None:
            expr = Infix("or", expr, _and(c), op.pos)
        return expr


def _and(c: Cursor) -> Expr:
    expr = _not(c)
    while (op := c.accept("and", "&&")) is not None:
        expr = Infix("and", expr, _not(c), op.pos)
    return expr


def _not(c: Cursor) -> Expr:
    if (op := c.accept("not", "!")) is not None:
        with c.deeper():
            return Prefix("not", _not(c), op.pos)
    return _compare(c)


def _compare(c: Cursor) -> Expr:
    left = _fuzzy(c)
    if c.peek("not") and c.tokens[c.index + 1].text == "in":
        negation = c.take()
        c.take()
        return Prefix("not", Infix("in", left, _fuzzy(c), negation.pos), negation.pos)
    op = c.accept(*COMPARISONS)
    if op is None:
        return left
    expr = Infix(op.text, left, _fuzzy(c), op.pos)
    if c.peek(*COMPARISONS):
        raise c.error("comparisons do not chain; use 'and'")
    return expr


def _fuzzy(c: Cursor) -> Expr:
    expr = _sum(c)
    if (op := c.accept("~")) is not None:
        expr = Infix("~", expr, _sum(c), op.pos)
    return expr


def _sum(c: Cursor) -> Expr:
    expr = _product(c)
    while (op := c.accept("+", "-")) is not None:
        expr = Infix(op.text, expr, _product(c), op.pos)
    return expr


def _product(c: Cursor) -> Expr:
    expr = _unary(c)
    while (op := c.accept("*", "/")) is not None:
        expr = Infix(op.text, expr, _unary(c), op.pos)
    return expr


def _unary(c: Cursor) -> Expr:
    if (op := c.accept("-")) is not None:
        with c.deeper():
            return Prefix("-", _unary(c), op.pos)
    return _postfix(c)


def _postfix(c: Cursor) -> Expr:
    expr = _atom(c)
    while True:
        if c.accept("."):
            name = c.take()
            if name.kind != "name":
                raise c.error("expected an attribute name after '.'")
            expr = Attr(expr, name.text)
        elif c.peek("(") and isinstance(expr, Name):
            c.take()
            expr = Call(expr.ident, _arguments(c, ")"), expr.pos)
        else:
            return expr


def _arguments(c: Cursor, close: str) -> tuple[Expr, ...]:
    items: list[Expr] = []
    if c.accept(close):
        return ()
    items.append(_or(c))
    while c.accept(","):
        items.append(_or(c))
    c.expect(close)
    return tuple(items)


def _atom(c: Cursor) -> Expr:
    token = c.token
    if token.kind == "number":
        c.take()
        return Const(float(token.text), token.pos)
    if token.kind == "string":
        c.take()
        return Const(token.text, token.pos)
    if c.accept("("):
        expr = _or(c)
        c.expect(")")
        return expr
    if c.accept("["):
        return ListLit(_arguments(c, "]"))
    if token.kind == "name" and token.text in ("true", "false"):
        c.take()
        return Const(token.text == "true", token.pos)
    if token.kind == "name" and token.text not in KEYWORDS:
        c.take()
        return Name(token.text, token.pos)
    raise c.error("expected a value")
