"""The task supervisor at run time: event sources in, one machine step per control period, decisions out.

Call pattern (one step per 10 Hz setpoint; docs/SUPERVISOR.md, "In the control loop"):

1. feed what was measured after the previous setpoint: :meth:`Supervisor.observe_clearance`,
   :meth:`~Supervisor.observe_force`, :meth:`~Supervisor.observe_tip`; queue user requests with
   :meth:`~Supervisor.request` and external alarms (a hazard detector) with :meth:`~Supervisor.observe_alarm`;
   report progress with :meth:`~Supervisor.task_configured` and :meth:`~Supervisor.stage_finished`;
2. ``status = supervisor.step(t_s)``;
3. send the next setpoint of ``status.stage`` only if ``status.motion_allowed``; otherwise send nothing
   new (hold the last commanded joints), or follow the teleoperation command when ``status.teleoperation``.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from cosim_validation.common.config import resolve_resource
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import Stage, SupervisorMode
from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.monitor.statechart.runtime import Statechart, StepResult
from cosim_validation.supervisor.event_sources import (
    AlarmInput,
    ClearanceMonitor,
    ForceLimitMonitor,
    TrackingMonitor,
    UserRequests,
    any_active,
)
from cosim_validation.supervisor.supervisor_config import SupervisorConfig

DEFAULT_CONFIG = "config/supervisor/supervisor.yaml"


class SupervisorStatus(NamedTuple):
    """The supervisor's decision after a step.

    Attributes:
        t_s: Time of the step [s].
        state: Active leaf (dotted path).
        stage: The stage the controller may stream now; None when no stage may run.
        motion_allowed: Autonomous motion may continue (stream the next setpoint of ``stage``).
        hold: The robot must stand still: send no new setpoint, hold the last commanded joints.
        teleoperation: Autonomous motion is off; the robot follows the teleoperation command.
        finished: The machine is in a final state (the task completed).
        transition: The transition the step took ("" if none).
        events: Events the step saw, sorted.
        commands: Controller commands of the step's actions, in order.
        mode: The per-sample supervisor signal (autonomous, holding, stopped, teleoperation, completed).
        previous_state: Active leaf before the step ("" for the initial entry).
        exception_cleared: No exception condition holds now (the guard of recovery).
        conditions: Exception conditions that hold now: ``clearance``, ``force``, ``tracking``, ``alarm:<source>``.
    """

    t_s: float
    state: str
    stage: Stage | None
    motion_allowed: bool
    hold: bool
    teleoperation: bool
    finished: bool
    transition: str
    events: tuple[str, ...]
    commands: tuple[str, ...]
    mode: SupervisorMode = SupervisorMode.HOLDING
    previous_state: str = ""
    exception_cleared: bool = True
    conditions: tuple[str, ...] = ()


class Supervisor:
    """One task's supervisor: the machine, its event sources, and the names that connect them.

    Args:
        machine: The supervisor machine (e.g. config/supervisor/needle_insertion.yaml).
        config: Sources' thresholds and the machine's names for events, flags and guards.

    Raises:
        ConfigError: The configuration names an event, guard, flag or state the machine lacks.
    """

    def __init__(self, machine: Machine, config: SupervisorConfig) -> None:
        config.check_against(machine, str(config.machine_path))
        self.machine = machine
        self.config = config
        self.chart = Statechart(machine)
        src, ev = config.sources, config.events
        self.clearance = ClearanceMonitor(src.clearance_m, ev["clearance"])
        self.force = ForceLimitMonitor(src.force_limit_n, ev["force"])
        self.tracking = TrackingMonitor(src.tip_lost_timeout_s, ev["tracking"])
        self.alarm = AlarmInput(ev["alarm"])
        self.requests = UserRequests(config.requests)
        self._pending: list[str] = []
        self.status: SupervisorStatus | None = None

    @classmethod
    def from_file(cls, path: str | Path = DEFAULT_CONFIG) -> Supervisor:
        """The supervisor configured in ``path`` (the ``supervisor`` section) with its machine.

        Args:
            path: A YAML file with a ``supervisor`` section, relative to the current directory or to the package root.
        """
        config = SupervisorConfig.load(resolve_resource(path))
        return cls(load_machine(config.machine_path), config)

    # ------------------------------------------------------------------ inputs
    def observe_clearance(self, distance_m: float) -> None:
        """The needle's smallest distance to a forbidden region, measured after the last setpoint [m].

        Args:
            distance_m: The distance [m], 0 inside a region; NaN (no measurement) keeps the last level.
        """
        self._post(self.clearance.update(distance_m))

    def observe_force(self, force_n: float) -> None:
        """The axial force at the needle holder [N] (e.g. :class:`NeedleForceModel`'s holder force).

        Args:
            force_n: The axial holder force [N], either sign (its magnitude is compared with the limit); NaN (no
                measurement) keeps the last level.
        """
        self._post(self.force.update(force_n))

    def observe_tip(self, t_s: float, tracked: bool) -> None:
        """Whether a needle-tip pose arrived since the last period, at time ``t_s`` [s].

        Args:
            t_s: Time of the observation [s].
            tracked: Whether a tip pose arrived since the last period.
        """
        self._post(self.tracking.update(t_s, tracked))

    def observe_alarm(self, source: str, active: bool, reason: str = "") -> None:
        """An external alarm (e.g. a hazard detector): ``source`` raised (``active``) or cleared it.

        The first active alarm raises the configured ``events.alarm`` (an exception: the task stops); while any
        alarm is active the task cannot be recovered.

        Args:
            source: Name of the alarm source (e.g. a hazard detector); one alarm per source.
            active: True if the source's alarm is active, False if it cleared.
            reason: Why the alarm is active, kept per source (``alarm.sources``); not used when it clears.
        """
        self._post(self.alarm.update(source, active, reason))

    def conditions(self) -> tuple[str, ...]:
        """The exception conditions that hold now (``alarm:<source>`` per active alarm)."""
        names = [
            n
            for n, c in (("clearance", self.clearance), ("force", self.force), ("tracking", self.tracking))
            if c.active
        ]
        return (*names, *(f"alarm:{source}" for source in sorted(self.alarm.sources)))

    def request(self, name: str) -> None:
        """A user request: ``abort``, ``recover``, ``teleoperation`` or ``auto``.

        Args:
            name: The request, one of ``config.requests``; queued until the next :meth:`step`.
        """
        self.requests.request(name)

    def task_configured(self) -> None:
        """The controller planned the case (its refusal is an ``abort`` request instead)."""
        self._pending.append(self.config.events["configured"])

    def stage_finished(self, stage: Stage) -> None:
        """The controller sent, and the robot reached, the last setpoint of ``stage``.

        Args:
            stage: A case stage with a completion event in the configuration (``stage_done``).

        Raises:
            InputError: ``stage`` has no completion event.
        """
        if stage not in self.config.stage_done:
            raise InputError(f"stage {Stage(stage).label!r} has no completion event")
        self._pending.append(self.config.stage_done[Stage(stage)])

    def _post(self, event: str | None) -> None:
        if event is not None:
            self._pending.append(event)

    # ------------------------------------------------------------------ stepping
    def start(self, t_s: float = 0.0) -> SupervisorStatus:
        """Enter the initial state at ``t_s`` [s] (the tracking timeout counts from here).

        Args:
            t_s: Time of the initial entry [s].
        """
        self.tracking.start(t_s)
        return self._status(self.chart.start(t_s, self._guards()))

    def step(self, t_s: float) -> SupervisorStatus:
        """One machine step with every event collected since the last one (all dropped afterwards).

        Args:
            t_s: Time of the step [s].

        Raises:
            InputError: The supervisor was not started (:meth:`start`).
        """
        if self.status is None:
            raise InputError("start() the supervisor before stepping it")
        events = [*self._pending, *self.requests.drain(), *self._dwell_event(t_s)]
        self._pending = []
        return self._status(self.chart.step(t_s, self._guards(), events))

    def _guards(self) -> dict[str, bool]:
        cleared = not any_active((self.clearance, self.force, self.tracking, self.alarm))
        return {self.config.exception_cleared_guard: cleared}

    def _dwell_event(self, t_s: float) -> list[str]:
        wait = next((s for s in self.chart.active if s.rsplit(".", 1)[-1] == self.config.wait_state), None)
        if wait is None or t_s - self.chart.entered_at[wait] < self.config.sources.dwell_s:
            return []
        return [self.config.events["dwell"]]

    def _status(self, result: StepResult) -> SupervisorStatus:
        flags, names = self.chart.flags(), self.config.flags
        motion = names["motion"] in flags
        stage_label = self.chart.attribute(self.config.stage_attribute) if motion else None
        teleoperation = names["teleoperation"] in flags
        finished = self.machine.states[self.chart.leaf].final
        guards = self._guards()
        self.status = SupervisorStatus(
            t_s=result.t_s,
            state=self.chart.leaf,
            stage=Stage.parse(str(stage_label)) if stage_label is not None else None,
            motion_allowed=motion,
            hold=names["hold"] in flags,
            teleoperation=teleoperation,
            finished=finished,
            transition=result.transition.label if result.transition is not None else "",
            events=tuple(sorted(result.events)),
            commands=result.commands,
            mode=_mode(motion, teleoperation, names["stopped"] in flags, finished),
            previous_state=result.before,
            exception_cleared=guards[self.config.exception_cleared_guard],
            conditions=self.conditions(),
        )
        return self.status


def _mode(motion: bool, teleoperation: bool, stopped: bool, finished: bool) -> SupervisorMode:
    """The per-sample supervisor signal of a configuration's flags (docs/SUPERVISOR.md)."""
    if teleoperation:
        return SupervisorMode.TELEOPERATION
    if finished:
        return SupervisorMode.COMPLETED
    if stopped:
        return SupervisorMode.STOPPED
    return SupervisorMode.AUTONOMOUS if motion else SupervisorMode.HOLDING
