"""SPIN on the supervisor: every goal of the shipped machine holds; every deliberately broken variant
(test/supervisor/broken) violates its goal, and the runtime machine reproduces SPIN's counterexample state
for state and violates the goal by an evaluation independent of SPIN."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cosim_validation.monitor.statechart.checker import CheckReport, check_goals
from cosim_validation.monitor.statechart.counterexample import load_trace
from cosim_validation.monitor.statechart.errors import MachineError, ModelCheckError
from cosim_validation.monitor.statechart.goals import load_goals
from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.monitor.statechart.replay import replay_trace
from test.monitor.statechart.machines import write

SHIPPED = Path("config/supervisor/needle_insertion.yaml")
BROKEN = Path(__file__).parent / "broken"

#: broken variant -> the goal it must violate (docs in each file's header)
VARIANTS = {
    "inner_first": "motion_stops_on_exception",
    "ignores_force_limit": "motion_stops_on_exception",
    "auto_request_resumes": "stopped_left_only_by_recovery_or_teleoperation",
    "teleoperation_retracts": "no_autonomous_motion_in_teleoperation",
    "unbounded_reinsertion": "every_task_ends",
}


def check(path: Path, out: Path, only: tuple[str, ...] = ()) -> CheckReport:
    machine = load_machine(path)
    return check_goals(machine, load_goals(machine.goals_file, machine), out, only)


def test_every_goal_of_the_shipped_machine_holds(tmp_path: Path) -> None:
    report = check(SHIPPED, tmp_path)
    assert [r.goal for r in report.results] == [
        "motion_stops_on_exception",
        "stopped_left_only_by_recovery_or_teleoperation",
        "no_autonomous_motion_in_teleoperation",
        "every_task_ends",
    ]
    assert report.all_hold
    assert not report.violations
    assert all(r.states > 100 and r.transitions > r.states for r in report.results)  # a real search happened
    assert report.files["promela"].is_file()
    assert report.files["smv"].is_file()


def test_the_broken_variants_cover_every_goal() -> None:
    machine = load_machine(SHIPPED)
    assert set(VARIANTS.values()) == set(load_goals(machine.goals_file, machine).names())
    assert {p.stem for p in BROKEN.glob("*.yaml")} == set(VARIANTS)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_counterexamples_of_broken_variants_are_reproduced_by_the_runtime(tmp_path: Path, variant: str) -> None:
    goal = VARIANTS[variant]
    path = BROKEN / f"{variant}.yaml"
    report = check(path, tmp_path, (goal,))
    (result,) = report.results
    assert not result.holds
    assert result.trace is not None
    violation = report.violations[goal]
    assert violation.replay.reproduced, violation.replay.mismatches  # state for state, transition for transition
    assert violation.replay.states[1:] == tuple(s.state for s in violation.spin.steps)
    assert violation.confirmed is True  # the runtime's run violates the goal (ltl_eval, not SPIN)
    assert violation.shortest is not None
    assert len(violation.shortest.steps) <= len(violation.spin.steps)
    machine = load_machine(path)
    for key in (f"spin:{goal}", f"trace:{goal}"):  # both written trace files replay to their states
        assert replay_trace(machine, load_trace(report.files[key])).reproduced
    if goal == "every_task_ends":
        assert violation.spin.cycle_start is not None
        assert violation.replay.cycle_closes


def test_the_same_trace_passes_on_the_shipped_machine(tmp_path: Path) -> None:
    """The inner-first counterexample is harmless under rFSM's outer-first rule: the exception wins."""
    report = check(BROKEN / "inner_first.yaml", tmp_path, ("motion_stops_on_exception",))
    shown = report.violations["motion_stops_on_exception"].shown
    shipped = replay_trace(load_machine(SHIPPED), shown)
    assert shipped.mismatches  # different states ...
    assert "AutonomousMode.TaskStopped" in shipped.states[-2:]  # ... the robot stays stopped


