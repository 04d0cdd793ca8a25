"""The syntax-tree nodes the monitor's three expression languages share: properties, guards and actions, LTL goals.

Each language is parsed by recursive descent (:mod:`cosim_validation.monitor.tokens`) into frozen dataclasses:
these five for what the languages have in common (a constant, a name, a function call, a prefix and an infix
operator), and a few of each language's own (a property's time window, a guard's list, an LTL atom). The operand
type is a parameter: a guard's :class:`Infix` holds guard expressions, an LTL goal's holds formulas. The property
language tells its terms from its formulas by subclasses (``Arith`` and ``Compare`` are both an :class:`Infix`).

Every node keeps ``pos``, its 0-based character offset in the text, for error messages. It takes no part in
equality: two nodes are equal when they say the same, wherever they were written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

#: what a constant holds: a number, a string or a bool
V = TypeVar("V", covariant=True)
#: the type of an operator's operands or a call's arguments
A = TypeVar("A", covariant=True)


@dataclass(frozen=True)
class Const(Generic[V]):
    """A literal as written: a number, a string, ``true`` or ``false``."""

    value: V
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Name:
    """An identifier: a signal, variable, constant, stage or obstacle (dotted where the language allows)."""

    ident: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Call(Generic[A]):
    """``func(args...)``."""

    func: str
    args: tuple[A, ...]
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Prefix(Generic[A]):
    """A prefix operator and its operand: ``not x``, ``-x``, LTL's ``G x``."""

    op: str
    operand: A
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Infix(Generic[A]):
    """A binary operator as written (``and`` for ``&&``): arithmetic, comparison, logic, LTL's ``U``."""

    op: str
    left: A
    right: A
    pos: int = field(default=0, compare=False)
