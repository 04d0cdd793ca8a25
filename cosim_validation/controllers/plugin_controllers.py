"""A user's controller behind guards: whatever it does wrong ends its case with a reason, never the campaign.

:func:`build_plugin` calls the factory and checks the contract; the wrappers check every answer:

- :class:`PlanningPlugin`: ``plan_case`` raising anything but a ``PlanningError``, or returning something that is
  not a usable :class:`Plan`, is a refusal with reason ``controller_error`` or ``bad_plan``;
- :class:`ClosedLoopPlugin`: ``start``, ``step`` or ``reference`` raising, a command that is not a
  :class:`Command`, a setpoint with NaN, the wrong joint count or outside the joint limits, or a step slower than
  the budget, raises :class:`ControllerFaultError` naming the reason (the lockstep loop aborts the case with it).

Every call into the user's code runs on a thread of its own (:class:`CallThread`). A call that never returns
(a ``step`` past its budget by more than :data:`HANG_GRACE_S`; a ``start``, ``reference``, ``finish`` or
``plan_case`` past the plugin's ``call_limit_s``, 60 s by default) ends its case with that reason instead of
hanging the run, and the factory makes the controller again for the next case (the hung call is left to its
thread).
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from typing import Any, Protocol

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.abandoned_calls import abandon, note_left_threads
from cosim_validation.common.config.config_node import MAX_CASE_TIME_S
from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.quoting import one_line
from cosim_validation.common.record import Stage
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.plan import Plan
from cosim_validation.controllers.plugin_api import (
    CaseStart,
    ClosedLoopController,
    Command,
    CommandKind,
    ControllerContext,
    Observation,
)
from cosim_validation.controllers.plugin_loader import PluginSpec, load_factory
from cosim_validation.controllers.standard_streams import GUARD, StreamTicket
from cosim_validation.robots.model import Kinematics


class ControllerFaultError(CosimError):
    """A closed-loop controller misbehaved during a case; the message names what it did."""


class ControllerExitError(CosimError):
    """A user's call raised SystemExit or KeyboardInterrupt: a controller may not end or interrupt the process."""


def said(exc: BaseException) -> str:
    """``exc``'s type and message, even when the user's ``__str__`` raises (it ended the run in a traceback).

    Args:
        exc: What the user's code raised.
    """
    try:
        text = one_line(str(exc))
    except Exception:  # noqa: BLE001 - the user's __str__
        text = "(its message could not be shown: its __str__ raised)"
    return f"{type(exc).__name__}: {text}"


def exit_text(exc: BaseException) -> str:
    """What a user's ``sys.exit`` or ``raise KeyboardInterrupt`` was, in words.

    Args:
        exc: The SystemExit or KeyboardInterrupt the user's code raised.
    """
    if isinstance(exc, SystemExit):
        called = f"sys.exit({exc.code!r})"
    else:
        called = f"raise {type(exc).__name__}" + (f"({exc})" if str(exc) else "")
    return f"{called} (a controller may not end or interrupt the process)"


class NeedleForceSensor(Protocol):
    """The modelled needle force of one case, one sample at a time (the supervisor's ``NeedleForceStream``)."""

    def update(self, t_s: float, holder_m: ArrayLike, tip_m: ArrayLike) -> tuple[float, float]:
        """The forces at the tip and at the holder [N] of the needle from ``holder_m`` to ``tip_m`` at ``t_s``.

        Args:
            t_s: Case time, in [s].
            holder_m: The needle's holder (mount) end in base_link, shape (3,), in [m].
            tip_m: The needle's tip in base_link, shape (3,), in [m].

        Returns:
            The force at the tip and the force at the holder, in [N].
        """
        ...


