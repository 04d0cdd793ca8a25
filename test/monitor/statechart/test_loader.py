"""Machine files: what loads, and every malformed machine rejected with its file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.common.exceptions import ConfigError
from cosim_validation.monitor.statechart.errors import MachineError
from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.monitor.statechart.model import ROOT
from test.monitor.statechart.machines import NESTED, nested, write

BASE = """
machine: base
events: {go: "", back: ""}
commands: {beep: ""}
guards: {ready: {input: true}}
initial: A
states:
  A: {entry: [beep]}
  B: {}
transitions:
  - {source: A, target: B, events: [go], guard: ready}
  - {source: B, target: A, events: [back]}
"""


def test_the_nested_machine_loads_with_paths_and_expanded_wildcards(tmp_path: Path) -> None:
    machine = nested(tmp_path)
    assert machine.leaves() == ("Outer.A.A1", "Outer.A.A2", "Outer.B", "Stop")
    assert machine.default_leaf(ROOT) == "Outer.A.A1"
    assert machine.lineage("Outer.A.A2") == ("Outer", "Outer.A", "Outer.A.A2")
    assert machine.states["Outer.A"].initial == "Outer.A.A1"
    text = NESTED.replace(
        "  - {source: A2, target: Stop, events: [tick]}", "  - {source: 'A.*', target: Stop, events: [tick]}"
    )
    wild = load_machine(write(tmp_path, text, "wild.yaml"))
    expanded = [t for t in wild.transitions if t.target == "Stop" and t.events == ("tick",)]
    assert [t.source for t in expanded] == ["Outer.A.A1", "Outer.A.A2"]
    assert len({t.index for t in expanded}) == 1


def test_the_shipped_supervisor_machine_loads() -> None:
    machine = load_machine("config/supervisor/needle_insertion.yaml")
    assert machine.default_leaf(ROOT) == "AutonomousMode.InsertionTask.Configure"
    assert len(machine.leaves()) == 10
    assert machine.states["Completed"].final
    assert Path(machine.goals_file).name == "needle_insertion.goals.yaml"


T0, T1 = r"transitions\[0\]", r"transitions\[1\]"
BAD = [
    ("unknown target", ("target: B, events: [go]", "target: C, events: [go]"), T0 + r"\.target: unknown state 'C'"),
    ("unknown event", ("events: [back]", "events: [bakc]"), T1 + r"\.events\[0\]: unknown event 'bakc'; events: go"),
    ("unknown guard", ("guard: ready", "guard: redy"), T0 + r"\.guard: unknown name 'redy'"),
    ("bad guard", ("guard: ready", "guard: 'ready and'"), T0 + r"\.guard: expected a value"),
    ("unknown command", ("entry: [beep]", "entry: [boop]"), r"states\.A\.entry\[0\]: unknown command 'boop'"),
    ("unreachable state", ("  B: {}\n", "  B: {}\n  C: {}\n"), r"states\.C: state 'C' is unreachable"),
    ("trap state", ("  - {source: B, target: A, events: [back]}\n", ""), r"states\.B: trap state 'B'"),
    ("missing initial", ("initial: A\n", ""), r"initial: missing: which child is entered first \(children: A, B\)"),
    ("initial not a child", ("initial: A\n", "initial: Z\n"), r"initial: 'Z' is not a child; children: A, B"),
    ("unknown key", ("  B: {}\n", "  B: {entyr: [beep]}\n"), r"states\.B\.entyr: unknown key"),
    ("final source", ("  B: {}\n", "  B: {final: true}\n"), T1 + r"\.source: 'B' is final"),
    ("resume into a leaf", ("events: [back]}", "events: [back], resume: true}"), T1 + r"\.resume: resume needs"),
    ("bad state name", ("  B: {}\n", "  B: {}\n  'C.D': {}\n"), r"states\.C\.D: a state name is letters"),
    ("negative delay", ("events: [back]}", "events: [back], after_s: -1}"), T1 + r"\.after_s: expected a number >= 0"),
    # YAML's boolean: the state was then "missing" under the name 'True'
    (
        "state named true",
        ("  B: {}\n", "  B: {}\n  true: {}\n"),
        r"states\.True: expected a name, got True \(YAML reads",
    ),
    (
        "delay past any case",
        ("events: [back]}", "events: [back], after_s: 1.0e+300}"),
        T1 + r"\.after_s: expected a number <= 3600",
    ),
    (
        "delay as text",
        ("events: [back]}", "events: [back], after_s: 1e300}"),
        T1 + r"\.after_s: expected seconds or a numeric parameter, got '1e300' \(YAML reads 1e300 as text",
    ),
    (
        "priority past any use",
        ("events: [back]}", "events: [back], priority: 100000000000000000000000000}"),
        T1 + r"\.priority: expected an integer <= 1000000",
    ),
]


@pytest.mark.parametrize(("what", "edit", "message"), BAD, ids=[b[0] for b in BAD])
def test_malformed_machines_name_the_file_and_key(
    tmp_path: Path, what: str, edit: tuple[str, str], message: str
) -> None:
    assert edit[0] in BASE, what
    path = write(tmp_path, BASE.replace(edit[0], edit[1], 1))
    with pytest.raises(ConfigError, match=message) as info:
        load_machine(path)
    assert str(path) in str(info.value)


def test_ambiguous_state_names_need_a_path(tmp_path: Path) -> None:
    text = """