def test_a_goal_spin_cannot_parse_names_the_goals_file_and_key(tmp_path: Path) -> None:
    goals = write(
        tmp_path, "goals:\n  fine: {ltl: 'G fired -> F fired'}\n  bad: {promela: '[] (p_fired &&'}\n", "g.yaml"
    )
    machine = load_machine(SHIPPED)
    with pytest.raises(MachineError, match=r"g\.yaml: goals\.bad\.promela: SPIN cannot parse the formula") as info:
        check_goals(machine, load_goals(goals, machine), tmp_path / "out")
    assert "fine" not in str(info.value)


@pytest.mark.parametrize(
    ("ltl", "holds"),
    [
        # the first state of a run is the configuration after the initial entry: Configure, its command sent;
        # with the model's leaf 0 there, the first two held and the last three were "no initial state" errors
        ("not in(AutonomousMode.InsertionTask.Configure)", False),
        ("not command(configure_case)", False),
        ("in(AutonomousMode.InsertionTask.Configure)", True),
        ("entered(AutonomousMode.InsertionTask.Configure)", True),
        ("in(Completed)", False),
        ("false", False),
    ],
)
def test_a_goal_is_judged_first_in_the_configuration_after_the_initial_entry(
    ltl: str, holds: bool, tmp_path: Path
) -> None:
    goals = write(tmp_path, f"goals:\n  first: {{ltl: '{ltl}'}}\n", "g.yaml")
    machine = load_machine(SHIPPED)
    report = check_goals(machine, load_goals(goals, machine), tmp_path / "out")
    assert report.all_hold is holds
    if not holds:  # a counterexample of no step: the initial configuration alone, replayed by the runtime
        shown = report.violations["first"].shown
        assert shown.initial == "AutonomousMode.InsertionTask.Configure"
        assert replay_trace(machine, shown).states[0] == "AutonomousMode.InsertionTask.Configure"


def test_a_raw_spin_goal_is_checked(tmp_path: Path) -> None:
    goals = write(tmp_path, "goals:\n  raw: {promela: '[] (ev_e_ForceLimit -> !flag_motion)'}\n", "g.yaml")
    raw = (tmp_path / "g.yaml").read_text().replace("!flag_motion", "!cmd_run_approach")
    goals.write_text(raw)
    machine = load_machine(SHIPPED)
    report = check_goals(machine, load_goals(goals, machine), tmp_path / "out")
    assert report.all_hold


def test_machines_the_translation_cannot_represent(tmp_path: Path) -> None:
    text = """
machine: counter
variables: {n: 0}
events: {tick: ""}
initial: A
states: {A: {entry: ["n = n + 1"]}}
transitions: [{source: A, target: A, events: [tick]}]
"""
    machine = load_machine(write(tmp_path, text))
    goals = load_goals(write(tmp_path, "goals:\n  g: {ltl: 'G in(A)'}\n", "g.yaml"), machine)
    with pytest.raises(MachineError, match="variables: machines with variables cannot be model-checked"):
        check_goals(machine, goals, tmp_path / "out")
    timed = (
        text.replace("variables: {n: 0}\n", "")
        .replace('entry: ["n = n + 1"]', "")
        .replace("events: [tick]}", "after_s: 1.0}")
    )
    machine = load_machine(write(tmp_path, timed, "timed.yaml"))
    with pytest.raises(MachineError, match=r"transitions\[0\]\.after_s: timed transitions cannot be model-checked"):
        check_goals(machine, load_goals(tmp_path / "g.yaml", machine), tmp_path / "out")


def test_missing_spin_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ModelCheckError, match=r"'spin' not found.*Debian packages spin and gcc"):
        check(SHIPPED, tmp_path / "out")


