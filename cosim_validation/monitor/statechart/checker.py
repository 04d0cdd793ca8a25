"""Model checking a machine against its goals: translate, run SPIN, replay every counterexample at run time."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cosim_validation.common.exceptions import InputError
from cosim_validation.monitor.statechart.counterexample import Trace
from cosim_validation.monitor.statechart.errors import MachineError
from cosim_validation.monitor.statechart.goals import Goal, GoalSet, observed
from cosim_validation.monitor.statechart.ltl import Atom
from cosim_validation.monitor.statechart.ltl_eval import violates
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.monitor.statechart.promela import raw_atoms, to_promela
from cosim_validation.monitor.statechart.replay import Replay, replay_trace
from cosim_validation.monitor.statechart.shorten import shorten
from cosim_validation.monitor.statechart.smv import to_smv
from cosim_validation.monitor.statechart.spin import (
    GoalResult,
    SpinSyntaxError,
    compile_model,
    spin_syntax,
    verify_goal,
)
from cosim_validation.monitor.statechart.step_table import StepTable, build_step_table


@dataclass(frozen=True)
class Violation:
    """A violated goal's counterexample, checked on the runtime machine.

    Attributes:
        spin: SPIN's counterexample, as parsed from its replay of the trail.
        replay: The runtime's run of it (``replay.reproduced``: state for state, transition for transition).
        confirmed: Whether the runtime's run violates the goal by :mod:`.ltl_eval` (independent of SPIN);
            None for a goal in SPIN's syntax, or a lasso whose cycle does not close at run time.
        shortest: A shortened counterexample that still violates the goal on the runtime (None if
            ``confirmed`` is not True), with the runtime's states.
    """

    spin: Trace
    replay: Replay
    confirmed: bool | None
    shortest: Trace | None

    @property
    def shown(self) -> Trace:
        """The counterexample to show: the shortened one when there is one, else SPIN's."""
        return self.shortest or self.spin


@dataclass(frozen=True)
class CheckReport:
    """The outcome of :func:`check_goals`.

    Attributes:
        machine: The checked machine.
        goals: Its goals.
        results: SPIN's verdict per checked goal, in file order.
        violations: Counterexample analysis per violated goal.
        files: What was written: ``promela``, ``smv``, and per violated goal ``spin:<goal>`` (SPIN's
            counterexample) and ``trace:<goal>`` (the shown one), both trace files for replay.
        compile_s: Translating and compiling the verifier [s].
        total_s: Everything, compilation, every search and the counterexample analysis [s].
    """

    machine: Machine
    goals: GoalSet
    results: tuple[GoalResult, ...]
    violations: dict[str, Violation]
    files: dict[str, Path]
    compile_s: float
    total_s: float

    @property
    def all_hold(self) -> bool:
        """Whether every checked goal holds."""
        return all(r.holds for r in self.results)


def check_goals(
    machine: Machine,
    goals: GoalSet,
    out_dir: Path,
    only: Sequence[str] = (),
    *,
    reduce: bool = True,
    timeout_s: float = 600.0,
) -> CheckReport:
    """Check ``machine`` against ``goals`` (or the goals named in ``only``) with SPIN in ``out_dir``.

    ``reduce=False`` uses the plain encoding (every event free in every step; see :mod:`.step_table`);
    ``timeout_s`` bounds each goal's search [s].

    Args:
        machine: The machine to check.
        goals: Its LTL goals (from :func:`~cosim_validation.monitor.statechart.goals.load_goals`).
        out_dir: Folder for the Promela and SMV models, the compiled verifier and the counterexample traces;
            created if missing.
        only: Names of the goals to check; () checks every goal.
        reduce: Whether to group the events the goals do not name and choose them only in leaves where they can
            fire (same verdicts, smaller search); False: the plain encoding.
        timeout_s: Time limit of each goal's search [s].

    Raises:
        InputError: ``only`` names a goal the file does not have.
        MachineError: The machine cannot be translated or SPIN rejects a goal.
        ModelCheckError: SPIN or the compiler is missing or fails.
    """
    unknown = [name for name in only if name not in goals.names()]
    if unknown:
        raise InputError(f"unknown goal {unknown[0]!r}; goals in {goals.source}: {', '.join(goals.names())}")
    start = time.perf_counter()
    atoms = observed(goals) | raw_atoms(goals)
    table = build_step_table(machine, atoms, reduce=reduce)
    model = to_promela(table, goals, atoms)
    out_dir.mkdir(parents=True, exist_ok=True)
    smv_path = out_dir / f"{machine.name}.smv"
    smv_path.write_text(to_smv(table, goals, atoms), encoding="utf-8")
    try:
        pan = compile_model(model, out_dir)
    except SpinSyntaxError:
        _blame_goal(table, goals, atoms, out_dir)
        raise
    files = {"promela": out_dir / "model.pml", "smv": smv_path}
    compile_s = time.perf_counter() - start
    checked = [g for g in goals.goals if not only or g.name in only]
    results = tuple(verify_goal(pan, model, goal.name, timeout_s) for goal in checked)
    violations = {}
    for goal, result in zip(checked, results, strict=True):
        if result.trace is not None:
            violation = violations[goal.name] = _analyse(machine, goal, result.trace)
            files[f"spin:{goal.name}"] = violation.spin.write(out_dir / f"{goal.name}.spin.yaml")
            files[f"trace:{goal.name}"] = violation.shown.write(out_dir / f"{goal.name}.trace.yaml")
    return CheckReport(machine, goals, results, violations, files, compile_s, time.perf_counter() - start)


def _analyse(machine: Machine, goal: Goal, trace: Trace) -> Violation:
    replay = replay_trace(machine, trace)
    if goal.formula is None:
        return Violation(trace, replay, None, None)
    confirmed = violates(machine, goal.formula, trace)
    shortest = shorten(machine, goal.formula, trace) if confirmed else None
    return Violation(trace, replay, confirmed, shortest)


def _blame_goal(table: StepTable, goals: GoalSet, atoms: set[Atom], out_dir: Path) -> None:
    """Raise :class:`MachineError` for the first goal SPIN cannot parse on its own (models with one goal each)."""
    for goal in goals.goals:
        single = to_promela(table, GoalSet(goals.source, (goal,)), atoms)
        complaint = spin_syntax(single.text, out_dir)
        if complaint:
            which = "promela" if goal.promela else "ltl"
            raise MachineError(goals.source, f"{goal.key}.{which}", f"SPIN cannot parse the formula: {complaint}")
