"""LT4R behaviour tests ([Fabry and Sinclair 2016]) written as YAML machines and run on the statechart core.

A behaviour machine uses guards over the snapshot's signals (:mod:`.snapshot`) instead of events, and
LT4R's conventions: the test passes if the top-level state is ``green`` at the end; it fails at once when a
state named ``red`` is entered. Replay semantics, identical to ``properties.machines.MachineRunner``:

- a sample is processed when the next one arrives (or at :meth:`BehaviourRunner.finish`), so its snapshot
  knows whether it is the last one (``is_last``, LT4R's eof);
- the first sample enters the initial states, then every sample takes one step (rFSM's: at most one
  transition, outer states first, then priority, then file order); the last sample takes up to
  :data:`SETTLE_STEPS` steps while transitions keep firing (eof chains);
- timed transitions (``after_s``) count from the entry of their source, in sample time.

Shipped machines live in config/behaviours/<name>.yaml and load by name or by path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from cosim_validation.common.config import package_root
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.monitor.statechart.guard_columns import GuardColumns
from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.monitor.statechart.model import AT_END, NOT_GREEN, REQUIREMENTS, Machine
from cosim_validation.monitor.statechart.runtime import Statechart, StepResult
from cosim_validation.monitor.statechart.snapshot import (
    SIGNALS,
    SampleLike,
    SnapshotColumns,
    Snapshots,
    record_row,
    record_rows,
)

SETTLE_STEPS = 64
FIRST_STRETCH = 32  # samples whose guards a replay evaluates at once first (then 4x as many, and so on)
GREEN, RED = "green", "red"
SHIPPED_DIR = "config/behaviours"


class BehaviourResult(NamedTuple):
    """Outcome of a behaviour test (the fields of ``properties.machines.MachineResult``).

    Attributes:
        machine: Name of the machine.
        robot: Robot of the replayed run.
        status: ``holds`` (ended in green), ``violated`` (entered red, or ended elsewhere), ``unknown`` (no samples,
            or the run lacks what the machine ``requires``: stages, a target).
        final_state: Active state at every level, outermost first, joined by '/'.
        time_s: When it entered red (or the last sample when it ended outside green); NaN if it passed.
        stage: Stage at that time; NONE if it passed.
        reason: Human explanation.
        transitions: (t_s, from, to) of every transition taken (the first from "": the initial entry).
    """

    machine: str
    robot: RobotRole
    status: str
    final_state: str
    time_s: float
    stage: Stage
    reason: str
    transitions: tuple[tuple[float, str, str], ...]


def load_behaviour(name_or_path: str | Path, overrides: Mapping[str, Any] | None = None) -> Machine:
    """A shipped behaviour machine by name (config/behaviours/<name>.yaml) or a machine file by path.

    Args:
        name_or_path: A shipped machine's name (e.g. ``stage_order``), or the path of a ``.yaml``/``.yml`` file.
        overrides: Values replacing declared parameters by name; None for none.

    Raises:
        InputError: No shipped machine has this name.
        ConfigError: The file is missing or not a valid machine (MachineError names the file and key).
    """
    path = Path(name_or_path)
    if path.suffix not in (".yaml", ".yml"):
        shipped = package_root() / SHIPPED_DIR / f"{name_or_path}.yaml"
        if not shipped.is_file():
            names = sorted(p.stem for p in (package_root() / SHIPPED_DIR).glob("*.yaml"))
            raise InputError(f"unknown behaviour machine {str(name_or_path)!r}; shipped: {', '.join(names)}")
        path = shipped
    return load_machine(path, overrides)


class BehaviourRunner:
    """Runs one behaviour machine over one robot's samples, pushed in order (online and offline alike).

    Args:
        machine: The machine; every signal it declares must be one of :data:`snapshot.SIGNALS`.
        robot: Robot of the samples.
        target_m: (3,) the case's target in base_link [m], or None.
        snapshots: Snapshots shared with other runners on the same samples and target; None: its own.
    """

    def __init__(
        self,
        machine: Machine,
        robot: RobotRole,
        target_m: np.ndarray | None = None,
        snapshots: Snapshots | None = None,
    ) -> None:
        unknown = sorted(set(machine.signals) - set(SIGNALS))
        if unknown:
            raise InputError(
                f"behaviour machine {machine.name!r} ({machine.source}) declares signal "
                f"{unknown[0]!r}; signals: {', '.join(SIGNALS)}"
            )
        self.chart = Statechart(machine)
        self.robot = RobotRole(robot)
        self.target_m = None if target_m is None else np.asarray(target_m, dtype=np.float64)
        self.snapshots = Snapshots(self.target_m) if snapshots is None else snapshots
        if not _same_target(self.snapshots.target_m, self.target_m):
            raise InputError(f"machine {machine.name!r}: its shared snapshots are of another target")
        self.pending: SampleLike | None = None
        self.previous: SampleLike | None = None
        self.index = 0
        self.transitions: list[tuple[float, str, str]] = []
        self.red: tuple[float, Stage] | None = None
        self.result: BehaviourResult | None = None
        self.staged = "stages" not in machine.requires  # a sample with a stage arrived (or none is needed)
        self.unstaged = 0  # leading samples of stage NONE not replayed
        if "target" in machine.requires and self.target_m is None:
            self.result = self._missing("target")

    def push(self, sample: SampleLike) -> BehaviourResult | None:
        """Take one sample; the (failed) result as soon as the machine enters red, else None.

        The sample is held until the next one (or :meth:`finish`) arrives, then processed; samples after a
        result are ignored.

        Args:
            sample: The robot's next sample, not earlier than the previous one.

        Raises:
            InputError: ``sample`` is earlier than the previous sample.
        """
        if self.result is not None:
            return None
        if not self.staged:
            if int(sample.stage) == Stage.NONE:
                self.unstaged += 1
                return None
            self.staged = True
        if self.pending is not None and sample.t_s < self.pending.t_s:
            raise InputError(f"machine {self.chart.machine.name!r}: time goes backwards at t={sample.t_s!r} s")
        if self.pending is not None:
            self._process(self.pending, is_last=False)
        self.pending = sample
        return self.result

    def finish(self) -> BehaviourResult:
        """End of the run: the test's result."""
        if self.result is not None:
            return self.result
        if not self.staged and self.unstaged:
            self.result = self._missing("stages", f"{self.unstaged} samples, all of stage none")
            return self.result
        if self.pending is None:
            self.result = self._outcome("unknown", math.nan, Stage.NONE, "empty trace: no samples")
            return self.result
        last = self.pending
        failed = self._process(last, is_last=True)
        if failed is not None:  # red entered on the last sample, with the end-of-run signal on
            self.result = failed._replace(reason=failed.reason + AT_END)
            return self.result
        if self.chart.active[0] == GREEN:
            self.result = self._outcome("holds", math.nan, Stage.NONE, "ended in green")
        else:
            reason = f"ended in {self.path()!r}{NOT_GREEN}"
            self.result = self._outcome("violated", last.t_s, Stage(int(last.stage)), reason)
        return self.result

    def replay(self, record: TrajectoryRecord, shared: dict[int, SnapshotColumns] | None = None) -> BehaviourResult:
        """The result of pushing every sample of ``record`` (of this runner's robot) and finishing, computed faster.

        Only the samples where a transition may fire are processed, found by evaluating the candidate transitions'
        guards on the following samples at once (:mod:`.guard_columns`): between two transitions the machine's
        state and variables do not change, and a sample where no guard may hold changes nothing. Results, errors
        included, are those of :meth:`push` on every sample (a record's times are finite and never decrease).

        Args:
            record: The robot's trajectory; the runner has had no sample yet.
            shared: The record's signal columns by first sample replayed, shared by the runners replaying it
                (with this runner's target); None: this runner's own.
        """
        n = record.n_samples
        first = 0
        if self.result is None and not self.staged:
            staged = np.flatnonzero(np.asarray(record.stage) != Stage.NONE)
            if staged.size == 0:
                self.unstaged = n
                return self.finish()
            first = int(staged[0])
            self.unstaged, self.staged = first, True
        if self.result is not None or n == 0:
            return self.finish()
        shared = {} if shared is None else shared
        columns = shared.get(first)
        if columns is None:
            columns = shared[first] = SnapshotColumns(record, self.target_m, first)
        last = n - 1
        k = first
        while k < last:
            self._take(record, first, k)
            failed = self._process(record_row(record, k), is_last=False)
            if failed is not None:
                return failed
            k = self._next_firing(columns, k + 1, last)
        self._take(record, first, last)
        self.pending = record_row(record, last)
        return self.finish()

    def _take(self, record: TrajectoryRecord, first: int, k: int) -> None:
        """Before processing sample ``k``: its predecessor and index as if every sample from ``first`` was."""
        self.previous = record_row(record, k - 1) if k > first else None
        self.index = k - first

    def _next_firing(self, columns: SnapshotColumns, start: int, stop: int) -> int:
        """The first sample in [start, stop) where a candidate transition may be enabled; ``stop`` if none."""
        chart = self.chart
        fixed = {**chart.machine.parameters, **chart.variables}
        trs = [tr for tr in chart.candidates() if not tr.events]  # a replay posts no events
        width = FIRST_STRETCH
        while start < stop:
            end = min(stop, start + width)
            guards = GuardColumns(columns.signals(start, end), end - start)
            may = np.zeros(end - start, dtype=bool)
            for tr in trs:
                mask = np.ones(end - start, dtype=bool)
                if tr.after_s is not None:
                    entered = chart.entered_at.get(tr.source)
                    if entered is not None:
                        mask = ~(columns.t_s[start:end] - entered < tr.after_s)
                if tr.guard is not None and mask.any():
                    mask &= guards.may_hold(tr.guard, fixed)
                may |= mask
            if may.any():
                return start + int(np.argmax(may))
            start, width = end, width * 4
        return stop

    def _process(self, sample: SampleLike, is_last: bool) -> BehaviourResult | None:
        """Take ``sample`` (one step, or the settling steps of the last one); the result once red was entered."""
        env = self.snapshots.of(sample, self.previous, self.index, is_last)
        self.previous = sample
        self.index += 1
        stage = Stage(int(sample.stage))
        if not self.chart.started:
            self._record(self.chart.start(sample.t_s, env), stage)
        for _ in range(SETTLE_STEPS if is_last else 1):
            if self.red is not None:
                break
            result = self.chart.step(sample.t_s, env)
            if result.transition is None:
                break
            self._record(result, stage)
        if self.red is not None and self.result is None:
            self.result = self._outcome("violated", self.red[0], self.red[1], f"entered red ({self.path()})")
        return self.result

    def _record(self, result: StepResult, stage: Stage) -> None:
        machine = self.chart.machine
        before = "/".join(machine.states[s].name for s in machine.lineage(result.before)) if result.before else ""
        self.transitions.append((result.t_s, before, self.path()))
        if self.red is None and any(machine.states[s].name == RED for s in result.entered):
            self.red = (result.t_s, stage)

    def path(self) -> str:
        """The active state at every level, outermost first, joined by '/'."""
        return "/".join(self.chart.machine.states[s].name for s in self.chart.active)

    def _missing(self, requirement: str, detail: str = "") -> BehaviourResult:
        """``unknown``: the run lacks a requirement of the machine (``requires:`` in its file)."""
        reason = f"needs {REQUIREMENTS[requirement]}" + (f"; {detail}" if detail else "")
        return self._outcome("unknown", math.nan, Stage.NONE, reason)

    def _outcome(self, status: str, time_s: float, stage: Stage, reason: str) -> BehaviourResult:
        return BehaviourResult(
            self.chart.machine.name, self.robot, status, self.path(), time_s, stage, reason, tuple(self.transitions)
        )


