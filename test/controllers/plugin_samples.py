"""Controller plugins of the tests, loaded by import path ``test.controllers.plugin_samples:<factory>``.

- ``make_planning``: the straight insertion written as a user's planning plugin;
- ``make_replay``: a closed-loop plugin that declares the straight plan as its reference and commands it
  setpoint by setpoint (so it must give exactly what ``straight`` gives);
- ``make_follower``: the same, but it moves on only once the robots answered its last setpoint (for the task
  supervisor, which may hold it back);
- ``make_faulty``: a closed-loop plugin that replays the straight plan but misbehaves in the cases its options
  say (by the order of its ``start`` calls), for the run-time guards;
- factories that fail in every way a factory can (raising, returning an object without a contract).
"""

from __future__ import annotations

import math
import os
import signal
import sys
import threading
import time
from dataclasses import replace
from typing import Any

import numpy as np

from cosim_validation.common.record import Stage
from cosim_validation.controllers import (
    CaseStart,
    Command,
    CommandKind,
    ControllerContext,
    Observation,
    StraightController,
)
from cosim_validation.controllers.planning import Plan
from cosim_validation.controllers.planning.errors import PlanningError

NOT_CALLABLE = 42  # an attribute that is not a factory


def make_planning(options: dict[str, Any], context: ControllerContext) -> StraightController:
    """The built-in straight controller under the plugin's name."""
    controller = StraightController(context.planner)
    controller.name = context.name
    return controller


class Replay:
    """Commands the straight plan one setpoint per period, then says done."""

    def __init__(self, context: ControllerContext, declare: bool = True) -> None:
        self.name = context.name
        self.straight = StraightController(context.planner)
        self.declare = declare
        self.plan: Plan | None = None
        self.started: list[str] = []
        self.forces: list[float] = []  # the needle force of every observation of the last case [N]

    def reference(self, case: CaseStart) -> Plan | None:
        self.plan = self.straight.plan_case(case.source_m, case.target_m)
        return self.plan if self.declare else None

    def start(self, case: CaseStart) -> None:
        self.started.append(case.test_id)
        self.forces = []

    def step(self, observation: Observation) -> Command:
        assert self.plan is not None
        self.forces.append(observation.needle_force_n)
        p = round(observation.t_s / float(self.plan.t_s[1]))
        if p >= self.plan.n_samples:
            return Command.done("completed", "plan replayed")
        return Command.setpoint(self.plan.q[p], Stage(int(self.plan.stage[p])))


def make_replay(options: dict[str, Any], context: ControllerContext) -> Replay:
    """Options: ``declare`` (default true): whether the straight plan is declared as the reference."""
    return Replay(context, bool(options.get("declare", True)))


class Follower(Replay):
    """Commands the straight plan one setpoint per period, moving on only once its last setpoint was the one the
    robots answered (a supervisor may have held it back); keeps the supervisor modes it was told."""

    def start(self, case: CaseStart) -> None:
        super().start(case)
        self.index = 0
        self.modes: list[str | None] = []
        self.finished: tuple[str, str] | None = None

    def step(self, observation: Observation) -> Command:
        assert self.plan is not None
        self.modes.append(observation.supervisor_mode)
        if np.array_equal(observation.q_setpoint, self.plan.q[self.index]):
            self.index += 1
        if self.index >= self.plan.n_samples:
            return Command.done("completed", "plan followed")
        return Command.setpoint(self.plan.q[self.index], Stage(int(self.plan.stage[self.index])))

    def finish(self, outcome: str, reason: str) -> None:
        self.finished = (outcome, reason)


def make_follower(options: dict[str, Any], context: ControllerContext) -> Follower:
    """The hold-aware replay of the straight plan (declared as its reference)."""
    return Follower(context)