def test_the_smv_model_has_the_step_relation_and_every_goal(tmp_path: Path) -> None:
    report = check(SHIPPED, tmp_path, ("no_autonomous_motion_in_teleoperation",))
    smv = report.files["smv"].read_text()
    assert smv.count("LTLSPEC NAME ") == 4
    assert "next(fired) := case" in smv
    assert "next(leaf) := case" in smv
    assert "next(hist_AutonomousMode__InsertionTask) := case" in smv
    first_case = smv.split("next(fired) := case")[1].splitlines()[1]
    assert "-- AutonomousMode -> AutonomousMode.TaskStopped" in first_case  # outer, priority 2: tried first


def test_the_reduced_encoding_gives_the_plain_encodings_verdicts(tmp_path: Path) -> None:
    """Watched events, groups of interchangeable events and relevance only shrink the search."""
    text = """
machine: small
events: {go: "", back: "", stop: "", other: ""}
guards: {ready: {input: true}}
commands: {run: "", halt: ""}
initial: A
states:
  A: {entry: [halt]}
  B: {entry: [run]}
  C: {entry: [halt]}
transitions:
  - {source: A, target: B, events: [go, other], guard: ready}
  - {source: B, target: A, events: [back]}
  - {source: B, target: C, events: [stop], priority: 1}
  - {source: C, target: A, events: [back, other]}
"""
    goals = """
goals:
  stop_wins: {ltl: "G ((left(B) and event(stop)) -> (in(C) and command(halt)))"}
  go_moves: {ltl: "G (event(go) -> in(B))"}
  back_from_c: {ltl: "G (left(C) -> event(back))"}
"""
    machine = load_machine(write(tmp_path, text))
    goal_set = load_goals(write(tmp_path, goals, "g.yaml"), machine)
    reduced = check_goals(machine, goal_set, tmp_path / "reduced")
    plain = check_goals(machine, goal_set, tmp_path / "plain", reduce=False)
    assert [r.holds for r in reduced.results] == [r.holds for r in plain.results] == [True, False, False]
    assert sum(r.transitions for r in reduced.results) < sum(r.transitions for r in plain.results)
    for name, violation in reduced.violations.items():
        assert violation.replay.reproduced, name
        assert violation.confirmed, name


def test_a_model_checked_again_reuses_its_compiled_verifier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same machine and goals checked again run no compiler and get the same search; another machine compiles
    its own verifier and gets its own verdict (the key tells the models apart)."""
    from cosim_validation.monitor.statechart import spin

    monkeypatch.setenv("COSIM_CACHE_DIR", str(tmp_path / "cache"))
    tools: list[str] = []
    run = spin._run

    def counted(cmd: list[str], cwd: Path, timeout_s: float) -> Any:
        tools.append(Path(cmd[0]).name)
        return run(cmd, cwd, timeout_s)

    monkeypatch.setattr(spin, "_run", counted)
    goal = ("every_task_ends",)
    first = check(SHIPPED, tmp_path / "first", goal)
    assert tools.count("gcc") == 1
    again = check(SHIPPED, tmp_path / "again", goal)
    assert tools.count("gcc") == 1
    assert (tmp_path / "again" / "pan").is_file()
    searched = [[(r.goal, r.holds, r.states, r.transitions) for r in report.results] for report in (first, again)]
    assert searched[0] == searched[1]
    assert first.all_hold
    broken = check(BROKEN / "unbounded_reinsertion.yaml", tmp_path / "broken", goal)
    assert tools.count("gcc") == 2
    assert not broken.all_hold
    entries = sorted((tmp_path / "cache").glob("spin-pan-*.npz"))
    assert len(entries) == 2
    for entry in entries:  # damaged entries (cut short): compiled again, the same search
        entry.write_bytes(entry.read_bytes()[:1000])
    damaged = check(SHIPPED, tmp_path / "damaged", goal)
    assert tools.count("gcc") == 3
    assert [(r.goal, r.holds, r.states, r.transitions) for r in damaged.results] == searched[0]
