"""The hazard scenario library (``config/hazards.yaml``), read and checked like the rest of the configuration.

The file holds ``scenarios:``, a mapping name -> scenario (see :class:`~cosim_validation.hazards.scenario.Scenario`
for the meaning of each key)::

    scenarios:
      sudden_jump:
        outcome: Unintended movement of robotic arms (Sudden Jump)
        unsafe_control_action: A command far from the current position is sent to the motors
        causal_factor: Actuator failures
        strike: joint_command          # user_command | joint_command | encoder | tracker
        variables: [joint1]            # joint names, or tracker fields (position, orientation), or all
        fault: {model: constant, value: 0.05, relative: true}
        trigger: {kind: periodic, at_s: 8.0, period_s: 8.0}
        duration_s: 0.3                # .inf: to the end of the case

Joint names are checked against a robot when a scenario is bound to it (:func:`joint_selection`), since the
library does not know which robot it will strike. Every error names the file, the scenario and the key.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path

import numpy as np

from cosim_validation.common.config import ConfigNode, load_config
from cosim_validation.common.config.config_node import MAX_CASE_TIME_S, MAX_POINT_M
from cosim_validation.common.config.package_paths import resolve_resource
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record.stage import CASE_STAGES, Stage
from cosim_validation.hazards.scenario import (
    MODELS_OF_STRIKE,
    TRACKER_FIELDS,
    Fault,
    FaultModel,
    Scenario,
    Strike,
    Trigger,
    TriggerKind,
)

#: The library shipped with the package (relative to the package root or the current directory).
DEFAULT_LIBRARY = "config/hazards.yaml"

SCENARIO_KEYS = (
    "outcome",
    "unsafe_control_action",
    "causal_factor",
    "strike",
    "variables",
    "fault",
    "trigger",
    "duration_s",
    "description",
)
FAULT_KEYS = ("model", "value", "relative", "delay_cycles", "probability")
TRIGGER_KEYS = ("kind", "at_s", "period_s", "sample", "probability", "stage")
#: Tracker fault models that make sense on the orientation (a quaternion is not offset or noised per component).
ORIENTATION_MODELS = frozenset({FaultModel.DROP, FaultModel.HOLD, FaultModel.DELAY})


def load_library(path: str | Path = DEFAULT_LIBRARY) -> dict[str, Scenario]:
    """Every scenario of the library ``path``, by name, in file order.

    Args:
        path: The library file, relative to the current directory or to the package root.

    Raises:
        ConfigError: A missing or malformed key, naming the file, the scenario and the key.
    """
    root = load_config(resolve_resource(path))
    root.reject_unknown(("scenarios",))
    scenarios = root["scenarios"]
    if not scenarios.keys():
        raise scenarios.error("expected at least one scenario")
    return {name: parse_scenario(name, node) for name, node in scenarios.items()}


def parse_scenario(name: str, node: ConfigNode) -> Scenario:
    """One scenario from its mapping ``node``.

    Args:
        name: The scenario's name (its key under ``scenarios``).
        node: The scenario's mapping (keys in :data:`SCENARIO_KEYS`).
    """
    node.reject_unknown(SCENARIO_KEYS)
    strike = Strike(node["strike"].to_str(choices=[s.value for s in Strike]))
    fault = _fault(node["fault"], strike)
    variables = _variables(node["variables"], strike, fault)
    trigger = _trigger(node["trigger"])
    duration_s = _duration(node["duration_s"])
    if trigger.kind is TriggerKind.PERIODIC and duration_s >= trigger.period_s:
        raise node["duration_s"].error(
            f"windows overlap: duration_s {duration_s} s is not shorter than trigger.period_s {trigger.period_s} s"
        )
    text = {key: node[key].to_str() for key in ("outcome", "unsafe_control_action", "causal_factor")}
    description = node["description"].to_str() if node.get("description") is not None else ""
    return Scenario(
        name,
        strike=strike,
        variables=variables,
        fault=fault,
        trigger=trigger,
        duration_s=duration_s,
        description=description,
        **text,
    )


def _duration(node: ConfigNode) -> float:
    """A window length [s] > 0, or ``.inf`` (permanent)."""
    if isinstance(node.value, float) and math.isinf(node.value) and node.value > 0:
        return math.inf
    return node.to_float(exclusive_minimum=0.0, maximum=MAX_CASE_TIME_S)


#: The largest magnitude of a fault's value (rad, m, or a factor)
MAX_FAULT_VALUE = 1e3
#: The largest displacement of a joint by a fault (offset, constant, noise): one turn [rad; m for a prismatic joint,
#: far beyond any surgical arm's travel]. A larger one is no fault of a joint but a typing error (1000 rad was taken
#: and only the servo's clamp stopped it)
MAX_JOINT_SHIFT = 2.0 * math.pi
#: The largest magnitude of a scale fault's factor: a gain error of ten times is already no arm's calibration fault
MAX_SCALE = 10.0
#: The shortest period of a periodic trigger: one cycle of the 1 kHz servo loop [s]
MIN_PERIOD_S = 1e-3


def _fault(node: ConfigNode, strike: Strike) -> Fault:
    node.reject_unknown(FAULT_KEYS)
    model = FaultModel(node["model"].to_str(choices=[m.value for m in FaultModel]))
    if model not in MODELS_OF_STRIKE[strike]:
        allowed = ", ".join(sorted(m.value for m in MODELS_OF_STRIKE[strike]))
        raise node["model"].error(f"{model.value!r} does not apply to a {strike.value} strike; expected: {allowed}")
    _refuse_unused(node, _FAULT_KEYS_OF.get(model, ()), f"fault model {model.value!r}")
    # at most 1000 (rad, m, or a factor): a fault of 1e300 rad was taken and ran
    value = (
        node["value"].to_float(minimum=-MAX_FAULT_VALUE, maximum=MAX_FAULT_VALUE)
        if node.get("value") is not None
        else 0.0
    )
    if "value" in _FAULT_KEYS_OF.get(model, ()) and not node.has("value"):
        raise node.error(f"fault model {model.value!r} needs a value")
    if strike is Strike.TRACKER and model in _SHIFTS and abs(value) > MAX_POINT_M:  # 1000 m was taken and ran
        raise node["value"].error(
            f"a tracker fault moves the measured tip by at most {MAX_POINT_M:g} m (a configured point's bound), "
            f"got {value:g}"
        )
    if strike is not Strike.TRACKER and model in _SHIFTS and abs(value) > MAX_JOINT_SHIFT:  # 1000 rad was taken
        raise node["value"].error(
            f"a joint fault moves a joint by at most one turn ({MAX_JOINT_SHIFT:.4g} rad, or m for a prismatic "
            f"joint), got {value:g}"
        )
    if model is FaultModel.SCALE and abs(value) > MAX_SCALE:  # 1000 moved an encoder's reading by 3.7 turns
        raise node["value"].error(f"a scale fault multiplies by at most {MAX_SCALE:g} in magnitude, got {value:g}")
    if model is FaultModel.NOISE and value <= 0.0:
        raise node["value"].error(f"noise standard deviation must be > 0, got {value}")
    # at most 10 s of the 1 kHz servo cycle: a longer delay is no fault of a running arm but a stopped one
    delay = node["delay_cycles"].to_int(minimum=1, maximum=10_000) if node.get("delay_cycles") is not None else 0
    if model is FaultModel.DELAY and delay < 1:
        raise node.error("fault model 'delay' needs delay_cycles >= 1")
    probability = 1.0
    if node.get("probability") is not None:
        probability = node["probability"].to_float(minimum=0.0, maximum=1.0)
        if probability <= 0.0:
            raise node["probability"].error("expected 0 < probability <= 1")
    relative = node["relative"].to_bool() if node.get("relative") is not None else False
    return Fault(model, value, relative, delay, probability)


#: the fault models whose value is a displacement of the variable (for the tracker: metres, or radians of rotation)
_SHIFTS = (FaultModel.OFFSET, FaultModel.CONSTANT, FaultModel.NOISE)


#: the keys of a fault besides ``model`` that each model reads (a key another model reads was taken and ignored:
#: an offset with a probability always applied)
_FAULT_KEYS_OF: dict[FaultModel, tuple[str, ...]] = {
    FaultModel.DROP: ("probability",),
    FaultModel.CONSTANT: ("value", "relative"),
    FaultModel.OFFSET: ("value",),
    FaultModel.SCALE: ("value",),
    FaultModel.NOISE: ("value",),
    FaultModel.DELAY: ("delay_cycles",),
}


def _refuse_unused(node: ConfigNode, used: tuple[str, ...], what: str) -> None:
    """An error naming a key of ``node`` that ``what`` does not read (besides ``model`` and ``kind``)."""
    for key, _ in node.items():
        if key not in ("model", "kind", *used):
            reads = ", ".join(used) if used else "nothing more"
            raise node[key].error(f"{what} does not use {key} (it reads {reads}); remove it")


def _variables(node: ConfigNode, strike: Strike, fault: Fault) -> tuple[str, ...]:
    if node.value == "all":
        names: tuple[str, ...] = ("all",)
    else:
        names = tuple(child.to_str() for child in node.elements())
    if not names:
        raise node.error("expected at least one variable (joint names, tracker fields, or all)")
    if len(set(names)) != len(names):
        raise node.error(f"a variable is named twice: {list(names)}")
    if strike is Strike.TRACKER and names != ("all",):
        unknown = [n for n in names if n not in TRACKER_FIELDS]
        if unknown:
            raise node.error(f"unknown tracker field {unknown[0]!r}; expected: {', '.join(TRACKER_FIELDS)} or all")
    orientation = strike is Strike.TRACKER and ("orientation" in names or names == ("all",))
    if orientation and fault.model not in ORIENTATION_MODELS:
        raise node.error(f"fault model {fault.model.value!r} does not apply to the tracker orientation")
    if fault.model is FaultModel.SWAP and len(names) != 2:
        raise node.error(f"fault model 'swap' exchanges exactly two joints, got {list(names)}")
    return names


def _trigger(node: ConfigNode) -> Trigger:
    node.reject_unknown(TRIGGER_KEYS)
    kind = TriggerKind(node["kind"].to_str(choices=[k.value for k in TriggerKind]))
    needs = {
        TriggerKind.TIME: ("at_s",),
        TriggerKind.PERIODIC: ("at_s", "period_s"),
        TriggerKind.SAMPLE: ("sample",),
        TriggerKind.PROBABILITY: ("probability",),
        TriggerKind.STAGE: ("stage",),
    }[kind]
    _refuse_unused(node, needs, f"trigger kind {kind.value!r}")
    for key in needs:
        if node.get(key) is None:
            raise node.error(f"trigger kind {kind.value!r} needs {key}")
    # times within a case (at most an hour); a period of at least one servo cycle (1e-300 s was taken)
    at_s = node["at_s"].to_float(minimum=0.0, maximum=MAX_CASE_TIME_S) if node.get("at_s") is not None else 0.0
    period_s = (
        node["period_s"].to_float(minimum=MIN_PERIOD_S, maximum=MAX_CASE_TIME_S)
        if node.get("period_s") is not None
        else math.inf
    )
    # a sample within a case: an hour at the highest sampling rate (1 kHz); 10**23 was taken, a trigger never met
    max_sample = round(MAX_CASE_TIME_S / MIN_PERIOD_S)
    sample = node["sample"].to_int(minimum=1, maximum=max_sample) if node.get("sample") is not None else 0
    probability = 0.0
    if node.get("probability") is not None:
        probability = node["probability"].to_float(minimum=0.0, maximum=1.0)
        if probability <= 0.0:
            raise node["probability"].error("expected 0 < probability <= 1")
    stage = Stage.NONE
    if node.get("stage") is not None:
        stage = Stage.parse(node["stage"].to_str(choices=[s.label for s in CASE_STAGES]))
    return Trigger(kind, at_s, period_s, sample, probability, stage)


def joint_selection(scenario: Scenario, joint_names: tuple[str, ...], library: str = DEFAULT_LIBRARY) -> np.ndarray:
    """The indices of the joints ``scenario`` corrupts on a robot with ``joint_names`` (in the scenario's order).

    Args:
        scenario: A scenario on joints: its ``variables`` are joint names, or ``all``.
        joint_names: The robot's joint names, in joint order.
        library: The library file the scenario comes from, for the error message.

    Raises:
        InputError: A joint the robot does not have (the message names the file, the key and lists the joints).
    """
    if scenario.variables == ("all",):
        return np.arange(len(joint_names))
    unknown = [(i, n) for i, n in enumerate(scenario.variables) if n not in joint_names]
    if unknown:
        index, name = unknown[0]
        raise InputError(
            f"{library}: scenarios.{scenario.name}.variables[{index}]: this robot has no joint {name!r}; "
            f"joints: {', '.join(joint_names)}"
        )
    return np.array([joint_names.index(n) for n in scenario.variables], dtype=np.intp)


def scenario_named(library: dict[str, Scenario], name: str, source: str) -> Scenario:
    """``library[name]``, or an error listing the scenarios of ``source``.

    Args:
        library: Scenarios by name (:func:`load_library`).
        name: The scenario's name.
        source: The library file, for the error message.
    """
    if name not in library:
        raise InputError(f"{source}: unknown hazard scenario {name!r}; scenarios: {', '.join(library)}")
    return library[name]


def case_warnings(
    scenario: Scenario, case_duration_s: float, period_s: float, stages: Collection[int] | None = None
) -> list[str]:
    """Why ``scenario`` may not do what it says in a case of ``case_duration_s`` [s] at a ``period_s`` [s] cycle.

    A trigger that never fires in the case (a stage trigger: its stage is not among ``stages``, the stages of the
    case's setpoints after the first; not judged when None), or a window longer than the case.

    Args:
        scenario: The fault scenario.
        case_duration_s: The case's duration in [s].
        period_s: The control cycle's period in [s].
        stages: The stages (``Stage`` values) of the case's setpoints after the first; None: not known.
    """
    trigger = scenario.trigger
    warnings = []
    if trigger.kind is TriggerKind.STAGE:
        if stages is not None and int(trigger.stage) not in {int(s) for s in stages}:
            warnings.append(
                f"hazard scenario {scenario.name!r}: trigger.stage: the case has no {trigger.stage.label} "
                "setpoint: it never fires"
            )
    else:
        first_s = {
            TriggerKind.TIME: trigger.at_s,
            TriggerKind.PERIODIC: trigger.at_s,
            TriggerKind.SAMPLE: trigger.sample * period_s,
            TriggerKind.PROBABILITY: 0.0,
        }[trigger.kind]
        if first_s >= case_duration_s:
            warnings.append(
                f"hazard scenario {scenario.name!r}: trigger: first window at {first_s:.3g} s, "
                f"after the end of the case ({case_duration_s:.3g} s): it never fires"
            )
    if not scenario.permanent and scenario.duration_s > case_duration_s:
        warnings.append(
            f"hazard scenario {scenario.name!r}: duration_s: {scenario.duration_s:.3g} s is longer than the case "
            f"({case_duration_s:.3g} s)"
        )
    return warnings
