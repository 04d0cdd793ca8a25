"""The online monitor: samples pushed one at a time, verdict changes returned at once.

One :class:`OnlineMonitor` checks one robot (virtual, physical or the expected plan itself). It
accepts that robot's samples and, for properties comparing with the plan, the EXPECTED samples,
in any interleaving: each robot sample waits until its expected partner is known (alignment.py).
Memory is bounded for bounded formulas and ``always``/``eventually``/``until`` at the top; the
work per sample is O(1) amortized for them (O(window) for ``until[a, b]``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from cosim_validation.common.record import RobotRole
from cosim_validation.monitor.properties.context import MonitorContext
from cosim_validation.monitor.properties.errors import TraceError
from cosim_validation.monitor.properties.kpis.case_level import case_level_verdict, kpis_of, run_kpis, whole_case
from cosim_validation.monitor.properties.kpis.specs import KpiSpec, KpiValue
from cosim_validation.monitor.properties.language import formula as f
from cosim_validation.monitor.properties.language.robustness import Unknowns, combine, leaf_bounds, unknown
from cosim_validation.monitor.properties.language.terms import Env
from cosim_validation.monitor.properties.machines.machine_set import MachineSet
from cosim_validation.monitor.properties.online.clause_monitor import ClauseMonitor
from cosim_validation.monitor.properties.online.expected_stream import ExpectedStream
from cosim_validation.monitor.properties.online.operators import Leaf
from cosim_validation.monitor.properties.property_set import CompiledProperty, PropertySet, missing_requirement
from cosim_validation.monitor.properties.sample import Block, Sample
from cosim_validation.monitor.properties.verdict import Kpi, Status, Verdict

#: Deferred exact values (positive bounds below the running minimum) are computed in batches of this size:
#: one vectorised query for many samples (the needle's segment search costs the same for 1 or 64 segments).
DEFER_BATCH = 64


class _PropertyMonitor:
    """The clause monitors of one property and the leaves its atoms feed."""

    def __init__(self, prop: CompiledProperty) -> None:
        self.prop = prop
        self.leaves: list[Leaf] = []
        self.atoms: list[f.Formula] = []
        self.clauses = []
        self.bounded: list[ClauseMonitor | None] = []  # per atom: the `always atom` clause it alone feeds
        for clause in f.clauses(prop.compiled.formula):
            monitor = ClauseMonitor(clause, self.leaves)
            self.clauses.append(monitor)
            self.atoms.extend(f.atoms(clause))
            alone = isinstance(clause, f.Always) and isinstance(clause.operand, f.Atom) and clause.operand.term.rowwise
            self.bounded.extend([monitor] if alone else [None] * len(f.atoms(clause)))
        self.unknowns = Unknowns()
        self.reported = False
        self.uses_expected = prop.compiled.formula.uses_expected
        self.deferred: dict[int, list[Env]] = {}  # atom index -> samples whose exact value is computed later

    def feed(self, env: Env) -> None:
        t, stage = float(env.block.t_s[0]), int(env.block.stage[0])
        for i, (atom, leaf, clause) in enumerate(zip(self.atoms, self.leaves, self.bounded, strict=True)):
            if clause is not None and isinstance(atom, f.Atom):
                bound = atom.term.lower_bound(env)
                if bound is not None and bound[0] > 0.0:
                    if bound[0] >= clause.hi:  # cannot lower the clause's minimum so far nor violate: skip it
                        leaf.buf.append((t, stage, float(bound[0]), float(bound[0])))
                        continue
                    if clause.window is None:  # not a violation: its exact value may come later, in a batch
                        leaf.buf.append((t, stage, math.inf, math.inf))
                        self._defer(i, atom, clause, env)
                        continue
            (lo, hi), nan = leaf_bounds(atom, env)
            if nan[0] and math.isnan(self.unknowns.time_s):
                self.unknowns = Unknowns(t, atom.text if isinstance(atom, (f.Atom, f.FlagTest)) else "")
            leaf.buf.append((t, stage, float(lo[0]), float(hi[0])))
        for clause in self.clauses:
            clause.update(final=False)

    def _defer(self, i: int, atom: f.Atom, clause: ClauseMonitor, env: Env) -> None:
        pending = self.deferred.setdefault(i, [])
        pending.append(env)
        if len(pending) >= DEFER_BATCH:
            self._flush(i, atom, clause)

    def _flush(self, i: int, atom: f.Atom, clause: ClauseMonitor) -> None:
        """Exact values of the deferred samples of atom ``i``, in one batch, into its clause's minimum."""
        pending = self.deferred.pop(i, [])
        if not pending:
            return
        first = pending[0]
        n_joints, needle = first.context.n_joints, first.context.needle_length_m
        block = Block.concat([e.block for e in pending], n_joints, needle)
        plans = [e.expected for e in pending]
        expected = Block.concat([p for p in plans if p is not None], n_joints, needle) if plans[0] else None
        values = np.asarray(atom.term.evaluate(Env(block, expected, first.context)), dtype=np.float64)
        for k in np.flatnonzero(np.isnan(values)):
            if math.isnan(self.unknowns.time_s) or block.t_s[k] < self.unknowns.time_s:
                self.unknowns = Unknowns(float(block.t_s[k]), atom.text)
        known = values[~np.isnan(values)]
        clause.absorb(float(known.min()) if known.size else math.inf, bool(known.size < values.size))

    def flush_all(self) -> None:
        """Compute every deferred exact value (before a final verdict)."""
        for i in list(self.deferred):
            atom, clause = self.atoms[i], self.bounded[i]
            assert isinstance(atom, f.Atom)
            assert clause is not None
            self._flush(i, atom, clause)

    def verdict(self, robot: RobotRole, final: bool) -> Verdict:
        if final:
            self.flush_all()
            for clause in self.clauses:
                clause.update(final=True)
        # while running, only the always clauses that saw a violation are known (margin: an upper bound so far)
        results = [c.result() for c in self.clauses if final or c.violation is not None]
        return combine(self.prop.name, robot, self.prop.compiled.unit, results, self.unknowns, final)

    def violated_early(self) -> bool:
        """Whether an ``always`` clause has seen a violation (known before the end)."""
        return any(c.violation is not None for c in self.clauses)


