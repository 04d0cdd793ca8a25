"""``cosim supervisor check|replay|show``: the task supervisor's state machine, model-checked with SPIN."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.output_path import checked_run_dir

HELP = "task supervisor state machines: model-check with SPIN (check), replay a counterexample (replay), show"
DEFAULT_MACHINE = "config/supervisor/needle_insertion.yaml"
MACHINE_HELP = "machine file, or a supervised run's directory (the machine and goals the run kept)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim supervisor``: one action.

    Args:
        parser: The ``cosim supervisor`` subcommand's parser, to add one subparser per action to.
    """
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    check = actions.add_parser("check", help="check every LTL goal with SPIN; exit 2 if one is violated")
    default = f"{MACHINE_HELP} (default {DEFAULT_MACHINE})"
    check.add_argument("machine", type=arg_types.path, nargs="?", default=DEFAULT_MACHINE, help=default)
    check.add_argument(
        "--goals",
        type=arg_types.path,
        help="goals file (default: the one the machine names under 'goals', or the run's)",
    )
    check.add_argument("--goal", action="append", default=[], metavar="NAME", help="check only this goal (repeatable)")
    check.add_argument("--priority", choices=("outer_first", "inner_first"), help="override the conflict resolution")
    check.add_argument(
        "--out",
        help="directory for the models and counterexamples, rewritten by every check (default runs/supervisor/<name>)",
    )
    replay = actions.add_parser("replay", help="run a trace file on the runtime machine; exit 2 if it differs")
    replay.add_argument("machine", type=arg_types.path, help=MACHINE_HELP)
    replay.add_argument(
        "trace", type=arg_types.path, help="trace file (a counterexample written by check, or hand-written)"
    )
    replay.add_argument("--priority", choices=("outer_first", "inner_first"), help="override the conflict resolution")
    show = actions.add_parser("show", help="print the states, events, transitions and goals of a machine")
    show.add_argument("machine", type=arg_types.path, nargs="?", default=DEFAULT_MACHINE, help=default)
    for sub in (check, replay, show):
        sub.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")


def run(args: argparse.Namespace) -> int:
    """Dispatch to the action (a bad input: ``cli.main`` prints one ``error:`` line, or the JSON error object).

    Args:
        args: The parsed command line of ``cosim supervisor ACTION`` (``action``, that action's arguments, and
            ``--json`` only when given).
    """
    return {"check": _check, "replay": _replay, "show": _show}[args.action](args)


def _machine(path: str, priority: str | None = None) -> Any:
    """The machine of a file, or the one a supervised run kept (its goals file then the run's copy too)."""
    from dataclasses import replace

    from cosim_validation.common.config import resolve_resource
    from cosim_validation.monitor.statechart.loader import load_machine

    stored = _stored(path)
    if stored is None:
        machine = load_machine(resolve_resource(path))
    else:
        machine = load_machine(stored.role_file("supervisor_machine", "supervisor machine"))
        goals = stored.files.get("supervisor_goals")
        machine = replace(machine, goals_file=str(goals) if goals is not None else "")
    return machine.with_priority(priority) if priority else machine


def _stored(path: str) -> Any:
    """The supervisor files a run directory kept, or None when ``path`` is not a directory.

    Raises:
        InputError: A directory that is not a supervised run.
    """
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.runs.run_inputs import MANIFEST
    from cosim_validation.runs.run_supervision import stored_supervision

    if not Path(path).is_dir():
        return None
    stored = stored_supervision(path)
    if stored is None:
        raise InputError(f"{path}: not a supervised run (no {MANIFEST} naming its supervisor's files)")
    return stored


#: Files that make a folder another command's run directory (campaign, session, hazards, experiment).
_OTHER_RUNS = ("results.sqlite", "hazards.sqlite", "session.mcap", "inputs.json", "experiment.json")


def _check(args: argparse.Namespace) -> int:
    from cosim_validation.cli.output import print_json
    from cosim_validation.cli.supervisor_report import check_summary, print_check
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.monitor.statechart.checker import check_goals
    from cosim_validation.monitor.statechart.goals import load_goals

    if args.out:  # rewritten by every check, but never one of its inputs
        checked_run_dir("--out", args.out, {"MACHINE": args.machine, "--goals": args.goals}, may_hold=True)
        others = sorted(name for name in _OTHER_RUNS if (Path(args.out) / name).exists())
        if others:  # the model checker's files (pan, pan.c, model.pml, ...) were dropped among another run's
            raise InputError(
                f"--out {args.out!r} holds {', '.join(others)}: another command's run directory; choose another --out"
            )
    machine = _machine(args.machine, args.priority)
    goals_path = args.goals or machine.goals_file
    if not goals_path:
        raise InputError(f"{machine.source}: the machine names no goals file (a run: kept none); give one with --goals")
    goals = load_goals(goals_path, machine)
    out = Path(args.out) if args.out else Path("runs") / "supervisor" / machine.name
    _refuse_inputs_inside(out, {"MACHINE": machine.source, "goals": goals_path})
    made = not out.exists()
    try:
        report = check_goals(machine, goals, out, args.goal)
    except BaseException:  # a Ctrl-C or a failure half-way: a folder this check made is not left half-written
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise
    if getattr(args, "json", False):
        print_json(check_summary(report))
    else:
        print_check(report)
    return 0 if report.all_hold else 2


def _refuse_inputs_inside(out: Path, inputs: dict[str, str]) -> None:
    """Refuse an output folder that holds an input.

    Every check rewrites the models it writes there: a machine named ``model.pml`` in it was replaced by the Promela
    model of itself.

    Raises:
        InputError: Names the input and the folder.
    """
    from cosim_validation.common.exceptions import InputError

    folder = out.resolve()
    for name, path in inputs.items():
        if path and folder in Path(path).resolve().parents:
            raise InputError(
                f"--out {str(out)!r} holds the input {name} ({path}); every check rewrites the files in it: "
                "choose another folder"
            )


def _replay(args: argparse.Namespace) -> int:
    from cosim_validation.cli.output import print_json
    from cosim_validation.cli.supervisor_report import print_replay, replay_summary
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.monitor.statechart.counterexample import load_trace
    from cosim_validation.monitor.statechart.replay import replay_trace

    machine = _machine(args.machine, args.priority)
    trace = load_trace(args.trace)
    try:
        replay = replay_trace(machine, trace)
    except InputError as exc:  # the trace's names: say which file
        raise InputError(f"{args.trace}: {exc}") from None
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
