"""A supervisor scenario: scripted user requests, injected sensor faults and a teleoperation script.

What a surgeon and a faulty sensor would do, written down so a case runs the same way in a campaign and in
a session (the control loop applies it at every supervisor step, in batch and live alike)::

    scenario:
      teleoperation: teleoperation_example.yaml     # optional; in TeleoperationMode the robot follows it
      actions:
        - {when: {state: Approach, after_s: 0.3}, fault: clearance, for_s: 0.3}
        - {when: {state: TaskStopped, after_s: 0.5}, request: recover, times: 5}
        - {cases: [case-7], when: {t_s: 2.0}, request: abort}

An action fires when its condition first holds: ``state`` (a leaf's name, a dotted path, or an enclosing
state) active for at least ``after_s`` seconds, or the case time reaching ``t_s``. ``times`` bounds how
often it fires per case (default 1); a state action fires again only after its state was left and entered
again. ``request`` is a user request (abort, recover, teleoperation, auto); ``fault`` overrides what the
supervisor's sources measure for ``for_s`` seconds (default: to the end of the case): ``clearance`` (the
needle-to-forbidden-region distance reads ``value``, default 0 m), ``force`` (the holder force reads
``value``, default 10 N), ``tracking`` (no tip pose), ``alarm`` (an external alarm from source ``scenario``).
A fault or request fired at a step is seen by the next step, as a measurement of that period would be.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.common.config.config_node import MAX_CASE_TIME_S, MAX_CLEARANCE_M, MAX_FORCE_N
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.supervisor.supervisor_config import REQUESTS

FAULTS = ("clearance", "force", "tracking", "alarm")
_DEFAULT_VALUE = {"clearance": 0.0, "force": 10.0, "tracking": math.nan, "alarm": math.nan}


@dataclass(frozen=True)
class ScenarioAction:
    """One scripted action.

    Attributes:
        state: Fire while this state is active (name, dotted path or enclosing state); "" for a time action.
        after_s: ... for at least this long [s] (state actions).
        t_s: Fire once the case time reaches this [s] (time actions); NaN for state actions.
        request: A user request, or "".
        fault: A fault kind (``clearance``, ``force``, ``tracking``, ``alarm``), or "".
        value: The faulty reading (m for clearance, N for force).
        for_s: How long the fault lasts [s] (inf: to the end of the case).
        times: How often it may fire per case.
        cases: Test ids it applies to (empty: every case).
    """

    state: str
    after_s: float
    t_s: float
    request: str
    fault: str
    value: float
    for_s: float
    times: int
    cases: tuple[str, ...]


class ActiveFault(NamedTuple):
    """A fault in force: its kind, reading and end [s of case time]."""

    kind: str
    value: float
    until_s: float


@dataclass(frozen=True)
class Scenario:
    """The actions and the teleoperation script of a scenario file.

    Attributes:
        actions: In file order.
        teleoperation_path: The teleoperation script, or None (live: follow the teleoperation topics).
        source: The file, for messages.
    """

    actions: tuple[ScenarioAction, ...]
    teleoperation_path: Path | None
    source: str

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        """Read the ``scenario`` section of ``path`` (errors name the file and the key).

        Args:
            path: A YAML file with a ``scenario`` section.
        """
        node = load_config(path)["scenario"]
        node.reject_unknown(("teleoperation", "actions"))
        script = node.get("teleoperation")
        actions = node.get("actions")
        parsed = tuple(_action(a) for a in actions.elements()) if actions is not None else ()
        return cls(parsed, script.to_path() if script is not None else None, str(path))

    def check_against(self, machine: Machine) -> None:
        """Raise :class:`ConfigError` if an action waits for a state ``machine`` does not have (it would never fire).

        Args:
            machine: The supervisor's machine.
        """
        for i, action in enumerate(self.actions):
            if action.state and not _has_state(machine, action.state):
                raise ConfigError(
                    self.source,
                    f"scenario.actions[{i}].when.state",
                    f"machine {machine.name!r} has no state {action.state!r} (a name or a dotted path)",
                )

    def unknown_cases(self, test_ids: set[str]) -> list[str]:
        """One line per action that names a case outside ``test_ids``: it never fires in such a run.

        Args:
            test_ids: The test ids of the run's suites.
        """
        return [
            f"{self.source}: scenario.actions[{i}].cases names {case!r}, which no suite of this run has: it never fires"
            for i, action in enumerate(self.actions)
            for case in action.cases
            if case not in test_ids
        ]

    def runner(self, test_id: str) -> ScenarioRunner:
        """The scenario for one case.

        Args:
            test_id: The case's test id: the actions whose ``cases`` are empty or name it apply.
        """
        return ScenarioRunner([a for a in self.actions if not a.cases or test_id in a.cases])


def _action(node: ConfigNode) -> ScenarioAction:
    node.reject_unknown(("when", "request", "fault", "value", "for_s", "times", "cases"))
    when = node["when"]
    when.reject_unknown(("state", "after_s", "t_s"))
    if when.has("state") == when.has("t_s"):
        raise when.error("give either state (with after_s) or t_s")
    if node.has("request") == node.has("fault"):
        raise node.error("give either a request or a fault")
    fault = node["fault"].to_str(choices=FAULTS) if node.has("fault") else ""
    for_s = node.get("for_s")
    return ScenarioAction(
        state=when["state"].to_str() if when.has("state") else "",
        after_s=when["after_s"].to_float(minimum=0.0, maximum=MAX_CASE_TIME_S) if when.has("after_s") else 0.0,
        t_s=when["t_s"].to_float(minimum=0.0, maximum=MAX_CASE_TIME_S) if when.has("t_s") else math.nan,
        request=node["request"].to_str(choices=REQUESTS) if node.has("request") else "",
        fault=fault,
        value=_fault_value(node, fault),
        for_s=for_s.to_float(exclusive_minimum=0.0, maximum=MAX_CASE_TIME_S) if for_s is not None else math.inf,
        times=node["times"].to_int(minimum=1) if node.has("times") else 1,
        cases=tuple(c.to_str() for c in node["cases"].elements()) if node.has("cases") else (),
    )


#: The readings a fault may script, by fault: a clearance within a metre either side of the region's surface, a
#: holder force up to MAX_FORCE_N (1e308 N was taken); tracking and alarm take no value.
_VALUE_RANGE = {"clearance": (-MAX_CLEARANCE_M, MAX_CLEARANCE_M), "force": (0.0, MAX_FORCE_N)}


def _fault_value(node: ConfigNode, fault: str) -> float:
    value = node.get("value")
    if value is None:
        return _DEFAULT_VALUE.get(fault, math.nan)
    if fault not in _VALUE_RANGE:
        what = f"a {fault} fault" if fault else "a request"
        raise value.error(f"{what} takes no value (values: clearance [m], force [N])")
    low, high = _VALUE_RANGE[fault]
    return value.to_float(minimum=low, maximum=high)


def state_matches(name: str, leaf: str) -> bool:
    """Whether ``name`` (a state's name or dotted path) is the active ``leaf`` or encloses it.

    Args:
        name: A state's name, a dotted path, or an enclosing state's name (a scenario action's ``state``).
        leaf: The active leaf state, as a dotted path.
    """
    return leaf == name or leaf.startswith(name + ".") or name in leaf.split(".")


class ScenarioRunner:
    """A scenario's actions over one case, fed the supervisor's state after every step.

    Args:
        actions: The actions that apply to the case.
    """

    def __init__(self, actions: list[ScenarioAction]) -> None:
        self.actions = actions
        self._fired = [0] * len(actions)
        self._since: list[float | None] = [None] * len(actions)  # when the action's state became active
        self._armed = [True] * len(actions)
        self.faults: list[ActiveFault] = []

    def update(self, t_s: float, state: str) -> tuple[list[str], list[ActiveFault]]:
        """After the step at case time ``t_s`` [s] left ``state`` active: the requests and faults that fire now.

        Args:
            t_s: Case time of the step [s].
            state: The active leaf after the step (dotted path).
        """
        requests: list[str] = []
        new_faults: list[ActiveFault] = []
        for i, action in enumerate(self.actions):
            if self._fired[i] >= action.times or not self._due(i, action, t_s, state):
                continue
            self._fired[i] += 1
            self._armed[i] = False
            if action.request:
                requests.append(action.request)
            else:
                new_faults.append(ActiveFault(action.fault, action.value, t_s + action.for_s))
        self.faults += new_faults
        return requests, new_faults

    def _due(self, i: int, action: ScenarioAction, t_s: float, state: str) -> bool:
        if not action.state:
            return t_s >= action.t_s - 1e-9
        if not state_matches(action.state, state):
            self._since[i], self._armed[i] = None, True
            return False
        since = self._since[i]
        if since is None:
            since = self._since[i] = t_s
        return self._armed[i] and t_s - since >= action.after_s - 1e-9

    def active(self, t_s: float) -> dict[str, float]:
        """The faults in force at case time ``t_s`` [s]: kind -> faulty reading (the latest fired wins).

        Args:
            t_s: Case time [s]; the faults that ended by then are dropped.
        """
        self.faults = [f for f in self.faults if f.until_s > t_s + 1e-9]
        return {f.kind: f.value for f in self.faults}


def _has_state(machine: Machine, name: str) -> bool:
    """Whether ``name`` is a state of ``machine``: its dotted path or its name (what :func:`state_matches` matches)."""
    return name in machine.states or any(state.name == name for state in machine.states.values())
