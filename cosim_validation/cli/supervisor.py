"""``cosim supervisor check|replay|show``: the task supervisor's state machine, model-checked with SPIN."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HELP = "task supervisor state machines: model-check with SPIN (check), replay a counterexample (replay), show"
DEFAULT_MACHINE = "config/supervisor/needle_insertion.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim supervisor``: one action."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    check = actions.add_parser("check", help="check every LTL goal with SPIN; exit 2 if one is violated")
    check.add_argument("machine", nargs="?", default=DEFAULT_MACHINE, help=f"machine file (default {DEFAULT_MACHINE})")
    check.add_argument("--goals", help="goals file (default: the one the machine names under 'goals')")
    check.add_argument("--goal", action="append", default=[], metavar="NAME", help="check only this goal (repeatable)")
    check.add_argument("--priority", choices=("outer_first", "inner_first"), help="override the conflict resolution")
    check.add_argument("--out", help="directory for the models and counterexamples (default runs/supervisor/<name>)")
    replay = actions.add_parser("replay", help="run a trace file on the runtime machine; exit 2 if it differs")
    replay.add_argument("machine", help="machine file")
    replay.add_argument("trace", help="trace file (a counterexample written by check, or hand-written)")
    replay.add_argument("--priority", choices=("outer_first", "inner_first"), help="override the conflict resolution")
    show = actions.add_parser("show", help="print the states, events, transitions and goals of a machine")
    show.add_argument("machine", nargs="?", default=DEFAULT_MACHINE, help=f"machine file (default {DEFAULT_MACHINE})")
    for sub in (check, replay, show):
        sub.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def run(args: argparse.Namespace) -> int:
    """Dispatch to the action; with ``--json`` a bad input is also a JSON error object on stdout."""
    from cosim_validation.cli.output import print_json
    from cosim_validation.exceptions import CosimError

    try:
        return {"check": _check, "replay": _replay, "show": _show}[args.action](args)
    except CosimError as exc:
        if getattr(args, "json", False):
            print_json({"error": str(exc)})
            print(f"error: {exc}", file=sys.stderr)
            return 1
        raise


def _machine(path: str, priority: str | None = None) -> Any:
    from cosim_validation.config import resolve_resource
    from cosim_validation.statechart.loader import load_machine

    machine = load_machine(resolve_resource(path))
    return machine.with_priority(priority) if priority else machine


def _check(args: argparse.Namespace) -> int:
    from cosim_validation.cli.output import print_json
    from cosim_validation.cli.supervisor_report import check_summary, print_check
    from cosim_validation.exceptions import InputError
    from cosim_validation.statechart.checker import check_goals
    from cosim_validation.statechart.goals import load_goals

    machine = _machine(args.machine, args.priority)
    goals_path = args.goals or machine.goals_file
    if not goals_path:
        raise InputError(f"{machine.source}: the machine names no goals file; give one with --goals")
    goals = load_goals(goals_path, machine)
    out = Path(args.out) if args.out else Path("runs") / "supervisor" / machine.name
    report = check_goals(machine, goals, out, args.goal)
    if getattr(args, "json", False):
        print_json(check_summary(report))
    else:
        print_check(report)
    return 0 if report.all_hold else 2


def _replay(args: argparse.Namespace) -> int:
    from cosim_validation.cli.output import print_json
    from cosim_validation.cli.supervisor_report import print_replay, replay_summary
    from cosim_validation.statechart.counterexample import load_trace
    from cosim_validation.statechart.replay import replay_trace

    machine = _machine(args.machine, args.priority)
    trace = load_trace(args.trace)
    replay = replay_trace(machine, trace)
    if getattr(args, "json", False):
        print_json(replay_summary(machine, trace, replay))
    else:
        print_replay(machine, trace, replay)
    return 0 if replay.reproduced else 2


def _show(args: argparse.Namespace) -> int:
    from cosim_validation.cli.output import print_json
    from cosim_validation.cli.supervisor_report import machine_summary, print_machine

    machine = _machine(args.machine)
    if getattr(args, "json", False):
        print_json(machine_summary(machine))
    else:
        print_machine(machine)
    return 0
