"""Compiled formulas: the temporal structure over atoms whose robustness is a per-sample term.

Robust semantics on finite traces (docs/PROPERTIES.md): an atom's robustness is a signed distance
to its violation (> 0 true); ``not`` negates, ``and``/``or`` take min/max, ``always``/``eventually``
take min/max over their time window, ``until`` is max over t' of min(right(t'), min of left before t').
Windows are truncated at the end of the trace. Boolean conditions (stage tests) have robustness +-inf.
"""

from __future__ import annotations

from dataclasses import dataclass

from cosim_validation.monitor.properties.language.terms import Term


class Formula:
    """Base of every compiled formula node."""

    def children(self) -> tuple[Formula, ...]:
        """Direct sub-formulas."""
        return ()

    @property
    def bounded(self) -> bool:
        """True if every temporal operator below (and here) looks a bounded time ahead."""
        return all(c.bounded for c in self.children())

    @property
    def uses_expected(self) -> bool:
        """True if some atom below reads the expected robot."""
        return any(c.uses_expected for c in self.children())


@dataclass(eq=False)
class Atom(Formula):
    """Robustness is ``term`` (a scalar in ``unit``); ``text`` is the source, for messages."""

    term: Term
    unit: str
    text: str

    @property
    def uses_expected(self) -> bool:
        """True if the atom's term reads the expected robot."""
        return self.term.uses_expected


@dataclass(eq=False)
class StageTest(Formula):
    """``stage == S`` or ``supervisor == M`` (``!=`` when ``negated``): robustness +inf when true, -inf when false.

    The test is of an integer signal equal to ``stage`` (a stage or supervisor mode value).
    """

    term: Term
    stage: int
    negated: bool

    @property
    def uses_expected(self) -> bool:
        """True if the tested signal is the expected robot's."""
        return self.term.uses_expected


@dataclass(eq=False)
class FlagTest(Formula):
    """A boolean signal: robustness +inf when true, -inf when false, unknown where NaN.

    ``term`` evaluates to a bool array, or floats with NaN where unknown; ``text`` is its name in the property.
    """

    term: Term
    text: str = ""


@dataclass(eq=False)
class Constant(Formula):
    """``true`` (+inf) or ``false`` (-inf)."""

    value: bool


@dataclass(eq=False)
class Not(Formula):
    """Negation."""

    operand: Formula

    def children(self) -> tuple[Formula, ...]:
        """The operand."""
        return (self.operand,)


@dataclass(eq=False)
class And(Formula):
    """Conjunction (min)."""

    operands: tuple[Formula, ...]

    def children(self) -> tuple[Formula, ...]:
        """The operands."""
        return self.operands


@dataclass(eq=False)
class Or(Formula):
    """Disjunction (max)."""

    operands: tuple[Formula, ...]

    def children(self) -> tuple[Formula, ...]:
        """The operands."""
        return self.operands


@dataclass(eq=False)
class Next(Formula):
    """Value of the operand at the next sample; -inf at the last sample (strong next)."""

    operand: Formula

    def children(self) -> tuple[Formula, ...]:
        """The operand."""
        return (self.operand,)


@dataclass(eq=False)
class Always(Formula):
    """Min of the operand over samples t' with t' - t in ``window`` (all later samples if None)."""

    operand: Formula
    window: tuple[float, float] | None

    def children(self) -> tuple[Formula, ...]:
        """The operand."""
        return (self.operand,)

    @property
    def bounded(self) -> bool:
        """True if the window is bounded and the operand is bounded."""
        return self.window is not None and self.operand.bounded


@dataclass(eq=False)
class Eventually(Formula):
    """Max of the operand over samples t' with t' - t in ``window`` (all later samples if None)."""

    operand: Formula
    window: tuple[float, float] | None

    def children(self) -> tuple[Formula, ...]:
        """The operand."""
        return (self.operand,)

    @property
    def bounded(self) -> bool:
        """True if the window is bounded and the operand is bounded."""
        return self.window is not None and self.operand.bounded


@dataclass(eq=False)
class Until(Formula):
    """max over t' (t' - t in ``window``) of min(right(t'), min of left over [t, t'))."""

    left: Formula
    right: Formula
    window: tuple[float, float] | None

    def children(self) -> tuple[Formula, ...]:
        """The left and the right operand."""
        return (self.left, self.right)

    @property
    def bounded(self) -> bool:
        """True if the window is bounded and both operands are bounded."""
        return self.window is not None and self.left.bounded and self.right.bounded


def atoms(formula: Formula) -> list[Formula]:
    """Every leaf (Atom, StageTest, FlagTest, Constant) below ``formula``, depth first.

    Args:
        formula: A compiled formula (a leaf gives itself).
    """
    kids = formula.children()
    if not kids:
        return [formula]
    return [leaf for child in kids for leaf in atoms(child)]


def clauses(formula: Formula) -> tuple[Formula, ...]:
    """The top-level conjuncts of ``formula`` (a forall becomes one clause per instance).

    Args:
        formula: A compiled formula (anything but an ``and`` is one clause).
    """
    if isinstance(formula, And):
        return tuple(c for op in formula.operands for c in clauses(op))
    return (formula,)