def run_behaviour(machine: Machine, record: TrajectoryRecord, target_m: np.ndarray | None = None) -> BehaviourResult:
    """Replay ``record`` through ``machine`` (offline; the same code as online).

    Args:
        machine: The behaviour machine.
        record: The robot's trajectory.
        target_m: The case's target in base_link, shape (3,), in [m]; None: no target.
    """
    return run_behaviours((machine,), record, target_m)[0]


def run_behaviours(
    machines: Sequence[Machine], record: TrajectoryRecord, target_m: np.ndarray | None = None
) -> tuple[BehaviourResult, ...]:
    """Replay ``record`` through every machine at once, each sample's snapshot computed once for all.

    Each result is the one :func:`run_behaviour` gives for that machine alone.

    Args:
        machines: The behaviour machines, in the order of the results.
        record: The robot's trajectory.
        target_m: The case's target in base_link, shape (3,), in [m]; None: no target.
    """
    target = None if target_m is None else np.asarray(target_m, dtype=np.float64)
    snapshots = Snapshots(target)
    columns: dict[int, SnapshotColumns] = {}  # by the first sample replayed
    try:
        return tuple(
            BehaviourRunner(machine, record.robot, target, snapshots).replay(record, columns) for machine in machines
        )
    except Exception:  # noqa: BLE001 - a machine failed: stepped together, the error met first in sample order
        return step_every_sample(machines, record, target)


def step_every_sample(
    machines: Sequence[Machine], record: TrajectoryRecord, target: np.ndarray | None
) -> tuple[BehaviourResult, ...]:
    """:func:`run_behaviours` by pushing every sample into every machine in turn (the replay's reference).

    What a live monitor does; the replay gives the same results and, failing, the same first error.

    Args:
        machines: The behaviour machines, in the order of the results.
        record: The robot's trajectory.
        target: The case's target in base_link, shape (3,), in [m]; None: no target.
    """
    snapshots = Snapshots(target)
    runners = [BehaviourRunner(machine, record.robot, target, snapshots) for machine in machines]
    running = [runner for runner in runners if runner.result is None]
    for sample in record_rows(record):
        if not running:
            break
        for runner in running:
            runner.push(sample)
        running = [runner for runner in running if runner.result is None]
    return tuple(runner.finish() for runner in runners)


def _same_target(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and bool(np.array_equal(a, b)))