def build_plugin(spec: PluginSpec, context: ControllerContext) -> PlanningPlugin | ClosedLoopPlugin:
    """Import the factory, call it with the options and the context, check the contract, wrap the controller.

    Args:
        spec: The plugin as the user named it (factory, options, limits).
        context: The case study the controller will run in.

    Raises:
        ConfigError, InputError: Not importable, not callable, the factory raised, or the object it returned keeps
            neither contract (naming where the plugin was named).
    """
    factory = import_factory(spec)
    maker = CallThread(spec.name)  # the factory is bounded by call_limit_s like every call, as the import is
    try:
        made = _make_call(maker, spec, f"{spec.target}(options, context)", lambda: factory(dict(spec.options), context))
    finally:
        maker.close(lambda: None, spec.call_limit_s)

    def remake() -> Any:  # after a call that never returned: a new controller for the next case
        again = CallThread(spec.name)  # guarded and bounded like every call (it ran on the caller's thread, unbounded)
        try:
            return again.call(lambda: factory(dict(spec.options), context), spec.call_limit_s)[0]
        finally:
            again.close(lambda: None, spec.call_limit_s)

    def has(method: str) -> bool:  # the user's object: reading an attribute runs their code (a property, __getattr__)
        try:
            return callable(getattr(made, method, None))
        except Exception as exc:  # noqa: BLE001 - whatever their code raised, it is one error naming the plugin
            raise spec.error(
                f"{spec.target} returned a {type(made).__name__} whose attribute {method!r} raised "
                f"{type(exc).__name__}: {exc}"
            ) from None

    if has("start") and has("step"):
        if spec.time_limit_s < context.dt_s:  # 0.05 s: every case aborted before its first step
            raise spec.error(
                f"time_limit_s: {spec.time_limit_s:g} s is shorter than one control period ({context.dt_s:g} s)"
            )
        return ClosedLoopPlugin(made, spec, context, remake)
    if has("plan_case"):
        closed_loop = sorted(spec.given & {"needle_force", "time_limit_s", "step_budget_s"})
        if closed_loop:  # taken without a word before: they set nothing for a planning controller
            raise spec.error(
                f"{closed_loop[0]} is for a closed-loop controller; a planning controller is given its whole plan's "
                "time and observes nothing"
            )
        return PlanningPlugin(made, spec, context.kinematics, remake)
    raise spec.error(
        f"{spec.target} returned a {type(made).__name__}, which has neither plan_case(source, target, seed) "
        "(planning) nor start(case) and step(observation) (closed loop)"
    )


def import_factory(spec: PluginSpec) -> Any:
    """Import the plugin's factory on a thread of its own, within its ``call_limit_s``.

    Reading a case study calls it to check that the plugin it names can be loaded, and :func:`build_plugin` to get
    the factory: a module that waits at import, or
    raises ``KeyboardInterrupt`` or ``SystemExit`` there, is one error naming where the plugin was named (it blocked
    the command for good, or read as the user's Ctrl-C).

    Args:
        spec: The plugin as the user named it.

    Raises:
        ConfigError, InputError: The import failed, ended or had not returned in time.
    """
    maker = CallThread(spec.name)
    try:
        return _make_call(maker, spec, "importing its module", lambda: load_factory(spec), importing=True)
    finally:
        maker.close(lambda: None, spec.call_limit_s)


def _make_call(maker: CallThread, spec: PluginSpec, what: str, call: Callable[[], Any], importing: bool = False) -> Any:
    """``call()`` (an import or the factory) on ``maker``'s thread within the plugin's ``call_limit_s``.

    Args:
        maker: The thread the plugin is made on.
        spec: The plugin as the user named it (its limits, where it was named).
        what: The call, for the error (``importing its module``, ``FACTORY(options, context)``).
        call: The call itself.
        importing: Whether it is the import, whose own errors name the plugin already.

    Raises:
        ConfigError, InputError: It raised, called ``sys.exit``, or had not returned in time (a factory waiting for
            a server that never answers blocked the command for good), naming where the plugin was named.
    """
    try:
        return maker.call(call, spec.call_limit_s)[0]
    except CallHungError as exc:
        raise spec.error(f"{what} {exc} (call_limit_s); is it waiting for something that is not there?") from None
    except ControllerExitError as exc:  # it ended the process: a configuration error, not the end of the run
        raise spec.error(f"{what} called {exc}") from None
    except CosimError as exc:  # the import's error names the plugin already; a factory's are its own words
        if importing:
            raise
        raise spec.error(str(exc)) from None
    except Exception as exc:  # noqa: BLE001 - the user's factory: any failure is a configuration error
        raise spec.error(f"{what} raised {said(exc)}") from None


def _real(values: Any) -> np.ndarray:
    """``values`` as a float64 array; complex numbers are refused (the cast dropped their imaginary part, warning).

    Raises:
        TypeError: Complex values.
        ValueError: Values that are not numbers (as numpy says).
    """
    array = np.asarray(values)
    if array.dtype.kind == "c":
        raise TypeError(f"complex values ({array.dtype.name}); expected real numbers")
    return np.array(array, dtype=np.float64)