class OnlineMonitor:
    """Checks one robot's run sample by sample.

    Args:
        properties: A property set (compiled here) or compiled properties.
        context: Joints, needle, obstacles, self-collision model, target, constants.
        robot: The robot checked; samples of other robots than this one and EXPECTED are refused.
        kpis: KPI definitions (default: the property set's).
        machines: Names of shipped behaviour machines to run on the robot's samples (default: the set's);
            their verdicts (``machine:<name>``, target from the context) follow the properties'.

    Example::

        monitor = OnlineMonitor(PropertySet.load("config/properties.yaml"), context, RobotRole.VIRTUAL)
        for sample in samples:               # robot and EXPECTED samples, any interleaving
            for change in monitor.push(sample):
                alert(change)                # e.g. the first violation, at once
        verdicts = monitor.finish()
    """

    def __init__(
        self,
        properties: PropertySet | Sequence[CompiledProperty],
        context: MonitorContext,
        robot: RobotRole,
        kpis: Sequence[KpiSpec] | None = None,
        machines: Sequence[str] | None = None,
    ) -> None:
        if isinstance(properties, PropertySet):
            compiled = properties.compile(context)
            context = properties.with_context(context)
            kpis = properties.kpis if kpis is None else kpis
            machines = properties.machines if machines is None else machines
        else:
            compiled = list(properties)
        self.machines = MachineSet(machines or (), RobotRole(robot), context.target_m)
        self.context = context
        self.robot = RobotRole(robot)
        self.applicable = [p for p in compiled if p.applies_to(self.robot)]
        # properties whose context requirements are missing are not fed (UNKNOWN at the end)
        self.monitors = [
            _PropertyMonitor(p)
            for p in self.applicable
            if not p.compiled.case_level and not missing_requirement(p, context, True, True)
        ]
        self.kpi_specs = tuple(kpis or ())
        # KPIs and properties over KPIs need the whole run: O(n) memory, only when there are any
        self.keep_history = bool(self.kpi_specs) or any(p.compiled.case_level for p in self.applicable)
        self.history: list[Block] = []
        self.plan_history: list[Block] = []
        self.kpi_values: list[KpiValue] = []
        self.needs_expected = any(m.prop.compiled.formula.uses_expected for m in self.monitors)
        self.stream = ExpectedStream()
        self.term_state: dict[int, object] = {}
        self.last_t = {RobotRole.EXPECTED: -math.inf, self.robot: -math.inf}
        self.n_samples = 0
        self.has_actual_tip = False
        self.finished: list[Verdict] | None = None

    def push(self, sample: Sample) -> list[Verdict]:
        """Take one sample; return the verdicts that changed (non-final), e.g. a first violation.

        Args:
            sample: A sample of this monitor's robot or of the EXPECTED robot; each robot's samples in time order.

        Raises:
            TraceError: Wrong robot, wrong shapes, time not finite or going backwards, or after finish().
        """
        if self.finished is not None:
            raise TraceError("push() after finish(): start a new monitor for a new run")
        robot = RobotRole(sample.robot)
        if robot not in self.last_t:
            raise TraceError(f"monitor of the {self.robot.label} robot got a {robot.label} sample")
        block = Block.from_sample(sample, self.context.needle_length_m, self.context.n_joints)
        if sample.t_s < self.last_t[robot]:
            raise TraceError(
                f"{robot.label} sample: time goes backwards ({sample.t_s!r} s after {self.last_t[robot]!r} s)"
            )
        self.last_t[robot] = sample.t_s
        if robot is RobotRole.EXPECTED and robot is not self.robot:
            if self.keep_history:
                self.plan_history.append(block)
            if self.needs_expected:
                self.stream.add_expected(block)
                return self._drain()
            return []
        machine_changes = self.machines.push(sample)
        if self.needs_expected:
            self.stream.add_robot(block)
            return self._drain() + machine_changes
        return self._process(block, None) + machine_changes

    def end_expected(self) -> list[Verdict]:
        """Say that the expected trajectory is complete (robot samples after its end pair with its last one)."""
        self.stream.end()
        return self._drain()

    def _drain(self) -> list[Verdict]:
        changes: list[Verdict] = []
        for block, partner in self.stream.ready():
            changes += self._process(block, partner)
        return changes

    def _process(self, block: Block, partner: Block | None) -> list[Verdict]:
        self.n_samples += 1
        if self.keep_history:
            self.history.append(block)
        self.has_actual_tip = self.has_actual_tip or bool(np.isfinite(block.actual_tip_pos_m).any())
        changes = []
        env = Env(block, partner, self.context, self.term_state)  # shared: each signal is read once per sample
        for monitor in self.monitors:
            if monitor.uses_expected and partner is None:
                continue  # no expected samples at all: UNKNOWN at finish
            monitor.feed(env)
            if not monitor.reported and monitor.violated_early():
                monitor.reported = True
                changes.append(monitor.verdict(self.robot, final=False))
        return changes

    def verdicts(self) -> list[Verdict]:
        """The current verdicts (non-final while running; VIOLATED as soon as a violation is known)."""
        if self.finished is not None:
            return list(self.finished)
        out = []
        for m in self.monitors:
            if m.violated_early():
                out.append(m.verdict(self.robot, final=False))
            else:
                out.append(unknown(m.prop.name, self.robot, m.prop.compiled.unit, "pending", final=False))
        return out

    def finish(self) -> list[Verdict]:
        """End of the run: the final verdicts of every property (same as offline on the same samples)."""
        if self.finished is not None:
            return list(self.finished)
        self.stream.end()
        self._drain()
        self.kpi_values = self._kpis()
        by_name = whole_case(self.kpi_values)
        monitors = {id(m.prop.spec): m for m in self.monitors}
        out = []
        for prop in self.applicable:
            unit = prop.compiled.unit
            if self.n_samples == 0:
                out.append(unknown(prop.name, self.robot, unit, "empty trace: no samples"))
            elif prop.compiled.case_level:
                run = self._run_block()
                out.append(case_level_verdict(prop, by_name, run, self.robot, self.context))
            elif missing := missing_requirement(prop, self.context, self.stream.seen_any, self.has_actual_tip):
                out.append(unknown(prop.name, self.robot, unit, missing))
            else:
                out.append(monitors[id(prop.spec)].verdict(self.robot, True))
        out += self.machines.finish()
        self.finished = out
        return list(out)

    def _run_block(self) -> Block:
        return Block.concat(self.history, self.context.n_joints, self.context.needle_length_m)

    def _kpis(self) -> list[KpiValue]:
        if not self.kpi_specs:
            return []
        plan = None
        if self.plan_history:
            plan = Block.concat(self.plan_history, self.context.n_joints, self.context.needle_length_m)
        return run_kpis(self.kpi_specs, self._run_block(), self.robot, self.context, plan)

    def kpis(self) -> list[Kpi]:
        """The KPIs of the run (after :meth:`finish`; empty before)."""
        return kpis_of(self.kpi_values)


def replay(
    properties: PropertySet | Sequence[CompiledProperty],
    samples: Sequence[Sample],
    context: MonitorContext,
    robot: RobotRole,
) -> tuple[list[Verdict], list[Verdict]]:
    """Push ``samples`` in order into a new monitor; return (every change on the way, final verdicts).

    Args:
        properties: A property set (compiled here) or compiled properties.
        samples: The robot's samples and, for properties that compare with the plan, the EXPECTED samples.
        context: Joints, needle, obstacles, self-collision model, target, constants.
        robot: The robot checked.
    """
    monitor = OnlineMonitor(properties, context, robot)
    changes = [v for s in samples for v in monitor.push(s)]
    return changes, monitor.finish()


__all__ = ["OnlineMonitor", "Status", "replay"]
