"""A hazard scenario as data: what goes wrong, where in the control path, when and for how long ([Li et al. 2016]).

A scenario names the adverse event it reproduces ([Li et al. 2016], Table 1: the outcome, the unsafe control action and
the causal factor), the point of the control path it strikes, the variables it corrupts, the fault model and the
trigger of its injection windows. Scenarios are read from ``config/hazards.yaml``
(:mod:`~cosim_validation.hazards.hazard_library`) and injected by
:class:`~cosim_validation.hazards.hazard_filter.HazardFilter`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from cosim_validation.common.record import Stage


class Strike(Enum):
    """Where a fault strikes the control path.

    ``user_command``: the desired command as the controller sends it to this robot ([Li et al. 2016]'s network layer:
    the operator's command). ``joint_command``: the command to the robot's joints ([Li et al. 2016]'s motor commands,
    after the software's safety checks). For a joint-position interface both are the same vector, seen by the
    robot; they differ in what a scenario corrupts (the whole message or chosen joints). ``encoder``: the measured
    joints (the feedback the controller and the monitor get). ``tracker``: the external tracker's tip pose.
    """

    USER_COMMAND = "user_command"
    JOINT_COMMAND = "joint_command"
    ENCODER = "encoder"
    TRACKER = "tracker"

    @property
    def on_command(self) -> bool:
        """Whether the fault corrupts what the robot is commanded (else what is read from it)."""
        return self in (Strike.USER_COMMAND, Strike.JOINT_COMMAND)


class FaultModel(Enum):
    """How a corrupted variable's value is replaced inside a window (``value`` and friends in :class:`Fault`).

    ``drop``: the message is lost (each with ``probability``): the receiver keeps the last value it got (a
    tracker reports nothing: NaN). ``hold``: frozen at its value when the window opened. ``constant``: ``value``
    (with ``relative``: the value at the window's opening plus ``value``). ``offset``: plus ``value``. ``scale``:
    the motion since the window opened times ``value``. ``noise``: plus Gaussian noise of standard deviation
    ``value``. ``delay``: the value of ``delay_cycles`` cycles earlier. ``stuck``: an encoder frozen (as ``hold``).
    ``zero``: an encoder reading 0. ``out_of_order``: every other message overtaken by the next one, so the
    receiver applies an older value after a newer one. ``swap``: two joints exchanged (a wiring fault).
    """

    DROP = "drop"
    HOLD = "hold"
    CONSTANT = "constant"
    OFFSET = "offset"
    SCALE = "scale"
    NOISE = "noise"
    DELAY = "delay"
    STUCK = "stuck"
    ZERO = "zero"
    OUT_OF_ORDER = "out_of_order"
    SWAP = "swap"


#: Fault models that make sense on each strike point (the library refuses the others, naming the scenario).
MODELS_OF_STRIKE: dict[Strike, frozenset[FaultModel]] = {
    Strike.USER_COMMAND: frozenset(FaultModel) - {FaultModel.STUCK, FaultModel.ZERO},
    Strike.JOINT_COMMAND: frozenset(FaultModel) - {FaultModel.STUCK, FaultModel.ZERO},
    Strike.ENCODER: frozenset(FaultModel),
    Strike.TRACKER: frozenset(
        {FaultModel.DROP, FaultModel.HOLD, FaultModel.OFFSET, FaultModel.NOISE, FaultModel.DELAY}
    ),
}

#: The tracker's fields a scenario may name (its variables).
TRACKER_FIELDS: tuple[str, ...] = ("position", "orientation")


@dataclass(frozen=True)
class Fault:
    """A fault model with its parameters.

    Attributes:
        model: What replaces the value.
        value: ``constant`` / ``offset`` [rad, or m for a prismatic joint or a tracker position]; ``scale`` factor [-];
            ``noise`` standard deviation [rad | m].
        relative: ``constant`` only: ``value`` is added to the value at the window's opening.
        delay_cycles: ``delay`` only: how many control cycles late (>= 1).
        probability: ``drop`` only: chance each message in the window is lost (0 < p <= 1).
    """

    model: FaultModel
    value: float = 0.0
    relative: bool = False
    delay_cycles: int = 0
    probability: float = 1.0


class TriggerKind(Enum):
    """When windows open: at a case time, at a control cycle, periodically, at random, or when a stage starts."""

    TIME = "time"
    SAMPLE = "sample"
    PERIODIC = "periodic"
    PROBABILITY = "probability"
    STAGE = "stage"


@dataclass(frozen=True)
class Trigger:
    """When a scenario's windows open (case time: seconds since the case's first sample).

    Attributes:
        kind: Which rule.
        at_s: ``time``: the opening [s]; ``periodic``: the first opening [s].
        period_s: ``periodic``: time between openings [s].
        sample: ``sample``: the control cycle that opens the window (1 = the first setpoint after the start).
        probability: ``probability``: chance a window opens at each control cycle outside a window.
        stage: ``stage``: the window opens at the first setpoint of this stage and closes at the first setpoint
            of another stage or after ``duration_s``, whichever comes first (once per case).
    """

    kind: TriggerKind
    at_s: float = 0.0
    period_s: float = math.inf
    sample: int = 0
    probability: float = 0.0
    stage: Stage = Stage.NONE


@dataclass(frozen=True)
class Scenario:
    """One hazard scenario of the library.

    Attributes:
        name: Identifier (used in filters, tables and reports).
        outcome: The safety hazard, in [Li et al. 2016]'s Table 1 wording (e.g. "Unintended movement of robotic arms").
        unsafe_control_action: What the control system does wrong.
        causal_factor: The accidental failure that could cause it.
        strike: Where in the control path it strikes.
        variables: Joint names (command and encoder strikes) or tracker fields it corrupts, in the robot's order.
        fault: The fault model.
        trigger: When windows open.
        duration_s: How long each window lasts [s]; ``inf``: to the end of the case (permanent).
        description: Free text.
    """

    name: str
    outcome: str
    unsafe_control_action: str
    causal_factor: str
    strike: Strike
    variables: tuple[str, ...]
    fault: Fault
    trigger: Trigger
    duration_s: float
    description: str = ""

    @property
    def permanent(self) -> bool:
        """Whether a window, once open, lasts to the end of the case."""
        return math.isinf(self.duration_s)

    def summary(self) -> str:
        """One line: ``strike model on variables``."""
        return f"{self.strike.value} {self.fault.model.value} on {', '.join(self.variables)}"