def plan_problem(plan: Any, kinematics: Kinematics) -> str:
    """Why ``plan`` cannot be streamed ("" if it can).

    Not a Plan, not numbers, empty, wrong shapes, NaN, stages that are not stages, times before the case or past an
    hour or closer than a microsecond, setpoints outside the limits.

    Args:
        plan: What a controller returned as its plan.
        kinematics: The arm whose joint count and URDF limits apply.
    """
    if not isinstance(plan, Plan):
        return f"returned a {type(plan).__name__}, not a Plan"
    try:
        t_s, q = _real(plan.t_s), _real(plan.q)
        stage = np.asarray(plan.stage)
        points = [_real(v) for v in (plan.source_m, *_line_points(plan))]
    except (TypeError, ValueError, AttributeError) as exc:
        return f"the plan's arrays are not numbers ({exc})"
    n = len(t_s) if t_s.ndim == 1 else 0
    if n < 1 or q.shape != (n, kinematics.n_joints) or stage.shape != (n,):
        shapes = f"t_s {t_s.shape}, stage {stage.shape}, q {q.shape}"
        return f"plan shapes {shapes}; expected (n,), (n,), (n, {kinematics.n_joints}) with n >= 1"
    if not (np.isfinite(q).all() and np.isfinite(t_s).all()):
        return "the plan holds NaN or infinite values"
    if any(p.shape != (3,) or not np.isfinite(p).all() for p in points):
        return "the plan's source or insertion line is not three finite coordinates"
    return _stage_problem(stage) or _timing_problem(t_s) or setpoint_problem(q, kinematics)


def as_numbers(plan: Plan) -> Plan:
    """A copy of ``plan`` with float64 times, joints and points and uint8 stages, whatever the user's code built.

    A copy: a controller that later changes its own arrays in place (``q = plan.q[k]; q += 0.02``) changed the
    expected trajectory the monitor judged it against, and its commands "followed the plan".

    Args:
        plan: A plan that :func:`plan_problem` found nothing wrong with.
    """
    line = plan.line
    return replace(
        plan,
        t_s=np.array(plan.t_s, dtype=np.float64),
        stage=np.array(plan.stage, dtype=np.uint8),
        q=np.array(plan.q, dtype=np.float64),
        source_m=np.array(plan.source_m, dtype=np.float64),
        line=replace(
            line,
            target_m=np.array(line.target_m, dtype=np.float64),
            axis=np.array(line.axis, dtype=np.float64),
            entry_m=np.array(line.entry_m, dtype=np.float64),
        ),
    )


def _line_points(plan: Plan) -> tuple[Any, ...]:
    line = plan.line
    return (line.target_m, line.axis, line.entry_m)


def _is_stage(value: Any) -> bool:
    """Whether ``value`` is a :class:`Stage` or an int that is one (not a bool, not text)."""
    if isinstance(value, Stage):
        return True
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and int(value) in _STAGE_VALUES


#: Closest two setpoints of a plan may be [s]: 1 kHz, the fastest setpoint rate a case study may set (a plan of 10
#: million setpoints 100 us apart was streamed until the memory ran out); a nanosecond of rounding is allowed
MIN_SETPOINT_SPACING_S = 1e-3
_SPACING_ROUNDING_S = 1e-9
_STAGE_VALUES = frozenset(int(s) for s in Stage)


def _stage_problem(stage: np.ndarray) -> str:
    known = np.isin(stage, list(_STAGE_VALUES)) if stage.dtype.kind in "iuf" else np.zeros(stage.shape, bool)
    if stage.dtype.kind in "iu" and known.all():
        return ""
    bad = stage[~known][0] if not known.all() else stage.flat[0]  # (a float stage is refused though it is whole)
    value = bad.item() if isinstance(bad, np.generic) else bad
    stages = ", ".join(f"{int(s)} {s.label}" for s in Stage)
    return f"the plan's stage holds {value!r}, not a stage ({stages})"


