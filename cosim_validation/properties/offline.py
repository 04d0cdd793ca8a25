"""Offline evaluation: every property on a whole trajectory record (vectorised terms, numba operators)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cosim_validation.properties import formula as f
from cosim_validation.properties import kernels as k
from cosim_validation.properties.alignment import align_expected
from cosim_validation.properties.context import MonitorContext
from cosim_validation.properties.property_set import CompiledProperty, PropertySet
from cosim_validation.properties.robustness import (
    Bounds,
    ClauseResult,
    Unknowns,
    combine,
    leaf_bounds,
    unknown,
)
from cosim_validation.properties.sample import Block
from cosim_validation.properties.terms import Env
from cosim_validation.properties.verdict import Verdict
from cosim_validation.record import Stage, TrajectoryRecord


class _Trace:
    """Evaluation of the formula nodes of one property over one block; remembers the first NaN."""

    def __init__(self, env: Env) -> None:
        self.env = env
        self.t_s = env.block.t_s
        self.unknowns = Unknowns()

    def bounds(self, node: f.Formula) -> Bounds:
        if not node.children():
            (lo, hi), nan = leaf_bounds(node, self.env)
            if nan.any():
                first = int(np.argmax(nan))
                if math.isnan(self.unknowns.time_s) or self.t_s[first] < self.unknowns.time_s:
                    text = node.text if isinstance(node, f.Atom) else ""
                    self.unknowns = Unknowns(float(self.t_s[first]), text)
            return lo, hi
        if isinstance(node, f.Not):
            lo, hi = self.bounds(node.operand)
            if hi is lo:
                neg = -lo
                return neg, neg
            return -hi, -lo
        if isinstance(node, (f.And, f.Or)):
            parts = [self.bounds(op) for op in node.operands]
            pick = np.minimum if isinstance(node, f.And) else np.maximum
            return _pairwise(parts, pick)
        if isinstance(node, f.Until):
            return self._both(self.bounds(node.left), self.bounds(node.right), node.window)
        assert isinstance(node, (f.Next, f.Always, f.Eventually))
        lo, hi = self.bounds(node.operand)
        new_lo = self._unary(node, lo)
        return (new_lo, new_lo) if hi is lo else (new_lo, self._unary(node, hi))

    def _unary(self, node: f.Formula, values: np.ndarray) -> np.ndarray:
        if isinstance(node, f.Next):
            return np.concatenate([values[1:], [-np.inf]])
        assert isinstance(node, (f.Always, f.Eventually))
        is_min = isinstance(node, f.Always)
        if node.window is None:
            return k.suffix_extreme(values, is_min)
        lo, hi = k.window_bounds(self.t_s, *node.window)
        return k.sliding_extreme(values, lo, hi, is_min)

    def _both(self, left: Bounds, right: Bounds, window: tuple[float, float] | None) -> Bounds:
        def one(a: np.ndarray, b: np.ndarray) -> np.ndarray:
            if window is None:
                return k.until_unbounded(a, b)
            return k.until_window(a, b, self.t_s, *window)

        lo = one(left[0], right[0])
        same = left[1] is left[0] and right[1] is right[0]
        return (lo, lo) if same else (lo, one(left[1], right[1]))

    def clause(self, node: f.Formula) -> ClauseResult:
        n = self.env.block.n
        if isinstance(node, f.Always):
            lo, hi = self.bounds(node.operand)
            start, stop = (0, n) if node.window is None else _window_at_start(self.t_s, node.window)
            if start >= stop:
                return ClauseResult(math.inf, math.inf)
            first = k.first_at_or_below(hi, start, stop, 0.0)
            res_lo, res_hi = float(lo[start:stop].min()), float(hi[start:stop].min())
            if first < 0:
                return ClauseResult(res_lo, res_hi)
            return ClauseResult(res_lo, res_hi, float(self.t_s[first]), Stage(int(self.env.block.stage[first])))
        lo, hi = self.bounds(node)
        return ClauseResult(float(lo[0]), float(hi[0]), float(self.t_s[-1]), Stage(int(self.env.block.stage[-1])))


def _window_at_start(t_s: np.ndarray, window: tuple[float, float]) -> tuple[int, int]:
    """[start, stop) of the samples with t >= t0 + a and t <= t0 + b (the comparisons of the kernels)."""
    start = int(np.searchsorted(t_s, t_s[0] + window[0], side="left"))
    stop = int(np.searchsorted(t_s, t_s[0] + window[1], side="right"))
    return start, max(start, stop)


def _pairwise(parts: list[Bounds], pick: np.ufunc) -> Bounds:
    lo = parts[0][0]
    for part in parts[1:]:
        lo = pick(lo, part[0])
    if all(p[1] is p[0] for p in parts):
        return lo, lo
    hi = parts[0][1]
    for part in parts[1:]:
        hi = pick(hi, part[1])
    return lo, hi


def missing_requirement(prop: CompiledProperty, context: MonitorContext, has_expected: bool, has_actual: bool) -> str:
    """Why ``prop`` cannot be decided with what is available, or "" if it can."""
    needs = prop.compiled.requires
    if "expected" in needs and not has_expected:
        return "needs the expected trajectory (none given)"
    if "target" in needs and context.target_m is None:
        return "needs the case's target point (none in the context)"
    if "self_distance" in needs and context.self_distance is None:
        return "needs a self-collision model (none in the context)"
    if "obstacles" in needs and not context.obstacles:
        return "needs obstacles (the context has none: no scene given)"
    if "actual_tip" in needs and not has_actual:
        return "needs the actual tip pose (the trace has none)"
    return ""


def evaluate_property(
    prop: CompiledProperty, record: TrajectoryRecord, context: MonitorContext, expected: TrajectoryRecord | None
) -> Verdict:
    """The verdict of one compiled property on ``record``."""
    unit = prop.compiled.unit
    if record.n_samples == 0:
        return unknown(prop.name, record.robot, unit, "empty trace: no samples")
    missing = missing_requirement(prop, context, expected is not None and expected.n_samples > 0, record.has_actual_tip)
    if missing:
        return unknown(prop.name, record.robot, unit, missing)
    block = Block.from_record(record)
    aligned = None
    if prop.compiled.formula.uses_expected:
        assert expected is not None
        aligned = Block.from_record(expected).take(align_expected(record.t_s, expected.t_s))
    trace = _Trace(Env(block, aligned, context))
    results = [trace.clause(c) for c in f.clauses(prop.compiled.formula)]
    return combine(prop.name, record.robot, unit, results, trace.unknowns)


def evaluate(
    properties: PropertySet | Sequence[CompiledProperty],
    record: TrajectoryRecord,
    context: MonitorContext,
    expected: TrajectoryRecord | None = None,
) -> list[Verdict]:
    """Verdicts of every property that applies to ``record.robot``, in the order of the set.

    Args:
        properties: A property set (compiled here against ``context``) or already compiled properties.
        record: The robot's trajectory.
        context: Joints, needle, obstacles, self-collision model, target, constants.
        expected: The expected (planned) trajectory of the same case, for properties that compare with it.
    """
    compiled = properties.compile(context) if isinstance(properties, PropertySet) else list(properties)
    if isinstance(properties, PropertySet):
        context = properties.with_context(context)
    return [evaluate_property(p, record, context, expected) for p in compiled if p.applies_to(record.robot)]
