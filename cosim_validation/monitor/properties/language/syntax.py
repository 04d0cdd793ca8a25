"""Syntax tree of a property expression (what the parser produces, before names are resolved).

Every node keeps ``pos``, its 0-based character offset in the expression, for error messages.
"""

from __future__ import annotations

from dataclasses import dataclass

from cosim_validation.common.config.config_node import MAX_CASE_TIME_S

#: the largest magnitude a number or constant of an expression may have: no length, angle or duration of a case
#: comes near it, and a margin computed with 1e300 overflowed to infinity, which read as "no sample was checked"
MAX_NUMBER = 1e12


@dataclass(frozen=True)
class Num:
    """A number literal."""

    value: float
    pos: int


@dataclass(frozen=True)
class Name:
    """A signal, constant, stage, obstacle or bound variable, e.g. ``tip``, ``expected.tip``, ``injection``."""

    ident: str
    pos: int


@dataclass(frozen=True)
class Index:
    """``base[index]``, e.g. ``q[j]`` or ``joint[3]`` (0-based)."""

    base: Name
    index: Term
    pos: int


@dataclass(frozen=True)
class Call:
    """``func(args...)``: a term function (dist, angle, p2m, entry, ...) or a predicate (safediff, ...)."""

    func: str
    args: tuple[Term, ...]
    pos: int


@dataclass(frozen=True)
class Arith:
    """Binary arithmetic ``left op right`` with op in + - * /."""

    op: str
    left: Term
    right: Term
    pos: int


@dataclass(frozen=True)
class Neg:
    """Unary minus."""

    operand: Term
    pos: int


Term = Num | Name | Index | Call | Arith | Neg


@dataclass(frozen=True)
class Compare:
    """``left op right`` with op in < <= > >= == !=."""

    op: str
    left: Term
    right: Term
    pos: int


@dataclass(frozen=True)
class Predicate:
    """A seed predicate: safediff, safebound, safedis, nocollision."""

    name: str
    args: tuple[Term, ...]
    pos: int


@dataclass(frozen=True)
class Flag:
    """A boolean signal used as a condition, e.g. ``self_collision``."""

    ident: str
    pos: int


@dataclass(frozen=True)
class BoolConst:
    """``true`` or ``false``."""

    value: bool
    pos: int


@dataclass(frozen=True)
class Not:
    """``not f``."""

    operand: Formula
    pos: int


@dataclass(frozen=True)
class And:
    """``f and g and ...``."""

    operands: tuple[Formula, ...]
    pos: int


@dataclass(frozen=True)
class Or:
    """``f or g or ...``."""

    operands: tuple[Formula, ...]
    pos: int


@dataclass(frozen=True)
class Implies:
    """``f -> g``."""

    left: Formula
    right: Formula
    pos: int


@dataclass(frozen=True)
class Unary:
    """``always f``, ``eventually f`` (optionally ``[a, b]`` in seconds) or ``next f``."""

    op: str
    window: Window | None
    operand: Formula
    pos: int


@dataclass(frozen=True)
class Until:
    """``f until g`` (optionally ``until[a, b]``)."""

    left: Formula
    right: Formula
    window: Window | None
    pos: int


@dataclass(frozen=True)
class Forall:
    """``forall v in domain, w in domain: f``."""

    bindings: tuple[tuple[str, str, int], ...]  # (variable, domain, pos)
    body: Formula
    pos: int


Formula = Compare | Predicate | Flag | BoolConst | Not | And | Or | Implies | Unary | Until | Forall


@dataclass(frozen=True)
class Window:
    """``[a, b]``, seconds after the current sample: each a number or a constant's name (resolved when compiled)."""

    a: float | str
    b: float | str
    pos: int


def window_problem(a: float, b: float) -> str:
    """What is wrong with the time window ``[a, b]``, or "" ([0, 1e300] was taken).

    Args:
        a: Its start, seconds after the current sample.
        b: Its end.
    """
    if 0 <= a <= b <= MAX_CASE_TIME_S:
        return ""
    return f"time window [{a:g}, {b:g}] must satisfy 0 <= a <= b <= {MAX_CASE_TIME_S:g} (seconds)"