def _timing_problem(t_s: np.ndarray) -> str:
    if t_s[0] < 0.0:
        return f"the plan starts at t = {t_s[0]:.6g} s; its times count from the case's start (>= 0)"
    if t_s[-1] > MAX_CASE_TIME_S:
        return f"the plan lasts {t_s[-1]:.6g} s; a case may last at most {MAX_CASE_TIME_S:g} s"
    steps = np.diff(t_s)
    if len(steps) and not (steps > 0).all():
        return "the plan's times do not increase"
    if len(steps) and steps.min() < MIN_SETPOINT_SPACING_S - _SPACING_ROUNDING_S:
        k = int(np.argmin(steps))
        return (
            f"the plan's setpoints {k} and {k + 1} are {steps[k]:.3g} s apart; setpoints come at most 1000 per "
            f"second (at least {MIN_SETPOINT_SPACING_S:g} s apart)"
        )
    return ""


def setpoint_problem(q: np.ndarray, kinematics: Kinematics) -> str:
    """Why setpoints ``q`` leave the URDF joint limits ("" if they do not).

    Args:
        q: Setpoints, shape (n, J) or (J,), in [rad], or [m] for a prismatic joint.
        kinematics: The arm whose limits apply.
    """
    rows = np.atleast_2d(q)
    low, high = rows < kinematics.q_lower, rows > kinematics.q_upper
    if not (low.any() or high.any()):
        return ""
    k, j = np.argwhere(low | high)[0]
    bound = kinematics.q_lower[j] if low[k, j] else kinematics.q_upper[j]
    value = f"{rows[k, j]:.4f}" if abs(rows[k, j]) < 1e6 else f"{rows[k, j]:.4g}"  # 1e300: not 300 digits
    return f"setpoint outside the joint limits: {kinematics.joint_names[j]} = {value} beyond {bound:.4f}"


