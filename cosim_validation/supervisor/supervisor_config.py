"""The ``supervisor`` section of config/supervisor/supervisor.yaml, validated on load."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.common.config.config_node import MAX_CASE_TIME_S, MAX_CLEARANCE_M, MAX_FORCE_N
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.common.record import Stage
from cosim_validation.common.record.stage import CASE_STAGES
from cosim_validation.monitor.statechart.model import Machine

_KEYS = (
    "machine",
    "needle_force",
    "sources",
    "events",
    "exception_cleared_guard",
    "flags",
    "wait_state",
    "stage_attribute",
    "loop",
    "scenario",
)
_SOURCE_KEYS = ("clearance_m", "force_limit_n", "tip_lost_timeout_s", "dwell_s")
_EVENT_KEYS = ("clearance", "force", "tracking", "configured", "dwell", "alarm", "requests", "stage_done")
_LOOP_KEYS = ("stopped_timeout_s", "teleoperation_idle_s", "rejoin_speed_fraction", "max_case_s")
REQUESTS = ("abort", "recover", "teleoperation", "auto")
FLAG_ROLES = ("motion", "hold", "teleoperation", "stopped")


@dataclass(frozen=True)
class SourceSettings:
    """Thresholds of the event sources.

    Attributes:
        clearance_m: Needle-to-forbidden-region distance below which e_FRTooClose is raised [m].
        force_limit_n: Axial holder force above which e_ForceLimit is raised [N].
        tip_lost_timeout_s: Time without a tip pose after which e_NeedleLost is raised [s].
        dwell_s: Minimum time in the wait state before the dwell event [s].
    """

    clearance_m: float = 0.005
    force_limit_n: float = 3.5
    tip_lost_timeout_s: float = 0.5
    dwell_s: float = 0.0


@dataclass(frozen=True)
class LoopSettings:
    """How the control loop ends a case the supervisor holds, and how it returns to the plan.

    Attributes:
        stopped_timeout_s: A task stopped this long without leaving TaskStopped ends the case (aborted) [s].
        teleoperation_idle_s: Teleoperation without a command this long ends the case (aborted) [s].
        rejoin_speed_fraction: After teleoperation moved the arm, the controller goes back to where the plan
            resumes at this fraction of every joint's velocity limit before it streams the plan again.
        max_case_s: No case runs longer than this, whatever the supervisor does [s].
    """

    stopped_timeout_s: float = 1.0
    teleoperation_idle_s: float = 1.0
    rejoin_speed_fraction: float = 0.2
    max_case_s: float = 600.0


@dataclass(frozen=True)
class SupervisorConfig:
    """The supervisor's machine, event sources and the names it maps between them.

    Attributes:
        machine_path: The machine file.
        needle_force_path: The needle force model's tissue file.
        sources: Thresholds of the event sources.
        events: Event of each source and host report: ``clearance``, ``force``, ``tracking``,
            ``configured``, ``dwell``, ``alarm`` (an external alarm, e.g. a hazard detector; default: the abort
            request's event).
        requests: Event of each user request (``abort``, ``recover``, ``teleoperation``, ``auto``).
        stage_done: Event raised when the controller finished a stage.
        exception_cleared_guard: Input guard set each step: no exception condition holds.
        flags: Machine flag for ``motion``, ``hold``, ``teleoperation`` and ``stopped`` (default ``stopped``).
        wait_state: Name of the state in which the dwell is timed.
        stage_attribute: State attribute naming the stage the controller may run.
        loop: How the control loop ends held cases.
        scenario_path: A scenario file (scripted requests, faults and teleoperation), or None.
    """

    machine_path: Path
    needle_force_path: Path
    sources: SourceSettings
    events: Mapping[str, str]
    requests: Mapping[str, str]
    stage_done: Mapping[Stage, str]
    exception_cleared_guard: str
    flags: Mapping[str, str]
    wait_state: str
    stage_attribute: str
    loop: LoopSettings = LoopSettings()
    scenario_path: Path | None = None

    @classmethod
    def load(cls, path: str | Path) -> SupervisorConfig:
        """Read the ``supervisor`` section of ``path``.

        Args:
            path: A YAML file with a ``supervisor`` section (e.g. config/supervisor/supervisor.yaml).
        """
        return cls.from_config(load_config(path)["supervisor"])

    @classmethod
    def from_config(cls, node: ConfigNode) -> SupervisorConfig:
        """Read the section (``node`` is the ``supervisor`` mapping).

        Args:
            node: The ``supervisor`` mapping of a loaded configuration (errors name its file and key).
        """
        node.reject_unknown(_KEYS)
        src = node["sources"]
        src.reject_unknown(_SOURCE_KEYS)
        sources = SourceSettings(
            src["clearance_m"].to_float(minimum=0.0, maximum=MAX_CLEARANCE_M),
            src["force_limit_n"].to_float(exclusive_minimum=0.0, maximum=MAX_FORCE_N),
            src["tip_lost_timeout_s"].to_float(exclusive_minimum=0.0, maximum=MAX_CASE_TIME_S),
            src["dwell_s"].to_float(minimum=0.0, maximum=MAX_CASE_TIME_S),
        )
        ev = node["events"]
        ev.reject_unknown(_EVENT_KEYS)
        ev["requests"].reject_unknown(REQUESTS)
        ev["stage_done"].reject_unknown([s.label for s in CASE_STAGES])
        node["flags"].reject_unknown(FLAG_ROLES)
        requests = {k: ev["requests"][k].to_str() for k in REQUESTS}
        events = {k: ev[k].to_str() for k in _EVENT_KEYS[:5]}
        events["alarm"] = ev["alarm"].to_str() if ev.has("alarm") else requests["abort"]
        flags = {k: node["flags"][k].to_str() for k in FLAG_ROLES[:3]}
        flags["stopped"] = node["flags"]["stopped"].to_str() if node["flags"].has("stopped") else "stopped"
        scenario = node.get("scenario")
        stage_done = {s: ev["stage_done"][s.label].to_str() for s in CASE_STAGES}
        for stage, event in stage_done.items():  # one event for two stages: the machine could not tell which ended
            first = next(s for s, e in stage_done.items() if e == event)
            if first is not stage:
                raise ev["stage_done"][stage.label].error(
                    f"event {event!r} is also the end of {first.label}: each stage ends with an event of its own "
                    "(the machine cannot tell the stages apart and the case runs to its time limit)"
                )
        return cls(
            machine_path=node["machine"].to_path(),
            needle_force_path=node["needle_force"].to_path(),
            sources=sources,
            events=events,
            requests=requests,
            stage_done=stage_done,
            exception_cleared_guard=node["exception_cleared_guard"].to_str(),
            flags=flags,
            wait_state=node["wait_state"].to_str(),
            stage_attribute=node["stage_attribute"].to_str(),
            loop=_loop(node.get("loop")),
            scenario_path=scenario.to_path() if scenario is not None else None,
        )

    def check_against(self, machine: Machine, source: str) -> None:
        """Raise :class:`ConfigError` if a name here is not in ``machine`` (events, guard, flags, states).

        Args:
            machine: The loaded supervisor machine.
            source: The file the error names (:class:`~cosim_validation.supervisor.supervisor.Supervisor` passes the
                machine file).
        """
        named = [*self.events.values(), *self.requests.values(), *self.stage_done.values()]
        for event in named:
            if event not in machine.events:
                raise ConfigError(
                    source,
                    "supervisor.events",
                    f"machine {machine.name!r} has no event {event!r}; events: {', '.join(machine.events)}",
                )
        guard = machine.guards.get(self.exception_cleared_guard)
        if guard is None or guard.expr is not None:
            message = f"machine {machine.name!r} has no input guard {self.exception_cleared_guard!r}"
            raise ConfigError(source, "supervisor.exception_cleared_guard", message)
        flags = set().union(*(s.flags for s in machine.states.values()))
        for role, flag in self.flags.items():
            if flag not in flags:
                raise ConfigError(source, f"supervisor.flags.{role}", f"no state of {machine.name!r} has flag {flag!r}")
        if not any(s.name == self.wait_state for s in machine.states.values()):
            raise ConfigError(
                source, "supervisor.wait_state", f"machine {machine.name!r} has no state {self.wait_state!r}"
            )
        if not any(self.stage_attribute in s.attributes for s in machine.states.values()):
            raise ConfigError(
                source,
                "supervisor.stage_attribute",
                f"no state of {machine.name!r} has attribute {self.stage_attribute!r} (the stage the controller runs "
                "in a motion state; without it no stage ever runs)",
            )


def _loop(node: ConfigNode | None) -> LoopSettings:
    """The ``loop`` section (defaults where absent)."""
    if node is None:
        return LoopSettings()
    node.reject_unknown(_LOOP_KEYS)
    default = LoopSettings()

    def value(name: str, **bounds: float) -> float:
        child = node.get(name)
        return float(getattr(default, name)) if child is None else child.to_float(**bounds)

    return LoopSettings(
        stopped_timeout_s=value("stopped_timeout_s", exclusive_minimum=0.0, maximum=MAX_CASE_TIME_S),
        teleoperation_idle_s=value("teleoperation_idle_s", exclusive_minimum=0.0, maximum=MAX_CASE_TIME_S),
        rejoin_speed_fraction=value("rejoin_speed_fraction", exclusive_minimum=0.0, maximum=1.0),
        max_case_s=value("max_case_s", exclusive_minimum=0.0, maximum=MAX_CASE_TIME_S),
    )
