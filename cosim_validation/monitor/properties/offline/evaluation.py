"""Offline evaluation: every property on a whole trajectory record (vectorised terms, numba operators)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cosim_validation.common.record import Stage, TrajectoryRecord
from cosim_validation.monitor.properties.alignment import align_expected
from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.kpis.case_level import case_level_verdict, kpis_of, run_kpis, whole_case
from cosim_validation.monitor.properties.kpis.specs import KpiSpec
from cosim_validation.monitor.properties.language import formula as f
from cosim_validation.monitor.properties.language.robustness import (
    Bounds,
    ClauseResult,
    Unknowns,
    combine,
    leaf_bounds,
    unknown,
)
from cosim_validation.monitor.properties.language.terms import Env
from cosim_validation.monitor.properties.machines import MachineResult
from cosim_validation.monitor.properties.machines.behaviours import run_all
from cosim_validation.monitor.properties.offline import kernels as k
from cosim_validation.monitor.properties.offline.bounded_always import BoundedAlways
from cosim_validation.monitor.properties.property_set import CompiledProperty, PropertySet, missing_requirement
from cosim_validation.monitor.properties.sample import Block
from cosim_validation.monitor.properties.verdict import Kpi, Verdict


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
                    text = node.text if isinstance(node, (f.Atom, f.FlagTest)) else ""
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
            start, stop = (0, n) if node.window is None else _window_at_start(self.t_s, node.window)
            if start >= stop:
                return ClauseResult(math.inf, math.inf)
            lo, hi = self.bounds(node.operand)
            first = k.first_at_or_below(hi, start, stop, 0.0)
            res_lo, res_hi = float(lo[start:stop].min()), float(hi[start:stop].min())
            if first < 0:
                return ClauseResult(res_lo, res_hi)
            return ClauseResult(res_lo, res_hi, float(self.t_s[first]), Stage(int(self.env.block.stage[first])))
        lo, hi = self.bounds(node)
        return ClauseResult(float(lo[0]), float(hi[0]), float(self.t_s[-1]), Stage(int(self.env.block.stage[-1])))

    def exact(self, atom: f.Atom, index: np.ndarray) -> np.ndarray:
        """Exact values of ``atom`` at the samples ``index`` (row-wise terms only)."""
        env = self.env
        expected = env.expected.take(index) if env.expected is not None else None
        sub = Env(env.block.take(index), expected, env.context, {}, env.kpis)
        return np.asarray(atom.term.evaluate(sub), dtype=np.float64)

    def bounded(self, node: f.Formula) -> BoundedAlways | None:
        """A bounded evaluation of ``always atom`` if the atom has cheap lower bounds, else None."""
        if not isinstance(node, f.Always) or not isinstance(node.operand, f.Atom):
            return None
        n = self.env.block.n
        start, stop = (0, n) if node.window is None else _window_at_start(self.t_s, node.window)
        if start >= stop:
            return None
        atom = node.operand
        return BoundedAlways(atom, self.env, start, stop, lambda index: self.exact(atom, index))

    def clauses(self, nodes: tuple[f.Formula, ...]) -> list[ClauseResult]:
        """Every clause's result; bounded ``always`` clauses first, in ascending order of their bounds.

        A bounded clause whose smallest bound is positive and not below the smallest exact value of
        another clause cannot change the property's margin nor violate it: its bound stands for it.
        """
        results: dict[int, ClauseResult] = {}
        bounded = []
        for i, node in enumerate(nodes):
            candidate = self.bounded(node)
            lowest = candidate.lower_bound_min() if candidate is not None else None
            if candidate is not None and lowest is not None:
                bounded.append((lowest, i, candidate))
        ceiling = math.inf
        for lowest, i, candidate in sorted(bounded, key=lambda item: item[0]):
            if lowest > 0.0 and lowest >= ceiling:
                results[i] = ClauseResult(lowest, lowest)
                continue
            result = candidate.evaluate()
            if result is not None:
                results[i] = result
                ceiling = min(ceiling, result.hi)
        return [results[i] if i in results else self.clause(node) for i, node in enumerate(nodes)]


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


class _Run:
    """One robot's record with its plan; the plan aligned to it is computed once, when first needed."""

    def __init__(self, record: TrajectoryRecord, expected: TrajectoryRecord | None) -> None:
        self.record, self.expected = record, expected
        self.block = Block.from_record(record)
        self._aligned: Block | None = None

    def aligned(self) -> Block:
        if self._aligned is None:
            assert self.expected is not None
            plan = Block.from_record(self.expected)
            same_times = self.expected.t_s.shape == self.record.t_s.shape and bool(
                np.array_equal(self.expected.t_s, self.record.t_s)
            )
            self._aligned = plan if same_times else plan.take(align_expected(self.record.t_s, self.expected.t_s))
        return self._aligned