def release(controller: Any) -> None:
    """Call ``controller.close()`` when it has one; never raises.

    The controller is a user's, or one of ours holding a process or a connection. At shutdown there is nothing left to
    fail.

    Args:
        controller: Any object; its ``close`` is called if it has a callable one.
    """
    close = getattr(controller, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()


#: How long past its budget a ``step`` that has not returned is waited for before its case ends [s] (wall time;
#: a step that returns within it still ends the case as "step budget exceeded", with the time it took)
HANG_GRACE_S = 2.0


class CallHungError(CosimError):
    """A call into the user's code did not return within its limit (it keeps running on its own thread)."""


def _in_our_directory(call: Callable[[], Any]) -> Any:
    """``call()``, and then back to the working directory it was called in, should the user's code change it.

    The command's relative paths (the suite, the run directory) are read after the controller was made and ran:
    a plugin that changed the directory made them "not found" or wrote elsewhere.

    Args:
        call: The user's call, without arguments.
    """
    try:
        ours = os.getcwd()
    except OSError:  # the directory itself is gone: nothing to come back to
        return call()
    try:
        return call()
    finally:
        with contextlib.suppress(OSError):
            if os.getcwd() != ours:
                os.chdir(ours)


def _note_threads_left(before: set[threading.Thread]) -> None:
    """Note the non-daemon threads a user's call started and left running.

    The process would wait for them at its end (``run-case`` printed its result and never exited); noted, it ends
    without waiting (see :mod:`~cosim_validation.common.abandoned_calls`). Worker threads of a thread pool are not
    noted: another thread of the process (a node's multi-threaded executor) may start them during the call, and the
    interpreter ends them at exit.
    """
    left = [
        t
        for t in threading.enumerate()
        if t not in before and not t.daemon and t.is_alive() and not t.name.startswith("ThreadPoolExecutor-")
    ]
    if left:
        note_left_threads(left)


#: A call for :class:`CallThread`: the call, the future of its result and time (None: end the thread), its ticket
_Task = tuple[Callable[[], Any], "Future[tuple[Any, float]] | None", StreamTicket]


class CallThread:
    """Runs a user's calls one at a time on a daemon thread of its own, each with a wall-time limit.

    A call past its limit raises :class:`CallHungError`; the thread stays with it (a daemon thread does not keep
    the process alive) and the caller makes a new :class:`CallThread` and a new controller.
    """

    def __init__(self, name: str) -> None:
        self._tasks: queue.SimpleQueue[_Task] = queue.SimpleQueue()
        self.hung = False
        threading.Thread(target=self._serve, name=f"controller-{name}", daemon=True).start()

    def _serve(self) -> None:
        while True:
            call, future, ticket = self._tasks.get()
            if future is None:  # stop()
                return
            began = time.perf_counter()
            GUARD.enter(ticket)  # the command's streams stay whole whatever the call does to sys.stdout/stderr
            before = set(threading.enumerate())
            result: Any = None
            error: BaseException | None = None
            try:
                result = _in_our_directory(call)
            except Exception as exc:  # noqa: BLE001 - handed to the caller, which decides
                error = exc
            except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt (raised by the user's code on
                # this thread, never a signal), GeneratorExit or a class of the user's own: never past this case
                error = ControllerExitError(exit_text(exc))
            GUARD.leave(ticket)  # before the caller hears: its next print goes to its own streams
            _note_threads_left(before)
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result((result, time.perf_counter() - began))

    def call(self, call: Callable[[], Any], limit_s: float) -> tuple[Any, float]:
        """``call()``'s result and how long it ran [s].

        Args:
            call: The call, without arguments.
            limit_s: Longest wait for it, in [s] (wall time).

        Raises:
            CallHungError: It had not returned after ``limit_s``.
            BaseException: Whatever ``call`` raised.
        """
        future: Future[tuple[Any, float]] = Future()
        ticket = StreamTicket()
        self._tasks.put((call, future, ticket))
        try:
            return future.result(timeout=limit_s)
        except TimeoutError:
            self.hung = True
            GUARD.leave(ticket)  # the streams are the command's again now, not when (if ever) the call returns
            abandon()
            raise CallHungError(f"had not returned after {limit_s:g} s") from None

    def close(self, release_call: Callable[[], Any], limit_s: float) -> None:
        """Run ``release_call`` (the controller's ``close``) on the thread, then end the thread; never raises.

        A thread whose call never returned is left as it is (and so is its controller).

        Args:
            release_call: The call that releases the controller, without arguments.
            limit_s: Longest wait for it, in [s] (wall time).
        """
        if self.hung:
            return
        with contextlib.suppress(CallHungError):
            self.call(release_call, limit_s)
        if not self.hung:
            self._tasks.put((lambda: None, None, StreamTicket()))


class PlanningPlugin:
    """A user's planning controller (``plan_case``), guarded (see the module docstring)."""

    def __init__(self, inner: Any, spec: PluginSpec, kinematics: Kinematics, remake: Callable[[], Any]) -> None:
        self.inner, self.spec, self.kinematics = inner, spec, kinematics
        self.name = spec.name
        self._remake = remake  # the factory again, for a new controller after a call that never returned
        self._thread = CallThread(spec.name)

    def close(self) -> None:
        """Release what the controller holds (optional ``close()``: a connection to a planner); never raises.

        A controller whose call never returned is abandoned as it is.
        """
        inner = self.inner
        self._thread.close(lambda: release(inner), self.spec.call_limit_s)

    def _renew(self) -> None:
        """A new controller and thread after a hung call.

        Raises:
            PlanningError: The factory failed this time (reason ``controller_error``).
        """
        try:
            self.inner, self._thread = self._remake(), CallThread(self.spec.name)
        except Exception as exc:  # noqa: BLE001 - the user's factory
            raise PlanningError(
                f"made again after a hung call, the factory raised {said(exc)}", "controller_error"
            ) from None

    def plan_case(self, source: ArrayLike, target: ArrayLike, seed: int = 0) -> Plan:
        """The user's plan, checked.

        Args:
            source: The case's source point, shape (3,), in base_link, in [m].
            target: The case's target point, shape (3,), in base_link, in [m].
            seed: The case seed, handed to the user's ``plan_case``.

        Raises:
            PlanningError: The user's refusal, or reason ``controller_error`` / ``bad_plan``.
        """
        if self._thread.hung:
            self._renew()
        inner, source_m, target_m = self.inner, np.array(source, dtype=float), np.array(target, dtype=float)
        try:
            plan, _ = self._thread.call(lambda: inner.plan_case(source_m, target_m, seed), self.spec.call_limit_s)
        except PlanningError as exc:  # the user's refusal, its words on one line
            reason: Any = exc.reason  # typed str, but the user's code may put anything there
            if not isinstance(reason, str):  # an object's repr was stored as the reason
                kind = type(reason).__name__
                raise PlanningError(
                    f"plan_case raised PlanningError with a reason of type {kind}, not text: {one_line(str(exc))}",
                    "controller_error",
                ) from None
            raise PlanningError(one_line(str(exc)), one_line(reason, 60)) from None
        except CallHungError as exc:
            raise PlanningError(f"plan_case {exc}; the controller is made again", "controller_error") from None
        except Exception as exc:  # noqa: BLE001 - the user's code: a failure ends this case only
            raise PlanningError(f"plan_case raised {said(exc)}", "controller_error") from None
        problem = plan_problem(plan, self.kinematics)
        if problem:
            raise PlanningError(f"plan_case {problem}" if problem.startswith("returned") else problem, "bad_plan")
        return as_numbers(plan)


class ClosedLoopPlugin:
    """A user's closed-loop controller (``start``, ``step``, optional ``reference``), guarded."""

    def __init__(
        self,
        inner: ClosedLoopController,
        spec: PluginSpec,
        context: ControllerContext,
        remake: Callable[[], ClosedLoopController] | None = None,
    ) -> None:
        self.inner, self.spec, self.kinematics = inner, spec, context.kinematics
        self._remake = remake  # the factory again, for a new controller after a call that never returned
        self._thread = CallThread(spec.name)
        self.name = spec.name
        self.dt_s = context.dt_s  # the control period [s]
        self.home_q = context.robot.home_q  # (J,) where a case without a reference starts
        #: A new sensor per case when ``spec.needle_force`` names a force model (set by the assembly, which loads
        #: the model on the case study's anatomy); None: the observation's force is NaN.
        self.needle_force: Callable[[], NeedleForceSensor] | None = None

    def _call(self, what: str, call: Callable[[], Any]) -> tuple[Any, float]:
        """``call()`` on the controller's thread: its result and how long it ran [s].

        Raises:
            PlanningError: As raised by ``call``.
            ControllerFaultError: It raised anything else, or had not returned after the plugin's ``call_limit_s``.
        """
        try:
            return self._thread.call(call, self.spec.call_limit_s)
        except PlanningError:
            raise
        except CallHungError as exc:
            raise ControllerFaultError(f"controller hung: {what} {exc}; the controller is made again") from None
        except Exception as exc:  # noqa: BLE001 - the user's code: a failure ends this case only
            raise ControllerFaultError(f"controller error: {what} raised {said(exc)}") from None

    def _renew_if_hung(self) -> None:
        """A new controller and thread when a call of an earlier case never returned (the old one is abandoned).

        Raises:
            ControllerFaultError: There is no factory to make it again, or it failed this time.
        """
        if not self._thread.hung:
            return
        if self._remake is None:
            raise ControllerFaultError("controller hung in an earlier case and cannot be made again")
        try:
            self.inner, self._thread = self._remake(), CallThread(self.spec.name)
        except Exception as exc:  # noqa: BLE001 - the user's factory
            raise ControllerFaultError(
                f"controller made again after a hung call: the factory raised {said(exc)}"
            ) from None

    def reference(self, case: CaseStart) -> Plan | None:
        """The declared reference trajectory, checked, or None.

        Args:
            case: The case, as :meth:`start` gets it.

        Raises:
            PlanningError: The controller refuses the case (its reason).
            ControllerFaultError: ``reference`` raised anything else or returned something unusable.
        """
        self._renew_if_hung()
        declare = getattr(self.inner, "reference", None)
        if not callable(declare):
            return None
        plan, _ = self._call("reference", lambda: declare(case))
        problem = "" if plan is None else plan_problem(plan, self.kinematics)
        if problem:
            raise ControllerFaultError(f"bad reference: reference {problem}")
        return None if plan is None else as_numbers(plan)

    def start(self, case: CaseStart) -> None:
        """Tell the controller a case begins (a ``PlanningError`` here is a fault too: the case has started).

        Args:
            case: The case: its id, source and target, seed, start pose, control period and time limit.
        """
        self._renew_if_hung()
        inner = self.inner
        try:
            self._call("start", lambda: inner.start(case))
        except PlanningError as exc:
            raise ControllerFaultError(f"controller error: start raised PlanningError: {exc}") from None

    def finish(self, outcome: str, reason: str) -> None:
        """Tell the controller its case is over, however it ended (optional ``finish(outcome, reason)``).

        Called once per started case, after the last setpoint: ``outcome`` is ``completed`` or ``aborted``. What it
        raises comes back as a :class:`ControllerFaultError`, which the caller notes in the case's message: the case
        has its outcome already.

        Args:
            outcome: ``completed`` or ``aborted``.
            reason: Why the case ended.

        Raises:
            ControllerFaultError: ``finish`` raised anything (a PlanningError too: the case is over, there is nothing
                left to refuse), or had not returned after the plugin's ``call_limit_s``.
        """
        tell = getattr(self.inner, "finish", None)
        if callable(tell) and not self._thread.hung:  # a controller whose call never returned is not told
            try:
                self._call("finish", lambda: tell(outcome, reason))
            except PlanningError as exc:
                raise ControllerFaultError(f"controller error: finish raised PlanningError: {exc}") from None

    def close(self) -> None:
        """Release what the controller holds (optional ``close()``: processes, connections); never raises.

        A controller whose call never returned is abandoned as it is.
        """
        inner = self.inner
        self._thread.close(lambda: release(inner), self.spec.call_limit_s)

    def step(self, observation: Observation) -> Command:
        """The controller's command for this period, checked.

        Args:
            observation: What the robots answered to the last setpoint.

        Raises:
            ControllerFaultError: It raised, was slower than the step budget, or returned a bad command.
        """
        inner, budget_s = self.inner, self.spec.step_budget_s
        try:
            command, took_s = self._thread.call(lambda: inner.step(observation), budget_s + HANG_GRACE_S)
        except CallHungError as exc:
            raise ControllerFaultError(
                f"step budget exceeded: step {exc} at t = {observation.t_s:.3f} s (budget {budget_s * 1e3:.1f} ms); "
                "the controller is made again for the next case"
            ) from None
        except PlanningError as exc:
            raise ControllerFaultError(f"controller error: step raised PlanningError: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the user's code: a failure ends this case only
            raise ControllerFaultError(f"controller error: step raised {said(exc)}") from None
        if took_s > self.spec.step_budget_s:
            raise ControllerFaultError(
                f"step budget exceeded: step took {took_s * 1e3:.1f} ms at t = {observation.t_s:.3f} s "
                f"(budget {self.spec.step_budget_s * 1e3:.1f} ms)"
            )
        if not isinstance(command, Command):
            raise ControllerFaultError(f"bad command: step returned a {type(command).__name__}, not a Command")
        kind: Any = command.kind  # typed CommandKind, but the user's code may put anything there
        if not isinstance(kind, CommandKind):  # Command("setpoint", q) was taken as a hold, the arm still
            kinds = ", ".join(f"CommandKind.{k.name}" for k in CommandKind)
            raise ControllerFaultError(f"bad command: kind {kind!r} is not a CommandKind ({kinds})")
        if command.kind is CommandKind.SETPOINT:
            command = replace(command, q=self._setpoint_array(command.q, observation.t_s))
            self._check_setpoint(command.q, observation.t_s)
        if command.stage is not None and not _is_stage(command.stage):  # 'injection' was a traceback, 42 "failed"
            raise ControllerFaultError(
                f"bad command: stage {command.stage!r} at t = {observation.t_s:.3f} s is not a Stage "
                f"({', '.join(f'Stage.{s.name}' for s in Stage)})"
            )
        if command.kind is CommandKind.DONE and command.outcome not in ("completed", "aborted"):
            raise ControllerFaultError(f"bad command: done with outcome {command.outcome!r} (completed or aborted)")
        reason: Any = command.reason  # typed str, but the user's code may put anything there
        if command.kind is CommandKind.DONE and not isinstance(reason, str):  # a traceback joining it
            kind = type(reason).__name__
            raise ControllerFaultError(f"bad command: done with a reason of type {kind}, not text")
        return command

    @staticmethod
    def _setpoint_array(q: Any, t_s: float) -> np.ndarray:
        """``q`` as a float array (a list or tuple of numbers is one; it was an AttributeError traceback)."""
        try:
            return _real(q)
        except (TypeError, ValueError) as exc:
            raise ControllerFaultError(f"bad command: setpoint at t = {t_s:.3f} s is not numbers ({exc})") from None

    def _check_setpoint(self, q: np.ndarray, t_s: float) -> None:
        n = self.kinematics.n_joints
        if q.shape != (n,):
            raise ControllerFaultError(f"wrong joint count: setpoint of shape {q.shape} at t = {t_s:.3f} s, not ({n},)")
        if not np.isfinite(q).all():
            raise ControllerFaultError(f"NaN setpoint: {np.round(q, 4).tolist()} at t = {t_s:.3f} s")
        problem = setpoint_problem(q, self.kinematics)
        if problem:
            raise ControllerFaultError(f"{problem} at t = {t_s:.3f} s")
