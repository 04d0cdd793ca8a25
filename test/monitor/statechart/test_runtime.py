"""rFSM's execution semantics on the runtime: event lifetime, structural priority, one transition per step,
exits and entries through the least common ancestor, deep history, guards and timers."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.monitor.statechart.loader import load_machine
from cosim_validation.monitor.statechart.model import INNER_FIRST, OUTER_FIRST
from cosim_validation.monitor.statechart.runtime import Statechart
from test.monitor.statechart.machines import nested, write


def started(tmp_path: Path, scheme: str = OUTER_FIRST) -> Statechart:
    chart = Statechart(nested(tmp_path).with_priority(scheme))
    chart.start(0.0)
    return chart


def test_initial_entry_runs_entry_actions_outermost_first(tmp_path: Path) -> None:
    chart = Statechart(nested(tmp_path))
    first = chart.start(0.0)
    assert first.after == "Outer.A.A1"
    assert first.entered == ("Outer", "Outer.A", "Outer.A.A1")
    assert first.commands == ("enter_outer", "enter_a", "enter_a1")
    assert chart.active == ("Outer", "Outer.A", "Outer.A.A1")


def test_events_since_the_last_step_are_seen_by_one_step_then_dropped(tmp_path: Path) -> None:
    chart = started(tmp_path)
    chart.post("go")  # not enabled in A1: dropped by the step, not kept for A2
    assert chart.step(1.0).transition is None
    chart.post("next")
    assert chart.step(2.0).after == "Outer.A.A2"
    assert chart.step(3.0).transition is None  # 'go' was not remembered
    chart.post("next", "go")  # both events visible to the same step
    result = chart.step(4.0)
    assert result.events == frozenset({"next", "go"})
    assert result.after == "Outer.B"


def test_at_most_one_transition_per_step(tmp_path: Path) -> None:
    chart = started(tmp_path)
    result = chart.step(1.0, events=["next", "go"])  # A1 -next-> A2 -go-> B would be two transitions
    assert result.after == "Outer.A.A2"
    assert chart.step(2.0).after == "Outer.A.A2"


def test_outer_first_versus_inner_first(tmp_path: Path) -> None:
    """The same machine and events: rFSM takes the outer state's transition, UML the inner one's."""
    rfsm = started(tmp_path, OUTER_FIRST).step(1.0, events=["halt"])
    uml = started(tmp_path, INNER_FIRST).step(1.0, events=["halt"])
    assert rfsm.transition is not None
    assert rfsm.transition.source == "Outer"
    assert rfsm.after == "Stop"
    assert uml.transition is not None
    assert uml.transition.source == "Outer.A.A1"
    assert uml.after == "Outer.B"


def test_priority_numbers_order_transitions_of_one_source(tmp_path: Path) -> None:
    chart = started(tmp_path)
    chart.step(1.0, events=["next"])
    assert chart.step(2.0, events=["tick"]).after == "Outer.A.A1"  # priority 1 beats the one declared first


def test_exits_and_entries_go_through_the_least_common_ancestor(tmp_path: Path) -> None:
    chart = started(tmp_path)
    result = chart.step(1.0, events=["halt"])  # Outer -> Stop, from the active leaf A1
    assert result.exited == ("Outer.A.A1", "Outer.A", "Outer")
    assert result.entered == ("Stop",)
    assert result.commands == ("exit_a1", "exit_a", "exit_outer", "enter_stop")


def test_a_transition_into_a_substate_of_its_source_reenters_the_source(tmp_path: Path) -> None:
    """rFSM's LCA is always a proper ancestor of the source, so P -> P.Y exits P and enters it again."""
    text = """
machine: reenter
events: {e: ""}
commands: {enter_p: "", exit_p: ""}
initial: P
states:
  P: {initial: X, entry: [enter_p], exit: [exit_p], states: {X: {}, Y: {}}}
transitions: [{source: P, target: Y, events: [e]}]
"""
    chart = Statechart(load_machine(write(tmp_path, text)))
    chart.start(0.0)
    result = chart.step(1.0, events=["e"])
    assert result.exited == ("P.X", "P")
    assert result.entered == ("P", "P.Y")
    assert result.commands == ("exit_p", "enter_p")
    again = chart.step(2.0, events=["e"])  # from P.Y: a transition to the active state re-enters it
    assert again.exited == ("P.Y", "P")
    assert again.after == "P.Y"


def test_sibling_transition_stays_below_the_common_parent(tmp_path: Path) -> None:
    chart = started(tmp_path)
    chart.step(1.0, events=["next"])
    result = chart.step(2.0, events=["tick"])  # A2 -> A1: the LCA is A
    assert result.exited == ("Outer.A.A2",)
    assert result.entered == ("Outer.A.A1",)


def test_resume_enters_the_remembered_leaf_and_actions_run_between_exit_and_entry(tmp_path: Path) -> None:
    chart = started(tmp_path)
    chart.step(1.0, events=["next"])  # A2
    chart.step(2.0, events=["go"])  # B: A remembers A2
    result = chart.step(3.0, events=["resume"])
    assert result.after == "Outer.A.A2"
    assert result.commands == ("effect", "enter_a", "enter_a2")


def test_resume_without_memory_enters_the_initial_states(tmp_path: Path) -> None:
    chart = started(tmp_path)
    chart.step(1.0, events=["halt"])  # Stop; Outer remembers A1
    assert chart.step(2.0, env={"ok": False}, events=["resume"]).transition is None  # guard false
    assert chart.step(3.0, env={"ok": True}, events=["resume"]).after == "Outer.A.A1"


def test_timed_transitions_fire_after_the_source_was_active_long_enough(tmp_path: Path) -> None:
    text = """
machine: timer
parameters: {wait_s: 2.0}
initial: Idle
states: {Idle: {}, Done: {final: true}}
transitions: [{source: Idle, target: Done, after_s: wait_s}]
"""
    chart = Statechart(load_machine(write(tmp_path, text)))
    chart.start(10.0)
    assert chart.step(11.9).transition is None
    assert chart.step(12.0).after == "Done"


def test_bad_use_of_the_runtime(tmp_path: Path) -> None:
    chart = Statechart(nested(tmp_path))
    with pytest.raises(InputError, match="start"):
        chart.step(1.0)
    chart.start(5.0)
    with pytest.raises(InputError, match="no event 'jump'; events: go, next"):
        chart.post("jump")
    with pytest.raises(InputError, match="before the last step"):
        chart.step(4.0)
    with pytest.raises(InputError, match="already started"):
        chart.start(6.0)


def test_flags_and_attributes_of_the_active_states() -> None:
    machine = load_machine("config/supervisor/needle_insertion.yaml")
    chart = Statechart(machine)
    chart.start(0.0)
    chart.step(1.0, events=["e_TaskConfigured"])
    assert chart.flags() == {"motion"}
    assert chart.attribute("stage") == "initialization"
    chart.step(2.0, events=["e_ForceLimit", "e_SourceReached"])  # the exception wins over the step's own event
    assert chart.leaf == "AutonomousMode.TaskStopped"
    assert chart.flags() == {"hold", "stopped"}
    assert chart.attribute("stage") is None