def evaluate_property(
    prop: CompiledProperty,
    record: TrajectoryRecord,
    context: MonitorContext,
    expected: TrajectoryRecord | None,
    run: _Run | None = None,
) -> Verdict:
    """The verdict of one compiled property on ``record``.

    Args:
        prop: The compiled property (one that applies to ``record.robot``).
        record: The robot's trajectory.
        context: Joints, needle, obstacles, self-collision model, target, constants (the set's merged in).
        expected: The expected (planned) trajectory of the same case, for properties that compare with it;
            None: not known.
        run: ``record`` with its plan aligned to it, shared by the properties of one run; None: built here.
    """
    unit = prop.compiled.unit
    if record.n_samples == 0:
        return unknown(prop.name, record.robot, unit, "empty trace: no samples")
    has_expected = expected is not None and expected.n_samples > 0
    missing = missing_requirement(prop, context, has_expected, record.has_actual_tip, record.has_stages)
    if missing:
        return unknown(prop.name, record.robot, unit, missing)
    run = _Run(record, expected) if run is None else run
    aligned = run.aligned() if prop.compiled.formula.uses_expected else None
    trace = _Trace(Env(run.block, aligned, context))
    results = trace.clauses(f.clauses(prop.compiled.formula))
    return combine(prop.name, record.robot, unit, results, trace.unknowns)


@dataclass(frozen=True)
class RunResult:
    """Everything the monitor says about one robot's run.

    Attributes:
        verdicts: Property verdicts in the order of the set, then one ``machine:<name>`` verdict per behaviour
            machine (the order of :meth:`OnlineMonitor.finish`).
        kpis: The KPIs.
        machines: The behaviour machines' detailed results (final state, transitions).
    """

    verdicts: tuple[Verdict, ...]
    kpis: tuple[Kpi, ...]
    machines: tuple[MachineResult, ...] = ()


def evaluate_run(
    properties: PropertySet | Sequence[CompiledProperty],
    record: TrajectoryRecord,
    context: MonitorContext,
    expected: TrajectoryRecord | None = None,
    kpis: Sequence[KpiSpec] | None = None,
    machines: Sequence[str] | None = None,
) -> RunResult:
    """Verdicts of the properties and behaviour machines on ``record``, and the KPIs.

    Every property that applies to ``record.robot`` (in the order of the set), every behaviour machine, and the
    KPIs: what :class:`~cosim_validation.monitor.properties.online.OnlineMonitor` gives sample by sample.

    Args:
        properties: A property set (compiled here against ``context``) or already compiled properties.
        record: The robot's trajectory.
        context: Joints, needle, obstacles, self-collision model, target, constants.
        expected: The expected (planned) trajectory of the same case, for properties that compare with it.
        kpis: KPI definitions; default: those of the property set (none for compiled properties).
        machines: Names of shipped behaviour machines, run with the context's target (as online); default: the
            property set's (none for compiled properties).
    """
    if isinstance(properties, PropertySet):
        compiled = properties.compile(context)
        context = properties.with_context(context)
        kpis = properties.kpis if kpis is None else kpis
        machines = properties.machines if machines is None else machines
    else:
        compiled = list(properties)
    applicable = [p for p in compiled if p.applies_to(record.robot)]
    run = _Run(record, expected)
    block = run.block
    plan = Block.from_record(expected) if expected is not None else None
    values = run_kpis(kpis or (), block, record.robot, context, plan)
    by_name = whole_case(values)
    verdicts = []
    for prop in applicable:
        if prop.compiled.case_level and record.n_samples:
            verdicts.append(case_level_verdict(prop, by_name, block, record.robot, context))
        else:
            verdicts.append(evaluate_property(prop, record, context, expected, run))
    results = run_all(machines or (), record, context.target_m)
    verdicts += [m.to_verdict() for m in results]
    return RunResult(tuple(verdicts), tuple(kpis_of(values)), results)


def evaluate(
    properties: PropertySet | Sequence[CompiledProperty],
    record: TrajectoryRecord,
    context: MonitorContext,
    expected: TrajectoryRecord | None = None,
) -> list[Verdict]:
    """The property verdicts of :func:`evaluate_run` (no behaviour machines).

    Args:
        properties: A property set (compiled here against ``context``) or already compiled properties.
        record: The robot's trajectory.
        context: Joints, needle, obstacles, self-collision model, target, constants.
        expected: The expected (planned) trajectory of the same case, for properties that compare with it.
    """
    return list(evaluate_run(properties, record, context, expected, machines=()).verdicts)
