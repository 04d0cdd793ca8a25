"""Robustness of atoms as intervals [lo, hi], and the verdict of a property from its clauses.

A NaN sample makes an atom's robustness unknown: the interval [-inf, +inf]. Every operator is
monotone in its operands (negation swaps the bounds), so evaluating the formula on the lower and on
the upper bounds gives an interval that holds the true margin whatever the unknown values were.
Without NaN both bounds are the same array and are computed once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.monitor.properties.language import formula as f
from cosim_validation.monitor.properties.language.terms import Env
from cosim_validation.monitor.properties.verdict import Status, Verdict

Bounds = tuple[np.ndarray, np.ndarray]  # (lo, hi); hi is lo when no sample is unknown


def leaf_bounds(leaf: f.Formula, env: Env) -> tuple[Bounds, np.ndarray]:
    """Robustness bounds of a leaf on every sample of ``env.block``, and the (n,) mask of NaN samples.

    Args:
        leaf: A leaf of a compiled formula: an Atom, StageTest, FlagTest or Constant.
        env: The samples (``env.block``, n rows) and the context the leaf is evaluated in.

    Returns:
        ((lo, hi), nan): (n,) float64 bounds in the leaf's unit (+-inf for conditions; the same array when no
        sample is unknown) and the (n,) bool mask of the unknown samples.
    """
    n = env.block.n
    if isinstance(leaf, f.Constant):
        value = np.full(n, np.inf if leaf.value else -np.inf)
        return (value, value), np.zeros(n, dtype=bool)
    if isinstance(leaf, f.FlagTest):
        flags = np.asarray(leaf.term.evaluate(env), dtype=np.float64)
        unknown_flag = np.isnan(flags)
        value = np.where(flags > 0.5, np.inf, -np.inf)
        if not unknown_flag.any():
            return (value, value), unknown_flag
        return (np.where(unknown_flag, -np.inf, value), np.where(unknown_flag, np.inf, value)), unknown_flag
    if isinstance(leaf, f.StageTest):
        equal = leaf.term.evaluate(env) == leaf.stage
        value = np.where(equal != leaf.negated, np.inf, -np.inf)
        return (value, value), np.zeros(n, dtype=bool)
    assert isinstance(leaf, f.Atom)
    raw = np.asarray(leaf.term.evaluate(env), dtype=np.float64)
    nan = np.isnan(raw)
    if not nan.any():
        return (raw, raw), nan
    return (np.where(nan, -np.inf, raw), np.where(nan, np.inf, raw)), nan


@dataclass(frozen=True)
class ClauseResult:
    """Value of one top-level clause at the case start, and where it was first violated.

    Attributes:
        lo, hi: Bounds of the robustness [unit of the property].
        violation_time_s: Time of the first violation (``always`` clauses: the first sample whose
            robustness is <= 0; other clauses: the last sample of the trace); NaN if hi > 0.
        violation_stage: Stage of that sample.
    """

    lo: float
    hi: float
    violation_time_s: float = math.nan
    violation_stage: Stage = Stage.NONE


@dataclass(frozen=True)
class Unknowns:
    """Where the first NaN sample of an atom was seen: time [s] and the atom's text; time NaN if none."""

    time_s: float = math.nan
    atom: str = ""


def combine(
    name: str,
    robot: RobotRole,
    unit: str,
    results: list[ClauseResult],
    unknowns: Unknowns,
    final: bool = True,
) -> Verdict:
    """The verdict of a property from its clause results (min over clauses).

    Args:
        name: Property name.
        robot: Which robot the verdict is about.
        unit: Unit of the margin: ``m``, ``rad``, ``s`` or ``1``.
        results: Results of the property's top-level clauses, at least one.
        unknowns: Where the first NaN sample was seen (named in the reason when the margin is only a bound).
        final: False while a live monitor may still change the verdict or the margin.
    """
    lo = min(r.lo for r in results)
    hi = min(r.hi for r in results)
    nan_note = f"NaN in {unknowns.atom!r} from t={unknowns.time_s:.6g} s" if not math.isnan(unknowns.time_s) else ""
    if hi <= 0:
        first = min((r for r in results if r.hi <= 0), key=lambda r: r.violation_time_s)
        reason = f"margin is an upper bound ({nan_note})" if lo != hi else ""
        return Verdict(
            name, robot, Status.VIOLATED, hi, unit, first.violation_time_s, first.violation_stage, final, reason
        )
    if lo > 0:
        if unit != "1" and math.isinf(lo):
            reason = "vacuous: no sample was checked (e.g. the stage the property restricts to never occurred)"
            return Verdict(name, robot, Status.UNKNOWN, math.nan, unit, final=final, reason=reason)
        reason = f"margin is a lower bound ({nan_note})" if lo != hi else ""
        return Verdict(name, robot, Status.HOLDS, lo, unit, final=final, reason=reason)
    return Verdict(name, robot, Status.UNKNOWN, math.nan, unit, final=final, reason=nan_note or "undecided")


def unknown(name: str, robot: RobotRole, unit: str, reason: str, final: bool = True) -> Verdict:
    """An UNKNOWN verdict with ``reason``.

    Args:
        name: Property name.
        robot: Which robot the verdict is about.
        unit: Unit of the property's margin: ``m``, ``rad``, ``s`` or ``1``.
        reason: Why the property cannot be decided.
        final: False while a live monitor may still decide it.
    """
    return Verdict(name, robot, Status.UNKNOWN, math.nan, unit, final=final, reason=reason)
