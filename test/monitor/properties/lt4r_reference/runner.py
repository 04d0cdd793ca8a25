"""The Python LT4R reference (a test oracle for the statechart engine): replaying a whole run through a machine,
snapshot by snapshot."""

from __future__ import annotations

import math

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
    """Replays one robot's whole run through one machine, offline.

    The reference reads the run as a list: sample ``k`` is the last one (``eof``) exactly when ``k`` is the list's
    last index. The statechart engine the monitor runs is online instead (a sample is judged when the next one
    arrives); the tests compare the two.

    Args:
        machine: The test (checked here).
        robot: Robot of the samples.
        target_m: (3,) the case's target [m] for events that need it, or None.
    """

    def __init__(self, machine: Machine, robot: RobotRole, target_m: np.ndarray | None = None) -> None:
        machine.check()
        self.machine = machine
        self.robot = RobotRole(robot)
        self.target_m = None if target_m is None else np.asarray(target_m, dtype=np.float64)
        self.vars = Vars(**machine.all_variables())
        self.stack: list[tuple[Machine, str, float]] = []
        self.previous: Sample | None = None
        self.index = 0
        self.transitions: list[tuple[float, str, str]] = []
        self.red: tuple[float, Stage] | None = None

    def run(self, samples: list[Sample]) -> MachineResult:
        """The test's result on the run ``samples`` (in time order).

        Args:
            samples: The robot's samples of the run.

        Raises:
            TraceError: Time goes backwards (before the machine turned red).
        """
        if "target" in self.machine.requires and self.target_m is None:
            return self._missing("target")
        trace = samples
        if "stages" in self.machine.requires:  # leading samples without a stage are not replayed
            first = next((k for k, sample in enumerate(samples) if sample.stage != Stage.NONE), len(samples))
            trace = samples[first:]
            if not trace and samples:
                return self._missing("stages", f"{len(samples)} samples, all of stage none")
        if not trace:
            return self._outcome(Status.UNKNOWN, math.nan, Stage.NONE, "empty trace: no samples")
        last = len(trace) - 1
        for k, sample in enumerate(trace):
            later = trace[min(k + 1, last)]
            if later.t_s < sample.t_s:
                raise TraceError(f"machine {self.machine.name!r}: time goes backwards at t={later.t_s!r} s")
            self._process(sample, is_last=k == last)
            if self.red is not None:
                red_at, red_stage = self.red
                reason = f"entered red ({self.path()})" + (AT_END if k == last else "")
                return self._outcome(Status.VIOLATED, red_at, red_stage, reason)
        if self.stack[0][1] == GREEN:
            return self._outcome(Status.HOLDS, math.nan, Stage.NONE, "ended in green")
        end = trace[last]
        return self._outcome(Status.VIOLATED, end.t_s, end.stage, f"ended in {self.path()!r}{NOT_GREEN}")

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
    """Replay ``record`` through ``machine``."""
    return MachineRunner(machine, record.robot, target_m).run(list(record_samples(record)))
