"""The scenario library: the shipped scenarios load, and every bad scenario is refused naming file, scenario, key."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.common.record import Stage
from cosim_validation.hazards.hazard_library import case_warnings, joint_selection, load_library
from cosim_validation.hazards.scenario import FaultModel, Scenario, Strike, TriggerKind
from cosim_validation.robots.model import Kinematics

GOOD = """
scenarios:
  jump:
    outcome: Unintended movement of robotic arms (Sudden Jump)
    unsafe_control_action: a big step
    causal_factor: Actuator failures
    strike: joint_command
    variables: [joint1]
    fault: {model: constant, value: 0.05, relative: true}
    trigger: {kind: periodic, at_s: 8.0, period_s: 8.0}
    duration_s: 0.3
"""


def test_the_shipped_library_has_seed_003s_three_and_at_least_five_more(library: dict[str, Scenario]) -> None:
    assert {"temporarily_unavailable", "permanently_unavailable", "sudden_jump"} <= set(library)
    assert len(library) >= 8
    jump = library["sudden_jump"]
    assert (jump.strike, jump.variables, jump.fault.model) == (Strike.JOINT_COMMAND, ("joint1",), FaultModel.CONSTANT)
    assert (jump.trigger.kind, jump.trigger.at_s, jump.trigger.period_s, jump.duration_s) == (
        TriggerKind.PERIODIC,
        8.0,
        8.0,
        0.3,
    )
    assert library["permanently_unavailable"].permanent
    assert library["permanently_unavailable"].strike is Strike.ENCODER
    assert library["temporarily_unavailable"].outcome.startswith("System temporarily unavailable")


def test_every_shipped_scenario_binds_to_the_robot(library: dict[str, Scenario], kinematics: Kinematics) -> None:
    for scenario in library.values():
        if scenario.strike is not Strike.TRACKER:
            assert len(joint_selection(scenario, kinematics.joint_names)) >= 1


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "hazards.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("old", "new", "key", "message"),
    [
        ("strike: joint_command", "strike: motor", "scenarios.jump.strike", "expected one of"),
        ("model: constant", "model: stuck", "scenarios.jump.fault.model", "does not apply to a joint_command strike"),
        ("duration_s: 0.3", "duration_s: 8.0", "scenarios.jump.duration_s", "windows overlap"),
        ("duration_s: 0.3", "duration_s: -1", "scenarios.jump.duration_s", "expected a number > 0"),
        (
            "{kind: periodic, at_s: 8.0, period_s: 8.0}",
            "{kind: periodic, at_s: 8.0}",
            "scenarios.jump.trigger",
            "needs period_s",
        ),
        ("variables: [joint1]", "variables: []", "scenarios.jump.variables", "at least one variable"),
        ("variables: [joint1]", "variables: [joint1, joint1]", "scenarios.jump.variables", "named twice"),
        ("model: constant, value: 0.05, relative: true", "model: swap", "scenarios.jump.variables", "exactly two"),
        ("    duration_s: 0.3", "    duration_s: 0.3\n    colour: red", "scenarios.jump", "colour"),
        ("value: 0.05, relative: true", "relative: true", "scenarios.jump.fault", "needs a value"),
        (
            "kind: periodic, at_s: 8.0, period_s: 8.0",
            "kind: stage, stage: insertion",
            "scenarios.jump.trigger.stage",
            "expected one of 'initialization', 'approach', 'injection', 'extraction', 'reset', got 'insertion'",
        ),
        ("kind: periodic, at_s: 8.0, period_s: 8.0", "kind: stage", "scenarios.jump.trigger", "needs stage"),
        # a joint moved by more than a turn is a typing error (1000 rad was taken; only the servo's clamp stopped it)
        ("value: 0.05", "value: 1000", "scenarios.jump.fault.value", r"at most one turn \(6.283 rad.*got 1000"),
        ("value: 0.05", "value: -7.0", "scenarios.jump.fault.value", "at most one turn"),
        # and a scale of 1000 moved an encoder's reading by 3.7 turns
        (
            "model: constant, value: 0.05, relative: true",
            "model: scale, value: -1000.0",
            "scenarios.jump.fault.value",
            "a scale fault multiplies by at most 10 in magnitude, got -1000",
        ),
        # times within a case, a period of at least a servo cycle (1e-300 s was taken)
        ("period_s: 8.0", "period_s: 1.0e-300", "scenarios.jump.trigger.period_s", "expected a number >= 0.001"),
        ("at_s: 8.0", "at_s: 1.0e+9", "scenarios.jump.trigger.at_s", "expected a number <= 3600"),
        ("duration_s: 0.3", "duration_s: 1.0e+9", "scenarios.jump.duration_s", "expected a number <= 3600"),
        # a key the model or trigger does not read was taken and ignored (an offset with a probability always applied)
        (
            "relative: true}",
            "relative: true, probability: 0.1}",
            "scenarios.jump.fault.probability",
            "fault model 'constant' does not use probability \\(it reads value, relative\\)",
        ),
        (
            "kind: periodic, at_s: 8.0, period_s: 8.0",
            "kind: time, at_s: 8.0, period_s: 8.0",
            "scenarios.jump.trigger.period_s",
            "trigger kind 'time' does not use period_s",
        ),
    ],
)
def test_a_bad_scenario_names_the_file_the_scenario_and_the_key(
    tmp_path: Path, old: str, new: str, key: str, message: str
) -> None:
    assert old in GOOD
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(ConfigError, match=message) as error:
        load_library(path)
    assert key in str(error.value)
    assert str(path) in str(error.value)


def test_tracker_fields_and_orientation_models_are_checked(tmp_path: Path) -> None:
    tracker = GOOD.replace("strike: joint_command", "strike: tracker").replace(
        "value: 0.05, relative: true", "value: 1"
    )
    with pytest.raises(ConfigError, match="unknown tracker field 'joint1'"):
        load_library(_write(tmp_path, tracker.replace("constant", "offset")))
    far = tracker.replace("constant", "offset").replace("[joint1]", "[position]").replace("value: 1", "value: 1000")
    with pytest.raises(ConfigError, match=r"moves the measured tip by at most 10 m .*, got 1000"):  # it was taken
        load_library(_write(tmp_path, far))
    orientation = tracker.replace("constant", "noise").replace("[joint1]", "[orientation]")
    with pytest.raises(ConfigError, match="'noise' does not apply to the tracker orientation"):
        load_library(_write(tmp_path, orientation))


def test_an_unknown_joint_is_named_when_bound_to_a_robot(tmp_path: Path, kinematics: Kinematics) -> None:
    path = _write(tmp_path, GOOD.replace("[joint1]", "[joint1, shoulder]"))
    scenario = load_library(path)["jump"]
    with pytest.raises(
        InputError,
        match=r"hazards\.yaml: scenarios\.jump\.variables\[1\]: this robot has no joint 'shoulder'; joints: joint1",
    ):
        joint_selection(scenario, kinematics.joint_names, str(path))


def test_a_trigger_after_the_case_and_a_window_longer_than_the_case_are_warned(tmp_path: Path) -> None:
    scenario = load_library(_write(tmp_path, GOOD))["jump"]
    assert case_warnings(scenario, 20.0, 0.1) == []
    (late,) = case_warnings(scenario, 5.0, 0.1)
    assert "'jump'" in late
    assert "never fires" in late
    long = load_library(_write(tmp_path, GOOD.replace("period_s: 8.0", "period_s: 80.0").replace("0.3", "30.0")))
    assert any("longer than the case" in w for w in case_warnings(long["jump"], 20.0, 0.1))
    assert math.isinf(load_library()["permanently_unavailable"].duration_s)


def test_a_stage_trigger_whose_stage_the_case_never_reaches_is_warned(tmp_path: Path) -> None:
    text = GOOD.replace("kind: periodic, at_s: 8.0, period_s: 8.0", "kind: stage, stage: injection")
    scenario = load_library(_write(tmp_path, text))["jump"]
    assert case_warnings(scenario, 20.0, 0.1, {int(Stage.APPROACH), int(Stage.INJECTION)}) == []
    (never,) = case_warnings(scenario, 20.0, 0.1, {int(Stage.INITIALIZATION), int(Stage.APPROACH)})
    assert never == "hazard scenario 'jump': trigger.stage: the case has no injection setpoint: it never fires"