class Faulty(Replay):
    """Replays the straight plan; case i (order of ``start``) misbehaves as ``faults[i]`` after ``after_s``.

    Faults: ``raise``, ``nan``, ``length``, ``limits``, ``slow`` (sleeps 1.5 s, past the step budget), ``never`` (holds
    forever: the time limit ends the case), ``bad_command`` (returns a string), ``stage_text``, ``stage_42`` (a setpoint
    of a stage that is not one), ``reason_dict`` (done with a reason that is not text), ``base_exception`` (raises a
    BaseException of its own), ``kind_text`` (a kind by its name), ``list_nan`` (a list of NaN as the setpoint),
    ``unprintable`` (raises an exception whose message cannot be made), ``none`` (behaves).
    """

    def __init__(self, context: ControllerContext, faults: list[str], after_s: float) -> None:
        super().__init__(context)
        self.faults, self.after_s = faults, after_s
        self.kinematics = context.kinematics

    def step(self, observation: Observation) -> Command:
        fault = self.faults[(len(self.started) - 1) % len(self.faults)]
        if observation.t_s < self.after_s or fault == "none":
            return super().step(observation)
        q = observation.q_setpoint
        if fault == "raise":
            raise RuntimeError("the servo lost its marker")
        if fault == "nan":
            return Command.setpoint(np.full_like(q, np.nan))
        if fault == "length":
            return Command.setpoint(q[:-1])
        if fault == "limits":
            return Command.setpoint(np.maximum(q, self.kinematics.q_upper + 0.1))
        if fault == "slow":
            time.sleep(1.5)
            return Command.hold()
        if fault == "bad_command":
            return "forward"  # type: ignore[return-value]
        if fault == "stage_text":  # a stage by its name: a traceback in the stream
            return Command.setpoint(observation.q_measured, stage="injection")  # type: ignore[arg-type]
        if fault == "stage_42":
            return Command.setpoint(observation.q_measured, stage=42)  # type: ignore[arg-type]
        if fault == "reason_dict":
            return Command.done("completed", {"why": "done"})  # type: ignore[arg-type]
        if fault == "base_exception":  # a class of the user's own outside Exception: the campaign ended
            raise _Weird("outside Exception")
        if fault == "kind_text":  # a kind by its name: taken as a hold, the arm never moved, "completed"
            return Command("setpoint", observation.q_measured)  # type: ignore[arg-type]
        if fault == "list_nan":  # a list, not an array: an AttributeError traceback
            return Command(CommandKind.SETPOINT, [math.nan] * len(q))  # type: ignore[arg-type]
        if fault == "unprintable":  # an exception whose message cannot be made: a traceback
            raise _UnprintableError()
        return Command.hold()  # never: holds until the time limit


class _Weird(BaseException):
    """Not an Exception: what a user's code may still raise."""


class _UnprintableError(RuntimeError):
    """An exception whose ``__str__`` raises."""

    def __str__(self) -> str:
        raise ValueError("cannot format me")


def make_faulty(options: dict[str, Any], context: ControllerContext) -> Faulty:
    """Options: ``faults`` (list, one per case in order), ``after_s`` (when the fault starts, default 0.3 s)."""
    return Faulty(context, list(options["faults"]), float(options.get("after_s", 0.3)))


def make_raising(options: dict[str, Any], context: ControllerContext) -> Any:
    """A factory that fails."""
    raise ValueError("gain must be positive")


def make_nothing(options: dict[str, Any], context: ControllerContext) -> Any:
    """A factory whose object keeps neither contract."""
    return object()


def make_start_property_raising(options: dict[str, Any], context: ControllerContext) -> Any:
    """An object whose ``start`` is a property that raises when read (a hostile trial's: a traceback)."""

    class NotReady:
        @property
        def start(self) -> Any:
            raise ValueError("property start not ready")

    return NotReady()


def make_getattr_raising(options: dict[str, Any], context: ControllerContext) -> Any:
    """An object whose ``__getattr__`` raises RuntimeError for every missing name."""

    class Strict:
        def __getattr__(self, name: str) -> Any:
            raise RuntimeError(f"no {name} here")

    return Strict()


def make_step_only(options: dict[str, Any], context: ControllerContext) -> Any:
    """A closed-loop object without ``start``: keeps neither contract."""

    class StepOnly:
        name = "step_only"

        def step(self, observation: Observation) -> Command:
            return Command.hold()

    return StepOnly()


