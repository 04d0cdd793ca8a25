"""Syntax tree of a property expression (what the parser produces, before names are resolved).

Built of the nodes the monitor's languages share (:mod:`cosim_validation.monitor.syntax_tree`): a subclass
tells a term from a formula where both have the same shape (:class:`Arith` and :class:`Compare` are both an
``Infix``). Every node keeps ``pos``, its 0-based character offset in the expression, for error messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeAlias

from cosim_validation.common.config.config_node import MAX_CASE_TIME_S
from cosim_validation.monitor.syntax_tree import Call as Call  # a term function's call, as the languages share it
from cosim_validation.monitor.syntax_tree import Const, Infix, Prefix
from cosim_validation.monitor.syntax_tree import Name as Name  # a signal, constant, stage, obstacle or variable

#: the largest magnitude a number or constant of an expression may have: no length, angle or duration of a case
#: comes near it, and a margin computed with 1e300 overflowed to infinity, which read as "no sample was checked"
MAX_NUMBER = 1e12


class Num(Const[float]):
    """A number literal."""


@dataclass(frozen=True)
class Index:
    """``base[index]``, e.g. ``q[j]`` or ``joint[3]`` (0-based)."""

    base: Name
    index: Term
    pos: int = field(default=0, compare=False)


class Arith(Infix["Term"]):
    """Binary arithmetic ``left op right`` with op in + - * /."""


class Neg(Prefix["Term"]):
    """Unary minus (``op`` is ``-``)."""


#: a term function's call (dist, angle, p2m, entry, ...) is a plain :class:`Call`; a signal, constant, stage,
#: obstacle or bound variable (``tip``, ``expected.tip``, ``injection``) a plain :class:`Name`
Term: TypeAlias = "Num | Name | Index | Call[Term] | Arith | Neg"


class Compare(Infix["Term"]):
    """``left op right`` with op in < <= > >= == !=."""


class Predicate(Call["Term"]):
    """A seed predicate: safediff, safebound, safedis, nocollision (its name in ``func``)."""


class Flag(Name):
    """A boolean signal used as a condition, e.g. ``self_collision``."""


class BoolConst(Const[bool]):
    """``true`` or ``false``."""


class Not(Prefix["Formula"]):
    """``not f`` (``op`` is ``not``)."""


class Implies(Infix["Formula"]):
    """``f -> g`` (``op`` is ``->``)."""


@dataclass(frozen=True)
class Junction:
    """``f and g and ...`` or ``f or g or ...`` (``op`` is ``and`` or ``or``)."""

    op: str
    operands: tuple[Formula, ...]
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Temporal:
    """``always f``, ``eventually f`` (optionally ``[a, b]`` in seconds), ``next f`` or ``f until g``.

    Attributes:
        op: ``always``, ``eventually``, ``next`` or ``until``.
        window: The time window; None for none (always for ``next``).
        operands: ``(f,)``, or ``(f, g)`` for ``until``.
    """

    op: str
    window: Window | None
    operands: tuple[Formula, ...]
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Forall:
    """``forall v in domain, w in domain: f``."""

    bindings: tuple[tuple[str, str, int], ...]  # (variable, domain, pos)
    body: Formula
    pos: int = field(default=0, compare=False)


Formula: TypeAlias = "Compare | Predicate | Flag | BoolConst | Not | Junction | Implies | Temporal | Forall"


@dataclass(frozen=True)
class Window:
    """``[a, b]``, seconds after the current sample: each a number or a constant's name (resolved when compiled)."""

    a: float | str
    b: float | str
    pos: int = field(default=0, compare=False)


def window_problem(a: float, b: float) -> str:
    """What is wrong with the time window ``[a, b]``, or "" ([0, 1e300] was taken).

    Args:
        a: Its start, seconds after the current sample.
        b: Its end.
    """
    if 0 <= a <= b <= MAX_CASE_TIME_S:
        return ""
    return f"time window [{a:g}, {b:g}] must satisfy 0 <= a <= b <= {MAX_CASE_TIME_S:g} (seconds)"
