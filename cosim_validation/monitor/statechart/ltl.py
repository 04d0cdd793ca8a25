"""Linear temporal logic over the steps of a machine: syntax, checks against the machine, SPIN and SMV text.

A run is the sequence of configurations s0, s1, ... where s0 follows the initial entry and s(i) the i-th
step. Atoms are evaluated on s(i) together with what the i-th step saw and did::

    in(S)        S (a state path or unique name) is active
    flag(f)      an active state has flag f
    event(e)     event e was among the events of the step
    command(c)   the step's actions sent controller command c (s0: the initial entry's actions)
    left(S)      S was active before the step and is not after it
    entered(S)   S was not active before the step and is after it
    fired        the step took a transition
    true, false

Operators, loosest first: ``->`` and ``<->`` (right associative), ``or``/``||``, ``and``/``&&``,
``U`` (until), ``W`` (weak until: ``p W q`` = ``(p U q) or G p``), ``R`` (release), and the prefixes
``not``/``!``, ``G`` (always), ``F`` (eventually), ``X`` (next). Named definitions are expanded in place.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

from cosim_validation.monitor.statechart.errors import ExpressionError
from cosim_validation.monitor.statechart.tokens import Cursor
from cosim_validation.monitor.syntax_bounds import tree_problem
from cosim_validation.monitor.syntax_tree import Const, Infix, Prefix

PREDICATES = ("in", "flag", "event", "command", "left", "entered")
TEMPORAL_PREFIX = ("G", "F", "X")
TEMPORAL_INFIX = ("U", "W", "R")
RESERVED = frozenset({*PREDICATES, *TEMPORAL_PREFIX, *TEMPORAL_INFIX, "fired", "true", "false", "and", "or", "not"})


@dataclass(frozen=True)
class Atom:
    """``predicate(argument)``; ``fired`` has predicate ``fired`` and no argument."""

    predicate: str
    argument: str = ""


#: an atom, ``true`` or ``false``, ``not``/``G``/``F``/``X`` of a formula, or ``and``, ``or``, ``->``, ``<->``,
#: ``U``, ``W`` or ``R`` of two formulas
Formula: TypeAlias = "Atom | Const[bool] | Prefix[Formula] | Infix[Formula]"


def parse_ltl(text: str, definitions: Mapping[str, Formula] | None = None) -> Formula:
    """The formula written in ``text``; names in ``definitions`` are replaced by their formulas.

    Args:
        text: The formula, e.g. ``G (entered(Inject) -> F left(Inject))``.
        definitions: Formulas by name, usable in ``text`` as names; None for none.

    Raises:
        ExpressionError: Not a formula of the grammar (the message gives the column).
    """
    cursor = Cursor(text)
    formula = _implies(cursor, definitions or {})
    cursor.finish()
    problem = tree_problem(formula)  # definitions used twice each would expand to 2**n nodes
    if problem is not None:
        raise ExpressionError(problem, text)
    return formula


def atoms(formula: Formula) -> set[Atom]:
    """Every atom of ``formula``.

    Args:
        formula: A parsed formula (definitions expanded).
    """
    if isinstance(formula, Atom):
        return {formula}
    if isinstance(formula, Prefix):
        return atoms(formula.operand)
    if isinstance(formula, Infix):
        return atoms(formula.left) | atoms(formula.right)
    return set()


def render(formula: Formula, atom_text: Callable[[Atom], str], dialect: str) -> str:
    """The formula in SPIN's (``promela``) or NuSMV's (``smv``) syntax, atoms written by ``atom_text``.

    Args:
        formula: A parsed formula.
        atom_text: Writes one atom as an expression of the target language.
        dialect: ``promela`` for SPIN; any other value gives NuSMV's syntax (``smv``).
    """
    spin = dialect == "promela"
    if isinstance(formula, Atom):
        return atom_text(formula)
    if isinstance(formula, Const):
        return ("true" if formula.value else "false") if spin else ("TRUE" if formula.value else "FALSE")
    if isinstance(formula, Prefix):
        inner = render(formula.operand, atom_text, dialect)
        op = {"not": "!", "G": "[]" if spin else "G", "F": "<>" if spin else "F", "X": "X"}[formula.op]
        return f"{op} ({inner})"
    left = render(formula.left, atom_text, dialect)
    right = render(formula.right, atom_text, dialect)
    if formula.op == "W":
        always = "[]" if spin else "G"
        disjunction = "||" if spin else "|"
        return f"(({left}) U ({right}) {disjunction} {always} ({left}))"
    ops = {"and": "&&" if spin else "&", "or": "||" if spin else "|", "->": "->", "<->": "<->", "U": "U"}
    ops["R"] = "V"
    return f"(({left}) {ops[formula.op]} ({right}))"


# ---------------------------------------------------------------------- recursive descent
Defs = Mapping[str, Formula]


def _implies(c: Cursor, defs: Defs) -> Formula:
    with c.deeper():  # every parenthesis and every right-hand side comes back here
        left = _or(c, defs)
        op = c.accept("->", "<->")
        return left if op is None else Infix(op.text, left, _implies(c, defs), op.pos)


def _or(c: Cursor, defs: Defs) -> Formula:
    formula = _and(c, defs)
    while (op := c.accept("or", "||")) is not None:
        formula = Infix("or", formula, _and(c, defs), op.pos)
    return formula


def _and(c: Cursor, defs: Defs) -> Formula:
    formula = _temporal(c, defs)
    while (op := c.accept("and", "&&")) is not None:
        formula = Infix("and", formula, _temporal(c, defs), op.pos)
    return formula


def _temporal(c: Cursor, defs: Defs) -> Formula:
    left = _unary(c, defs)
    op = c.accept(*TEMPORAL_INFIX)
    if op is None:
        return left
    with c.deeper():
        return Infix(op.text, left, _temporal(c, defs), op.pos)


def _unary(c: Cursor, defs: Defs) -> Formula:
    op = c.accept("not", "!", *TEMPORAL_PREFIX)
    if op is None:
        return _atom(c, defs)
    with c.deeper():
        return Prefix("not" if op.text == "!" else op.text, _unary(c, defs), op.pos)


def _atom(c: Cursor, defs: Defs) -> Formula:
    if c.accept("("):
        formula = _implies(c, defs)
        c.expect(")")
        return formula
    token = c.token
    if token.kind != "name":
        raise c.error("expected an atom, a definition or '('")
    c.take()
    if token.text in ("true", "false"):
        return Const(token.text == "true", token.pos)
    if token.text == "fired":
        return Atom("fired")
    if token.text in PREDICATES:
        c.expect("(")
        argument = c.take()
        if argument.kind != "name":
            raise ExpressionError(f"{token.text}(...) takes a name", c.text, argument.pos)
        path = argument.text
        while c.accept("."):
            path += "." + c.take().text
        c.expect(")")
        return Atom(token.text, path)
    if token.text in defs:
        return defs[token.text]
    known = ", ".join([*PREDICATES, "fired", *defs])
    raise ExpressionError(f"unknown name {token.text!r}; atoms and definitions: {known}", c.text, token.pos)