def make_bad_plan(options: dict[str, Any], context: ControllerContext) -> Any:
    """A planning plugin returning a broken plan (NaN setpoints, bad times, stages or points), or raising, per
    ``options['mode']``."""

    class BadPlan:
        name = "bad_plan"

        def plan_case(self, source: Any, target: Any, seed: int = 0) -> Any:
            if options["mode"] == "raise":
                raise KeyError("lookup table")
            if options["mode"] == "raise_lines":  # lines that read as other errors, a terminal escape, megabytes
                raise ValueError("bad\nTraceback (most recent call last):\nerror: second line\x1b[2J" + "x" * 5_000_000)
            if options["mode"] == "chdir":  # elsewhere, then a good plan: the command's relative paths broke
                os.chdir(options["to"])
            if options["mode"] == "close_stdout":  # then a good plan: run-case's result was a traceback
                sys.stdout.close()
                sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - the user's code, never closed by it
            if options["mode"] == "thread":  # a background thread that never ends, not a daemon: run-case hung
                threading.Thread(target=threading.Event().wait, name="plugin-worker", daemon=False).start()
            if options["mode"] == "refuse_lines":
                raise PlanningError("\x1b[31mred\nerror: second line", "no_skin_entry\nx")
            if options["mode"] == "alarm":  # SIGALRM in a second: it killed run-case (exit 142, nothing said)
                signal.alarm(1)
                time.sleep(1.5)
            if options["mode"] == "refuse_object":  # a reason that is no text: its repr was stored
                raise PlanningError("refused", object())  # type: ignore[arg-type]
            if options["mode"] == "not_a_plan":
                return [0.0, 1.0]
            plan = StraightController(context.planner).plan_case(source, target)
            t_s, stage, q, source_m, line = plan.t_s, plan.stage, plan.q.copy(), plan.source_m, plan.line
            mode = options["mode"]
            if mode == "nan":
                q[3, 1] = np.nan
            elif mode == "hour_long":  # a run of this plan would stream for 10 million times its length
                t_s = t_s * 1e7
            elif mode == "before_start":
                t_s = t_s - 100.0
            elif mode == "nanosecond_apart":
                t_s = t_s * 1e-9
            elif mode == "ten_kilohertz":  # 10 million setpoints of this rate were streamed until memory ran out
                t_s = t_s * 1e-3
            elif mode == "stage_200":
                stage = np.full_like(stage, 200)
            elif mode == "objects":
                q = q.astype(object)  # numbers in an object array: taken, as float64
            elif mode == "line_nan":
                line = replace(line, target_m=np.full(3, np.nan))
            elif mode == "source_nan":
                source_m = np.full(3, np.nan)
            return Plan(t_s, stage, q, source_m, line, self.name)

    return BadPlan()


#: What the hanging samples did in this process: whether a call hung, and the factory calls after it
HANGS: dict[str, Any] = {"hung": False, "made_after": 0}


class HangingServo(Replay):
    """Replays the straight plan; the first case of the process never gets an answer to its step at ``after_s``
    (the step blocks for good); every later case, and every controller made after it, behaves."""

    def __init__(self, context: ControllerContext, after_s: float) -> None:
        super().__init__(context)
        self.after_s = after_s

    def step(self, observation: Observation) -> Command:
        if observation.t_s >= self.after_s and not HANGS["hung"]:
            HANGS["hung"] = True
            threading.Event().wait()  # never set: this call never returns
        return super().step(observation)


def make_hanging_servo(options: dict[str, Any], context: ControllerContext) -> HangingServo:
    """Options: ``after_s`` (when the first case's step hangs, default 0.3 s)."""
    HANGS["made_after"] += HANGS["hung"]
    return HangingServo(context, float(options.get("after_s", 0.3)))


class HangingPlanner(StraightController):
    """The straight planner, whose first ``plan_case`` of the process never returns."""

    def plan_case(self, source: Any, target: Any, seed: int = 0) -> Plan:
        if not HANGS["hung"]:
            HANGS["hung"] = True
            threading.Event().wait()  # never set: this call never returns
        return super().plan_case(source, target, seed)