machine: twins
events: {e: ""}
initial: P
states:
  P: {initial: X, states: {X: {}}}
  Q: {initial: X, states: {X: {}}}
transitions: [{source: P, target: X, events: [e]}]
"""
    with pytest.raises(
        MachineError, match=r"transitions\[0\]\.target: state name 'X' is ambiguous; give the path: P\.X, Q\.X"
    ):
        load_machine(write(tmp_path, text))


SHIPPED = "config/behaviours/no_retraction_during_injection.yaml"


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # found when the first case ran: every completed case then stored as failed (exit 0)
        (
            ("speed_tolerance_m_s: 0.001", "speed_tolerance_m_s: -1.0e+300"),
            r"guards\.stopped: fuzzy tolerance -1e\+300 in 'insertion_speed_m_s ~ speed_tolerance_m_s == 0'; "
            "expected a number >= 0",
        ),
        # never true: the machine said violated on every run
        (
            ("'stage == \"injection\"'", "'stage == \"injektion\"'"),
            r"guards\.injection_starts: stage == 'injektion': no stage is called so; stages: none, initialization",
        ),
        (("'stage != \"injection\"'", "'\"Injection\" != stage'"), r"guards\.injection_over: stage != 'Injection'"),
    ],
)
def test_guards_that_fail_or_never_hold_are_refused_when_the_machine_loads(
    tmp_path: Path, edit: tuple[str, str], message: str
) -> None:
    text = Path(SHIPPED).read_text()
    assert edit[0] in text
    path = write(tmp_path, text.replace(edit[0], edit[1], 1))
    with pytest.raises(ConfigError, match=message):
        load_machine(path)
    load_machine(SHIPPED)  # as shipped: loads


def test_files_that_are_not_machines(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_machine(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError, match="invalid YAML"):
        load_machine(write(tmp_path, "machine: [unclosed\n"))
    with pytest.raises(ConfigError, match="key 'A' given twice"):
        load_machine(write(tmp_path, BASE.replace("  B: {}\n", "  B: {}\n  A: {}\n")))
    with pytest.raises(ConfigError, match=r"states: missing required key"):
        load_machine(write(tmp_path, "machine: empty\n"))


def test_parameter_overrides(tmp_path: Path) -> None:
    text = BASE + "parameters: {limit: 3.0}\n"
    machine = load_machine(write(tmp_path, text), {"limit": 5.0})
    assert machine.parameters["limit"] == 5.0
    with pytest.raises(MachineError, match="no parameter 'limt' to override; parameters: limit"):
        load_machine(write(tmp_path, text), {"limt": 5.0})
