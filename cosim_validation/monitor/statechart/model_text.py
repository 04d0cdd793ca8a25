"""What the Promela model (:mod:`.promela`) and the SMV model (:mod:`.smv`) share.

One walk over a step table's conditions (which leaves, whether a transition is enabled, its input guard, the names
of goal atoms), written in either language's syntax. Only the syntax differs: ``==``/``&&``/``||`` against
``=``/``&``/``|``, and SMV reads a step's free variables (events, guards) as ``next(v)`` where Promela reads ``v``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import NamedTuple

from cosim_validation.monitor.statechart.expression import Expr
from cosim_validation.monitor.statechart.ltl import Atom
from cosim_validation.monitor.statechart.model import Transition
from cosim_validation.monitor.statechart.step_table import StepTable
from cosim_validation.monitor.syntax_tree import Const, Infix, Name, Prefix


class Syntax(NamedTuple):
    """A model language's operators and how it reads a step's free variable."""

    eq: str
    conj: str
    disj: str
    true: str
    false: str
    free: Callable[[str], str]


PROMELA = Syntax("==", "&&", "||", "true", "false", lambda var: var)
SMV = Syntax("=", "&", "|", "TRUE", "FALSE", lambda var: f"next({var})")


def ident(path: str) -> str:
    """An identifier (Promela and SMV) for a state path.

    Args:
        path: Dotted state path; each ``.`` becomes ``__``.
    """
    return path.replace(".", "__")


def atom_name(atom: Atom) -> str:
    """The macro (Promela) or define (SMV) that stands for ``atom`` in formulas.

    Args:
        atom: An atom of a goal, state arguments as full paths.
    """
    if atom.predicate == "event":
        return f"ev_{atom.argument}"
    if atom.predicate == "command":
        return f"cmd_{atom.argument}"
    if atom.predicate == "fired":
        return "p_fired"
    return f"{atom.predicate}_{ident(atom.argument)}"


def leaf_among(numbers: Iterable[int], syntax: Syntax, var: str = "leaf") -> str:
    """``var`` is one of the leaf ``numbers`` ("" for none), unbracketed.

    Args:
        numbers: Leaf numbers of the step table (1-based).
        syntax: The model language, :data:`PROMELA` or :data:`SMV`.
        var: The leaf variable tested: ``leaf`` (the active leaf) or ``prev`` (the leaf before the step).
    """
    return f" {syntax.disj} ".join(f"{var} {syntax.eq} {n}" for n in numbers)


def leaf_in(table: StepTable, path: str, syntax: Syntax, var: str = "leaf") -> str:
    """``var`` is a leaf of the state ``path`` (itself, or below it), in brackets.

    Args:
        table: The step table that numbers the leaves.
        path: Dotted path of a state.
        syntax: The model language, :data:`PROMELA` or :data:`SMV`.
        var: The leaf variable tested: ``leaf`` (the active leaf) or ``prev`` (the leaf before the step).
    """
    return f"({leaf_among(table.leaves_of(path), syntax, var)})"


def guard(expr: Expr, syntax: Syntax) -> str:
    """An input guard over the step's guard variables ``g_<name>``.

    Args:
        expr: A guard made only of ``and``/``or``/``not``, input guard names and true/false (as the step table
            checks).
        syntax: The model language, :data:`PROMELA` or :data:`SMV`.
    """
    if isinstance(expr, Name):
        return syntax.free(f"g_{expr.ident}")
    if isinstance(expr, Const):
        return syntax.true if expr.value else syntax.false
    if isinstance(expr, Prefix):
        return f"!({guard(expr.operand, syntax)})"
    assert isinstance(expr, Infix)
    op = syntax.conj if expr.op == "and" else syntax.disj
    return f"({guard(expr.left, syntax)} {op} {guard(expr.right, syntax)})"


def enabled(table: StepTable, transition: Transition, syntax: Syntax) -> str:
    """When ``transition`` is enabled in a step: its source is active, one of its events came, its guard holds.

    Args:
        table: The step table (leaf numbers and event variables).
        transition: A transition of the table's machine.
        syntax: The model language, :data:`PROMELA` or :data:`SMV`.
    """
    cond = [leaf_in(table, transition.source, syntax)]
    if transition.events:
        names = sorted({table.event_var(e) for e in transition.events})
        cond.append("(" + f" {syntax.disj} ".join(syntax.free(v) for v in names) + ")")
    if transition.guard is not None:
        cond.append(guard(transition.guard, syntax))
    return f" {syntax.conj} ".join(cond)