def make_hanging_planner(options: dict[str, Any], context: ControllerContext) -> HangingPlanner:
    """Options: ``say_at_exit`` (print ``finalized`` to stderr when the interpreter finalizes)."""
    if options.get("say_at_exit"):
        import atexit

        atexit.register(lambda: print("finalized", file=sys.stderr, flush=True))
    HANGS["made_after"] += HANGS["hung"]
    return HangingPlanner(context.planner)


EXITS: dict[str, int] = {"exited": 0}


class ExitingPlanner(StraightController):
    """The straight planner, whose first ``plan_case`` of the process calls ``sys.exit(0)`` (or raises
    KeyboardInterrupt with ``interrupt``); later cases plan as ``straight``."""

    def __init__(self, planner: Any, interrupt: bool) -> None:
        super().__init__(planner)
        self.interrupt = interrupt

    def plan_case(self, source: Any, target: Any, seed: int = 0) -> Plan:
        if not EXITS["exited"]:
            EXITS["exited"] += 1
            if self.interrupt:
                raise KeyboardInterrupt
            sys.exit(0)
        return super().plan_case(source, target, seed)


def make_exiting_planner(options: dict[str, Any], context: ControllerContext) -> ExitingPlanner:
    """Options: ``interrupt`` (raise KeyboardInterrupt instead of calling sys.exit(0))."""
    return ExitingPlanner(context.planner, bool(options.get("interrupt", False)))


def make_exiting_factory(options: dict[str, Any], context: ControllerContext) -> Any:
    """A factory that ends the process."""
    sys.exit(2)


class ChattyPlanner(StraightController):
    """The straight planner, printing to stdout when made and on every ``plan_case`` (as debugging code does)."""

    def plan_case(self, source: Any, target: Any, seed: int = 0) -> Plan:
        print("planning a case")
        return super().plan_case(source, target, seed)


def make_chatty(options: dict[str, Any], context: ControllerContext) -> ChattyPlanner:
    print("chatty planner made")
    return ChattyPlanner(context.planner)


class ChattyServo(Replay):
    """The replay, printing to stdout on every case and when it is closed (as debugging code does)."""

    def start(self, case: CaseStart) -> None:
        super().start(case)
        print(f"starting {case.test_id}")

    def close(self) -> None:
        print("closing the servo")


def make_chatty_servo(options: dict[str, Any], context: ControllerContext) -> ChattyServo:
    return ChattyServo(context)


def make_sleeping_factory(options: dict[str, Any], context: ControllerContext) -> Any:
    """A factory that waits ``options['sleep_s']`` seconds (for a server that never answers) before it makes one."""
    time.sleep(float(options["sleep_s"]))
    return StraightController(context.planner)


def make_widening_factory(options: dict[str, Any], context: ControllerContext) -> Any:
    """A factory that widens the joint limits (``options['what']``: ``limits``) or zeroes the home pose (``home``) of
    the context in place, as a user's set-up code may by mistake."""
    if options["what"] == "limits":
        context.kinematics.q_lower[:] -= 100.0
    else:
        context.robot.home_q[:] = 0.0
    return StraightController(context.planner)


class Elsewhere(StraightController):
    """The straight planner aimed 20 mm off the case's target (x + 20 mm), declaring that point as its target."""

    def plan_case(self, source: Any, target: Any, seed: int = 0) -> Plan:
        return super().plan_case(source, np.asarray(target, dtype=float) + np.array([0.02, 0.0, 0.0]), seed)


def make_elsewhere(options: dict[str, Any], context: ControllerContext) -> Elsewhere:
    return Elsewhere(context.planner)


class Quitter(Replay):
    """Declares the straight plan as its reference and says done at its first step."""

    def step(self, observation: Observation) -> Command:
        return Command.done("completed", "nothing to do")


def make_quitter(options: dict[str, Any], context: ControllerContext) -> Quitter:
    return Quitter(context)
