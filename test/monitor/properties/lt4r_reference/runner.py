"""The Python LT4R reference (a test oracle for the statechart engine): replaying a run through a machine,
snapshot by snapshot (online: push samples; offline: a whole record)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.monitor.properties.errors import PropertyError, TraceError
from cosim_validation.monitor.properties.language.signals import z_axis_one
from cosim_validation.monitor.properties.machines.result import MachineResult
from cosim_validation.monitor.properties.sample import Sample, record_samples
from cosim_validation.monitor.properties.verdict import Status
from cosim_validation.monitor.statechart.model import AT_END, NOT_GREEN, REQUIREMENTS
from test.monitor.properties.lt4r_reference.machine import (
    ANY,
    EOF,
    GREEN,
    RED,
    Machine,
    Snapshot,
    Transition,
    Vars,
)

SETTLE_STEPS = 64  # at most this many transitions on the last snapshot (eof chains)


class MachineRunner:
    """Runs one machine over one robot's samples, pushed in order.

    A sample is processed when the next one arrives (or at :meth:`finish`), so that the snapshot knows
    whether it is the last one (``eof``); online and offline replays are therefore identical.

    Args:
        machine: The test (checked here).
        robot: Robot of the samples.
        target_m: (3,) the case's target [m] for events that need it, or None.
        needle_length_m: Unused by the snapshot itself; kept for symmetry with the monitor.
    """

    def __init__(self, machine: Machine, robot: RobotRole, target_m: np.ndarray | None = None) -> None:
        machine.check()
        self.machine = machine
        self.robot = RobotRole(robot)
        self.target_m = None if target_m is None else np.asarray(target_m, dtype=np.float64)
        self.vars = Vars(**machine.all_variables())
        self.stack: list[tuple[Machine, str, float]] = []
        self.pending: Sample | None = None
        self.previous: Sample | None = None
        self.index = 0
        self.transitions: list[tuple[float, str, str]] = []
        self.red: tuple[float, Stage] | None = None
        self.result: MachineResult | None = None
        self.staged = "stages" not in machine.requires  # a sample with a stage arrived (or none is needed)
        self.unstaged = 0  # leading samples of stage NONE not replayed
        if "target" in machine.requires and self.target_m is None:
            self.result = self._missing("target")

    # ------------------------------------------------------------------ feeding
    def push(self, sample: Sample) -> MachineResult | None:
        """Take one sample; return the (failed) result as soon as the machine enters red, else None."""
        if self.result is not None:
            return None
        if not self.staged:
            if sample.stage == Stage.NONE:
                self.unstaged += 1
                return None
            self.staged = True
        if self.pending is not None and sample.t_s < self.pending.t_s:
            raise TraceError(f"machine {self.machine.name!r}: time goes backwards at t={sample.t_s!r} s")
        if self.pending is not None:
            self._process(self.pending, is_last=False)
        self.pending = sample
        return self.result

    def finish(self) -> MachineResult:
        """End of the run: the test's result."""
        if self.result is not None:
            return self.result
        if not self.staged and self.unstaged:
            self.result = self._missing("stages", f"{self.unstaged} samples, all of stage none")
            return self.result
        if self.pending is None:
            self.result = self._outcome(Status.UNKNOWN, math.nan, Stage.NONE, "empty trace: no samples")
            return self.result
        last = self.pending
        self._process(last, is_last=True)
        if self.red is not None:  # entered on the last sample, with the end-of-run signal on
            red = self._red_result()
            self.result = replace(red, reason=red.reason + AT_END)
            return self.result
        state = self.stack[0][1]
        if state == GREEN:
            self.result = self._outcome(Status.HOLDS, math.nan, Stage.NONE, "ended in green")
        else:
            self.result = self._outcome(Status.VIOLATED, last.t_s, last.stage, f"ended in {self.path()!r}{NOT_GREEN}")
        return self.result

    # ------------------------------------------------------------------ stepping
    def _snapshot(self, sample: Sample, is_last: bool) -> Snapshot:
        tip = np.asarray(sample.tip_pos_m, dtype=np.float64)
        velocity = np.zeros(3)
        if self.previous is not None and sample.t_s > self.previous.t_s:
            velocity = (tip - self.previous.tip_pos_m) / (sample.t_s - self.previous.t_s)
        axis = z_axis_one(sample.tip_quat_wxyz)
        return Snapshot(
            sample.t_s,
            Stage(sample.stage),
            tip,
            axis,
            velocity,
            np.asarray(sample.q_measured),
            np.asarray(sample.actual_tip_pos_m),
            self.target_m,
            self.index,
            is_last,
        )

    def _process(self, sample: Sample, is_last: bool) -> None:
        snap = self._snapshot(sample, is_last)
        self.previous = sample
        self.index += 1
        if not self.stack:
            self._enter(0, self.machine, self.machine.start, snap)
        steps = SETTLE_STEPS if is_last else 1
        for _ in range(steps):
            if self.red is not None or not self._step(0, snap):
                break
        if self.red is not None:
            self._red_result()

    def _red_result(self) -> MachineResult:
        if self.result is None:
            assert self.red is not None
            self.result = self._outcome(Status.VIOLATED, self.red[0], self.red[1], f"entered red ({self.path()})")
        return self.result

    def _step(self, level: int, snap: Snapshot) -> bool:
        machine, state, entered = self.stack[level]
        for tr in machine.transitions:
            if tr.kind != "exit" and tr.source in (state, ANY) and self._fires(machine, tr, snap, entered):
                self._enter(level, machine, tr.target, snap)
                return True
        if level + 1 < len(self.stack):
            inner, inner_state, inner_entered = self.stack[level + 1]
            for tr in inner.transitions:
                if (
                    tr.kind == "exit"
                    and tr.source in (inner_state, ANY)
                    and self._fires(inner, tr, snap, inner_entered)
                ):
                    self._enter(level, machine, tr.target, snap)
                    return True
            return self._step(level + 1, snap)
        return False

    def _fires(self, machine: Machine, tr: Transition, snap: Snapshot, entered: float) -> bool:
        if tr.kind == "eps":
            return True
        if tr.kind == "after":
            return snap.t_s - entered >= tr.seconds
        if tr.event == EOF:
            return snap.is_last
        try:
            return bool(machine.events[tr.event](snap, self.vars))
        except (ArithmeticError, AttributeError, TypeError, ValueError, IndexError, KeyError) as exc:
            raise PropertyError(machine.name, f"event {tr.event!r} failed at t={snap.t_s!r} s: {exc!r}") from None

    def _enter(self, level: int, machine: Machine, state_name: str, snap: Snapshot, before: str | None = None) -> None:
        before = self.path() if before is None else before
        del self.stack[level:]
        self.stack.append((machine, state_name, snap.t_s))
        state = machine.states[state_name]
        if state.on_entry is not None:
            state.on_entry(snap, self.vars)
        if state_name == RED and self.red is None:
            self.red = (snap.t_s, snap.stage)
        if state.machine is not None:
            self._enter(level + 1, state.machine, state.machine.start, snap, before)
            return
        self.transitions.append((snap.t_s, before, self.path()))

    def path(self) -> str:
        """The active state at every level, outermost first, joined by '/'."""
        return "/".join(state for _, state, _ in self.stack)

    def _missing(self, requirement: str, detail: str = "") -> MachineResult:
        """UNKNOWN: the run lacks a requirement of the machine (issue 15: such runs were called violated)."""
        reason = f"needs {REQUIREMENTS[requirement]}" + (f"; {detail}" if detail else "")
        return self._outcome(Status.UNKNOWN, math.nan, Stage.NONE, reason)

    def _outcome(self, status: Status, time_s: float, stage: Stage, reason: str) -> MachineResult:
        return MachineResult(
            self.machine.name, self.robot, status, self.path(), time_s, stage, reason, tuple(self.transitions)
        )


def run_machine(machine: Machine, record: TrajectoryRecord, target_m: np.ndarray | None = None) -> MachineResult:
    """Replay ``record`` through ``machine`` (offline; the same code as online)."""
    runner = MachineRunner(machine, record.robot, target_m)
    for sample in record_samples(record):
        if runner.push(sample) is not None:
            break
    return runner.finish()
