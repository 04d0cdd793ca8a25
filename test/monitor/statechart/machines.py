"""Small machine files for the state-machine tests, written to a temporary folder."""

from __future__ import annotations

from pathlib import Path

from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.monitor.statechart.model import Machine

#: Two levels: Outer holds A (holding A1, A2) and B; Stop at the top. Used by the semantics tests.
NESTED = """
machine: nested
events: {go: "", next: "", halt: "", resume: "", tick: ""}
commands: {enter_outer: "", exit_outer: "", enter_a: "", exit_a: "", enter_a1: "", exit_a1: "", enter_a2: "",
           enter_b: "", enter_stop: "", effect: ""}
guards: {ok: {input: true}}
initial: Outer
states:
  Outer:
    initial: A
    entry: [enter_outer]
    exit: [exit_outer]
    states:
      A:
        initial: A1
        entry: [enter_a]
        exit: [exit_a]
        states:
          A1: {entry: [enter_a1], exit: [exit_a1]}
          A2: {entry: [enter_a2]}
      B: {entry: [enter_b]}
  Stop: {entry: [enter_stop]}
transitions:
  - {source: A1, target: A2, events: [next]}
  - {source: A2, target: B, events: [go]}
  - {source: A1, target: B, events: [halt]}            # inner source: wins under inner_first
  - {source: Outer, target: Stop, events: [halt]}      # outer source: wins under outer_first (rFSM)
  - {source: B, target: A, events: [resume], resume: true, actions: [effect]}
  - {source: Stop, target: Outer, events: [resume], guard: ok, resume: true}
  - {source: A2, target: A1, events: [tick], priority: 1}
  - {source: A2, target: Stop, events: [tick]}
"""


def write(tmp_path: Path, text: str, name: str = "machine.yaml") -> Path:
    """Write ``text`` as a machine file and return its path."""
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def nested(tmp_path: Path) -> Machine:
    """The :data:`NESTED` machine, loaded."""
    return load_machine(write(tmp_path, NESTED))
