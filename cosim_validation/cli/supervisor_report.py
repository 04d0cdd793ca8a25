"""Text and JSON output of ``cosim supervisor``."""

from __future__ import annotations

import subprocess
from typing import Any

from cosim_validation.cli.output import format_table
from cosim_validation.monitor.statechart.checker import CheckReport
from cosim_validation.monitor.statechart.counterexample import Trace
from cosim_validation.monitor.statechart.model import ROOT, Machine
from cosim_validation.monitor.statechart.replay import Replay
from cosim_validation.monitor.statechart.semantics import global_order


def spin_version() -> str:
    """The first line of ``spin -V`` ("" if it cannot be run)."""
    try:
        out = subprocess.run(["spin", "-V"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return out.strip().splitlines()[0] if out.strip() else ""


def check_summary(report: CheckReport) -> dict[str, Any]:
    """Everything ``check`` prints, as JSON-ready data.

    Args:
        report: The outcome of :func:`~cosim_validation.monitor.statechart.checker.check_goals`.
    """
    goals = []
    for result in report.results:
        item: dict[str, Any] = {
            "goal": result.goal,
            "holds": result.holds,
            "states": result.states,
            "transitions": result.transitions,
            "time_s": round(result.time_s, 3),
        }
        violation = report.violations.get(result.goal)
        if violation is not None:
            item |= {
                "spin_steps": len(violation.spin.steps),
                "spin_reproduced_state_for_state": violation.replay.reproduced,
                "runtime_violates_goal": violation.confirmed,
                "counterexample": violation.shown.to_dict(),
                "trace_file": str(report.files[f"trace:{result.goal}"]),
                "spin_trace_file": str(report.files[f"spin:{result.goal}"]),
            }
        goals.append(item)
    return {
        "machine": report.machine.name,
        "machine_file": report.machine.source,
        "priority": report.machine.priority,
        "goals_file": report.goals.source,
        "spin": spin_version(),
        "all_hold": report.all_hold,
        "compile_s": round(report.compile_s, 3),
        "total_s": round(report.total_s, 3),
        "goals": goals,
        "files": {k: str(v) for k, v in report.files.items() if ":" not in k},
    }


def print_check(report: CheckReport) -> None:
    """The verdict table, then every counterexample.

    Args:
        report: The outcome of :func:`~cosim_validation.monitor.statechart.checker.check_goals`.
    """
    m = report.machine
    print(f"machine {m.name} ({m.source}), priority {m.priority}; goals {report.goals.source}; {spin_version()}")
    rows = [
        (r.goal, "holds" if r.holds else "VIOLATED", r.states, r.transitions, f"{r.time_s:.2f}") for r in report.results
    ]
    print(format_table(["goal", "verdict", "states", "transitions", "search s"], rows))
    for name, violation in report.violations.items():
        print(f"\n{name}: VIOLATED")
        shown = violation.shown
        origin = (
            f"shortened from SPIN's {len(violation.spin.steps)} steps"
            if violation.shortest
            else f"SPIN's, {len(violation.spin.steps)} steps"
        )
        print(f"counterexample ({origin}):")
        print(_trace_table(shown))
        print(
            f"SPIN's counterexample replayed on the runtime machine: "
            f"{'same states and transitions' if violation.replay.reproduced else 'DIFFERENT'}; "
            f"the runtime's run violates the goal: {_yes(violation.confirmed)}"
        )
        print(f"replay: cosim supervisor replay {m.source} {report.files[f'trace:{name}']}")
    held = sum(r.holds for r in report.results)
    print(
        f"\n{held} of {len(report.results)} goals hold (translation and compilation {report.compile_s:.1f} s, "
        f"total {report.total_s:.1f} s); Promela {report.files['promela']}, SMV {report.files['smv']}"
    )


def _yes(value: bool | None) -> str:
    return {True: "yes", False: "NO", None: "not evaluated"}[value]


def _trace_table(trace: Trace) -> str:
    rows = [("0", "(initial entry)", "", trace.initial)]
    for i, step in enumerate(trace.steps, start=1):
        guards = " ".join(f"{g}={'true' if v else 'false'}" for g, v in step.guards.items())
        mark = "  (cycle starts)" if trace.cycle_start is not None and i - 1 == trace.cycle_start else ""
        rows.append((str(i), " ".join(step.events) or "-", guards, step.state + mark))
    text = format_table(["step", "events", "input guards", "state after"], rows)
    if trace.cycle_start is not None:
        text += f"\nsteps {trace.cycle_start + 1}..{len(trace.steps)} repeat forever"
    return text


def replay_summary(machine: Machine, trace: Trace, replay: Replay) -> dict[str, Any]:
    """``replay`` as JSON-ready data.

    Args:
        machine: The runtime machine the trace was replayed on.
        trace: The trace replayed (a counterexample written by ``check``, or hand-written).
        replay: What :func:`~cosim_validation.monitor.statechart.replay.replay_trace` made of ``trace`` on
            ``machine``.
    """
    steps = [
        {
            "events": list(step.events),
            "guards": dict(step.guards),
            "state": seen.leaf,
            "transition": seen.transition,
            "expected": step.state,
        }
        for step, seen in zip(trace.steps, replay.positions[1:], strict=True)
    ]
    return {
        "machine": machine.name,
        "priority": machine.priority,
        "initial": replay.positions[0].leaf,
        "steps": steps,
        "mismatches": list(replay.mismatches),
        "cycle_closes": replay.cycle_closes,
        "reproduced": replay.reproduced,
    }


def print_replay(machine: Machine, trace: Trace, replay: Replay) -> None:
    """The runtime's state after every step, beside the trace's expectation.

    Args:
        machine: The runtime machine the trace was replayed on.
        trace: The trace replayed (a counterexample written by ``check``, or hand-written).
        replay: What :func:`~cosim_validation.monitor.statechart.replay.replay_trace` made of ``trace`` on
            ``machine``.
    """
    rows = [("0", "(initial entry)", replay.positions[0].leaf, trace.initial or "-")]
    for i, (step, seen) in enumerate(zip(trace.steps, replay.positions[1:], strict=True), start=1):
        mark = "  <- differs" if i - 1 in replay.mismatches else ""
        rows.append((str(i), " ".join(step.events) or "-", seen.leaf, (step.state or "-") + mark))
    print(f"machine {machine.name} ({machine.source}), priority {machine.priority}")
    print(format_table(["step", "events", "runtime state", "expected state"], rows))
    if replay.cycle_closes is not None:
        first = (trace.cycle_start or 0) + 1
        closes = "closes: the run repeats forever" if replay.cycle_closes else "does NOT close"
        print(f"the cycle from step {first} {closes}")
    named = any(s.state for s in trace.steps) or trace.initial
    verdict = "same states as the trace" if replay.reproduced else "DIFFERENT from the trace"
    print(verdict if named else "the trace names no states to compare")


def machine_summary(machine: Machine) -> dict[str, Any]:
    """The machine as JSON-ready data.

    Args:
        machine: The state machine, as loaded (from its file, or the copy a run kept).
    """
    states = {
        p: {
            "flags": sorted(s.flags),
            "attributes": dict(s.attributes),
            "entry": [a.text for a in s.entry],
            "exit": [a.text for a in s.exit],
            "final": s.final,
            "initial": s.initial,
        }
        for p, s in ((p, machine.states[p]) for p in _tree_order(machine, ROOT))
    }
    transitions = [
        {
            "source": t.source,
            "target": t.target,
            "events": list(t.events),
            "guard": t.guard_text,
            "priority": t.priority,
            "resume": t.resume,
            "after_s": t.after_s,
        }
        for t in machine.transitions
    ]
    return {
        "machine": machine.name,
        "file": machine.source,
        "priority": machine.priority,
        "description": machine.description,
        "initial": machine.default_leaf(ROOT),
        "states": states,
        "events": dict(machine.events),
        "commands": dict(machine.commands),
        "guards": {g.name: g.description for g in machine.guards.values()},
        "transitions": transitions,
        "goals_file": machine.goals_file,
    }


def print_machine(machine: Machine) -> None:
    """The state tree and the transitions, in the order a step tries them.

    Args:
        machine: The state machine, as loaded (from its file, or the copy a run kept).
    """
    print(f"machine {machine.name} ({machine.source}): {machine.description}")
    print(f"priority {machine.priority}; initial leaf {machine.default_leaf(ROOT)}; goals {machine.goals_file or '-'}")
    for path in _tree_order(machine, ROOT):
        state = machine.states[path]
        extras = [*(f"[{f}]" for f in sorted(state.flags)), *(f"{k}={v}" for k, v in state.attributes.items())]
        extras += [f"entry: {', '.join(a.text for a in state.entry)}"] if state.entry else []
        extras += [f"exit: {', '.join(a.text for a in state.exit)}"] if state.exit else []
        extras += ["final"] if state.final else []
        print("  " * state.depth + state.name + ("  " + "  ".join(extras) if extras else ""))
    rows = [
        (t.source, t.target, " | ".join(t.events) or "-", t.guard_text or "-", t.priority)
        for t in global_order(machine)
    ]
    print(format_table(["source", "target", "events", "guard", "priority"], rows))


def _tree_order(machine: Machine, path: str) -> list[str]:
    """The states below ``path`` depth first, parents before children, in file order."""
    out = []
    for child in machine.states[path].children:
        out += [child, *_tree_order(machine, child)]
    return out
