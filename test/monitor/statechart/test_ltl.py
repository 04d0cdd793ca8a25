"""LTL goals: the grammar, the goals file checked against the machine, rendering, evaluation on lassos."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.monitor.statechart.counterexample import Trace, TraceStep
from cosim_validation.monitor.statechart.errors import ExpressionError, MachineError
from cosim_validation.monitor.statechart.goals import load_goals
from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.monitor.statechart.ltl import Atom, Infix, Prefix, parse_ltl, render
from cosim_validation.monitor.statechart.ltl_eval import violates
from cosim_validation.monitor.statechart.model import Machine
from test.monitor.statechart.machines import write

SHIPPED = "config/supervisor/needle_insertion.yaml"


@pytest.fixture(scope="module")
def machine() -> Machine:
    return load_machine(SHIPPED)


def test_grammar() -> None:
    f = parse_ltl("G (event(e) -> (not flag(motion) W in(A.B))) and F fired")
    assert isinstance(f, Infix)
    assert f.op == "and"
    g = f.left
    assert isinstance(g, Prefix)
    assert g.op == "G"
    imp = g.operand
    assert isinstance(imp, Infix)
    assert imp.op == "->"
    assert imp.left == Atom("event", "e")
    assert isinstance(imp.right, Infix)
    assert imp.right.op == "W"
    assert imp.right.right == Atom("in", "A.B")
    assert parse_ltl("p U q U r", {"p": Atom("fired"), "q": Atom("fired"), "r": Atom("fired")}) == Infix(
        "U", Atom("fired"), Infix("U", Atom("fired"), Atom("fired"))
    )


def test_rendering_for_spin_and_smv() -> None:
    f = parse_ltl("G (event(e) -> (in(S) W fired)) and X not fired R fired")
    text = {"event": "ev_e", "in": "in_S", "fired": "p_fired"}

    def atom(a: Atom) -> str:
        return text[a.predicate]

    spin = render(f, atom, "promela")
    smv = render(f, atom, "smv")
    assert "[] (" in spin
    assert "((in_S) U (p_fired) || [] (in_S))" in spin
    assert " V " in spin
    assert "&&" in spin
    assert "G (" in smv
    assert "((in_S) U (p_fired) | G (in_S))" in smv
    assert " V " in smv
    assert "&" in smv


@pytest.mark.parametrize(
    ("goal", "message"),
    [
        ('"G event(e_Flood)"', r"goals\.g\.ltl: unknown event 'e_Flood' in 'G event\(e_Flood\)'; events of machine"),
        ('"G in(Nowhere)"', r"goals\.g\.ltl: unknown state 'Nowhere'"),
        ('"G command(fly)"', r"goals\.g\.ltl: unknown command 'fly'"),
        (
            '"G flag(sparkly)"',
            r"goals\.g\.ltl: unknown flag 'sparkly'.*flags of machine 'needle_insertion': hold, motion",
        ),
        ('"G (fired ->"', r"goals\.g\.ltl: expected an atom.*at column 12"),
        ('"G speed"', r"goals\.g\.ltl: unknown name 'speed'; atoms and definitions"),
    ],
)
def test_bad_goals_name_the_file_and_key(tmp_path: Path, machine: Machine, goal: str, message: str) -> None:
    path = write(tmp_path, f"goals:\n  g: {{ltl: {goal}}}\n", "goals.yaml")
    with pytest.raises(MachineError, match=message) as info:
        load_goals(path, machine)
    assert str(path) in str(info.value)


def test_bad_goal_files(tmp_path: Path, machine: Machine) -> None:
    cases = {
        "goals:\n  g: {ltl: 'G fired', assuming: [fair]}\n": r"goals\.g\.assuming\[0\]: unknown assumption 'fair'",
        "goals:\n  g: {ltl: 'G fired', promela: '[] p_fired'}\n": r"goals\.g: give either 'ltl'",
        "goals:\n  G: {ltl: 'G fired'}\n": r"goals\.G: 'G' is not a usable name",
        "goals: {}\n": r"goals: expected at least one goal",
    }
    for text, message in cases.items():
        with pytest.raises(MachineError, match=message):
            load_goals(write(tmp_path, text, "goals.yaml"), machine)


def test_shipped_goals_load_with_definitions_and_assumptions(machine: Machine) -> None:
    goals = load_goals(machine.goals_file, machine)
    assert goals.names() == [
        "motion_stops_on_exception",
        "stopped_left_only_by_recovery_or_teleoperation",
        "no_autonomous_motion_in_teleoperation",
        "every_task_ends",
    ]
    live = goals.goals[-1]
    assert live.assuming == ("progress",)
    assert isinstance(live.formula, Infix)
    assert live.formula.op == "->"
    with pytest.raises(ExpressionError):
        parse_ltl("G F")


def steps(*events: tuple[str, ...], guards: dict[str, bool] | None = None) -> tuple[TraceStep, ...]:
    return tuple(TraceStep(e, guards or {}) for e in events)


def test_evaluation_on_lassos_of_the_runtime(machine: Machine) -> None:
    goals = {g.name: g.formula for g in load_goals(machine.goals_file, machine).goals}
    nominal = steps(
        ("e_TaskConfigured",),
        ("e_SourceReached",),
        ("e_EntryReached",),
        ("e_TargetReached",),
        ("e_DwellFinished",),
        ("e_EntryRegained",),
        ("e_ResetDone",),
    )
    done = Trace("needle_insertion", nominal)  # finite: extended by an idle step repeated forever
    for name, formula in goals.items():
        assert violates(machine, formula, done) is False, name  # type: ignore[arg-type]
    # a run that stays in MoveToSource forever violates the liveness goal only without the assumption ...
    stuck = Trace("needle_insertion", steps(("e_TaskConfigured",), ()), cycle_start=1)
    assert violates(machine, goals["every_task_ends"], stuck) is False  # type: ignore[arg-type]
    bare = goals["every_task_ends"]
    assert isinstance(bare, Infix)
    assert violates(machine, bare.right, stuck) is True
    # ... and a stop resumed by recovery keeps motion_stops_on_exception
    recovered = steps(
        ("e_TaskConfigured",), ("e_FRTooClose",), ("e_TaskRecovered",), guards={"exception_cleared": True}
    )
    assert violates(machine, goals["motion_stops_on_exception"], Trace("needle_insertion", recovered)) is False
