"""The hazard injector: a scenario's faults in one robot's control path, as a robot filter (kind ``hazards``).

``--filter physical=hazards:sudden_jump`` (or ``hazards:NAME@LIBRARY.yaml``) wraps the physical robot: in batch
around its backend, live in the ``hazard_injector`` node (the ``robot_proxy`` node started under that name), so
the controller's clean setpoints reach the robot corrupted inside the scenario's windows (a ``user_command`` or
``joint_command`` strike) or the robot's readings reach the controller and the monitor corrupted (``encoder``,
``tracker``). The other robot (the virtual twin, [Li et al. 2016]'s dynamic model run alongside) and the monitor's
record
of the setpoint keep the clean command: :meth:`HazardFilter.observe` reports the clean setpoint.

Every window's opening and closing is a :class:`~cosim_validation.robots.filters.robot_filter.FilterEvent`
(``fault_start``,
``fault_end``) at its case time. Random draws (noise, drops, probability triggers) come from streams seeded by
the case seed and the control cycle, so a case injects the same faults in every mode.
"""

from __future__ import annotations

import math

import numpy as np

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record.stage import Stage
from cosim_validation.hazards.fault_models import StreamHistory, WindowState, corrupt
from cosim_validation.hazards.fault_window import TRIGGER_STREAM, FaultWindow, WindowChange, case_stream
from cosim_validation.hazards.hazard_library import DEFAULT_LIBRARY, joint_selection, load_library, scenario_named
from cosim_validation.hazards.scenario import Scenario, Strike, TriggerKind
from cosim_validation.robots.filters.robot_filter import FilterEvent
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample


class HazardFilter:
    """Injects one :class:`Scenario` into a robot's commands or readings.

    Args:
        scenario: What, where, when.
        kinematics: The robot (joint names and limits: a corrupted command stays inside the joint range, as a
            robot's servo clamps it).
        library: The library file of the scenario, named by errors (a joint this robot does not have).
    """

    def __init__(self, scenario: Scenario, kinematics: Kinematics, library: str = DEFAULT_LIBRARY) -> None:
        self.scenario = scenario
        self._strike = scenario.strike
        if self._strike is Strike.TRACKER:
            fields = set(scenario.variables)
            self._index = {
                "position": np.arange(3 if fields & {"position", "all"} else 0),
                "orientation": np.arange(4 if fields & {"orientation", "all"} else 0),
            }
        else:
            self._index = {"joints": joint_selection(scenario, kinematics.joint_names, library)}
        self._q_lower, self._q_upper = kinematics.q_lower, kinematics.q_upper
        self._window = FaultWindow(scenario)
        depth = scenario.fault.delay_cycles + 2
        self._history = {key: StreamHistory(depth) for key in ("command", "joints", "position", "orientation")}
        self._opening: dict[str, np.ndarray] = {}
        self._last_out: dict[str, np.ndarray] = {}
        self._events: list[FilterEvent] = []
        self._seed = 0
        self._t_s = 0.0
        self._clean_setpoint = np.zeros(kinematics.n_joints)
        self._stage = Stage.NONE

    @property
    def name(self) -> str:
        """``hazards:<scenario>``."""
        return f"hazards:{self.scenario.name}"

    @property
    def needs_stage(self) -> bool:
        """Whether the windows depend on the setpoints' stages (a live proxy then waits for each stage)."""
        return self.scenario.trigger.kind is TriggerKind.STAGE

    def stage(self, stage: int) -> None:
        """The stage of the next setpoint to :meth:`command` (a ``Stage`` value).

        Args:
            stage: The stage of the setpoint, a ``Stage`` value.
        """
        self._stage = Stage(int(stage))

    def reset(self, q0: np.ndarray, case_seed: int) -> None:
        """A new case at rest at ``q0``: no window open, histories restart, streams from ``case_seed``.

        Args:
            q0: The joints at rest, shape (J,), in [rad] (or [m] for a prismatic joint).
            case_seed: The seed every random stream of the case restarts from.
        """
        self._seed = int(case_seed)
        self._window.reset(self._rng(TRIGGER_STREAM, 0))
        q0 = np.asarray(q0, dtype=np.float64)
        self._history["command"].clear(q0)
        self._history["joints"].clear(q0)
        self._history["position"].clear(np.full(3, math.nan))
        self._history["orientation"].clear(np.full(4, math.nan))
        self._opening.clear()
        self._last_out = {"command": q0.copy()}
        self._events.clear()
        self._t_s = 0.0
        self._clean_setpoint = q0.copy()
        self._stage = Stage.NONE

    def command(self, t_s: float, q_setpoint: np.ndarray) -> np.ndarray:
        """The joint vector the robot gets for the clean setpoint due at case time ``t_s``.

        Args:
            t_s: Case time at which the setpoint is due, in [s].
            q_setpoint: The clean setpoint, shape (J,), in [rad] (or [m] for a prismatic joint).

        Returns:
            The setpoint, corrupted while a command window is open and kept within the joint limits, shape (J,).
        """
        self._t_s = float(t_s)
        clean = np.asarray(q_setpoint, dtype=np.float64)
        self._clean_setpoint = clean.copy()
        change = self._window.step(self._t_s, self._stage)
        if change is not None:
            self._on_change(change)
        cycle = self._window.cycle
        self._history["command"].put(cycle, clean)
        out = clean
        if self._window.is_open and self._strike.on_command:
            out = self._corrupt("command", clean, self._index["joints"], lost=None)
            out = np.minimum(np.maximum(out, self._q_lower), self._q_upper)
        self._last_out["command"] = out
        return out

    def observe(self, sample: BackendSample) -> BackendSample:
        """The reading as the controller and the monitor get it (corrupted in an encoder or tracker window).

        Args:
            sample: The robot's clean reading after the last :meth:`command`: joints (J,) in [rad] (or [m] for a
                prismatic joint), tracked tip position (3,) in base_link [m] and orientation (4,) (w, x, y, z).
        """
        cycle = self._window.cycle
        clean = {
            "joints": sample.q_measured,
            "position": sample.actual_tip_pos_m,
            "orientation": sample.actual_tip_quat_wxyz,
        }
        for key, value in clean.items():
            self._history[key].put(cycle, value)
        out = dict(clean)
        if self._window.is_open and self._strike is Strike.ENCODER:
            out["joints"] = self._corrupt("joints", clean["joints"], self._index["joints"], lost=None)
        elif self._window.is_open and self._strike is Strike.TRACKER:
            for key in ("position", "orientation"):
                if len(self._index[key]):
                    out[key] = self._corrupt(key, clean[key], self._index[key], lost=math.nan)
        for key, value in out.items():
            self._last_out[key] = value
        return sample._replace(
            q_setpoint=self._clean_setpoint.copy(),
            q_measured=out["joints"],
            actual_tip_pos_m=out["position"],
            actual_tip_quat_wxyz=out["orientation"],
        )

    def events(self) -> list[FilterEvent]:
        """The windows opened and closed since the last call."""
        events, self._events = self._events, []
        return events

    def _on_change(self, change: WindowChange) -> None:
        kind = "fault_start" if change.opened else "fault_end"
        detail = f"window {change.number}: {self.scenario.summary()}"
        self._events.append(FilterEvent(change.t_s, kind, self.scenario.name, detail))
        if change.opened:
            cycle = self._window.cycle
            self._opening = {key: history.latest_before(cycle) for key, history in self._history.items()}

    def _corrupt(self, key: str, clean: np.ndarray, index: np.ndarray, *, lost: float | None) -> np.ndarray:
        cycle = self._window.cycle
        history = self._history[key]
        state = WindowState(
            opening=self._opening.get(key, clean),
            last_out=self._last_out.get(key, clean),
            cycles_in=cycle - self._window.opened_cycle,
            earlier=lambda n: history.at(cycle - n),
            rng=self._rng(0, cycle),
        )
        return corrupt(self.scenario.fault, clean, index, state, lost=lost)

    def _rng(self, stream: int, cycle: int) -> np.random.Generator:
        return case_stream(self.scenario.name, self._seed, stream, cycle)


def parse_options(options: str) -> tuple[str, str]:
    """``NAME`` or ``NAME@LIBRARY`` -> (scenario name, library path).

    Args:
        options: The filter's OPTIONS: a scenario name, optionally followed by ``@`` and a library file (default
            config/hazards.yaml).

    Raises:
        InputError: No scenario name.
    """
    name, _, library = options.partition("@")
    name = name.strip()
    if not name:
        raise InputError("hazards filter: name a scenario, e.g. physical=hazards:sudden_jump")
    return name, library.strip() or DEFAULT_LIBRARY


def make_hazard_filter(config: ConfigNode, options: str, kinematics: Kinematics) -> HazardFilter:
    """The ``hazards`` kind of :data:`cosim_validation.robots.filters.robot_filters.FILTER_KINDS`.

    Args:
        config: The case-study configuration (not used by this kind).
        options: ``NAME`` or ``NAME@LIBRARY``: the scenario and its library (default config/hazards.yaml).
        kinematics: The nominal arm and needle of the robot the filter wraps (joint names and limits).
    """
    name, library = parse_options(options)
    return HazardFilter(scenario_named(load_library(library), name, library), kinematics, library)
