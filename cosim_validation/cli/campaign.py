"""``cosim campaign``: run suites of test cases in batch (local process pool or Ray), resumable."""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.cli import arg_types
from cosim_validation.cli.detector_options import add_detector_options
from cosim_validation.cli.output import format_table, print_json
from cosim_validation.cli.output_path import checked_run_dir
from cosim_validation.cli.supervisor_options import add_supervisor_options, supervisor_paths

HELP = "run test suites through the planner, the robots and the monitor in batch, into a resumable run directory"


def _names(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``cosim campaign``.

    Args:
        parser: The ``cosim campaign`` subcommand's parser, to add its options to.
    """
    parser.add_argument(
        "--config", type=arg_types.path, default="config/needle_insertion.yaml", help="configuration file"
    )
    parser.add_argument(
        "--suite", type=arg_types.path, action="append", required=True, help="suite file (Parquet); repeat for more"
    )
    parser.add_argument(
        "--backends",
        default="virtual",
        help="robots to execute on, comma-separated: virtual, physical "
        "(or engines: mujoco, pybullet, coppeliasim, emulated, ros2_control)",
    )
    parser.add_argument("--controller", default=None, help="controller under test (default: the configuration's)")
    parser.add_argument("--executor", default="local", help="local (process pool) or ray")
    parser.add_argument("--address", default=None, help="Ray cluster address (default: start a local Ray)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: every core)")
    parser.add_argument("--out", required=True, help="run directory (results.sqlite, summary.json)")
    parser.add_argument("--resume", action="store_true", help="continue the run stored in --out")
    parser.add_argument("--no-trajectories", action="store_true", help="store verdicts and KPIs only")
    parser.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="ROBOT=KIND:OPTIONS",
        help="see a robot through a filter (repeat for more, innermost first): offset (a fixed joint offset, e.g. "
        "physical=offset:joint2=0.001), errors, hazards; the same in a campaign and in a session",
    )
    parser.add_argument(
        "--validate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="check every setpoint with the state validator; a refused setpoint stops the robot and aborts the "
        "case (default: validator.enabled of the configuration, off as shipped; cosim session has the same default)",
    )
    add_supervisor_options(parser)
    add_detector_options(parser)


def run(args: argparse.Namespace) -> int:
    """Run the campaign; exit 130 after Ctrl-C (the database stays consistent).

    Args:
        args: The parsed ``cosim campaign`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.robots.filters.robot_filters import FilterSpec
    from cosim_validation.runs.campaign.campaign_runner import CampaignRequest, run_campaign
    from cosim_validation.runs.campaign.stores import StoreFullError
    from cosim_validation.runs.campaign.worker_items import RobotLostRunError

    warnings.filterwarnings("ignore", message="The TBB threading layer")  # numba then uses another layer
    from cosim_validation.common.config import resolve_resource

    supervisor, scenario = supervisor_paths(args, must_exist=not args.resume)
    inputs = {"--config": args.config, **{f"--suite {s}": s for s in args.suite}}
    checked_run_dir("--out", args.out, inputs, may_hold=args.resume, resume_flag="--resume")
    request = CampaignRequest(
        config_path=resolve_resource(args.config),
        suite_paths=tuple(Path(s) for s in args.suite),
        out_dir=Path(args.out),
        backends=_names(args.backends),
        executor=args.executor,
        address=args.address,
        workers=args.workers,
        resume=args.resume,
        controller=args.controller,
        trajectories=not args.no_trajectories,
        validate=args.validate,
        filters=tuple(FilterSpec.parse(text) for text in args.filter),
        supervisor=supervisor,
        supervisor_scenario=scenario,
        detector=args.detector,
        stop_on_alarm=args.stop_on_alarm,
    )
    try:
        outcome = run_campaign(request)
    except StoreFullError as exc:  # what was stored stays: say how to go on
        stored = (Path(args.out) / "results.sqlite").is_file()
        advice = f"free space, then continue with: {resume_command(args)}" if stored else exc.advice
        raise StoreFullError(exc.source, exc.problem, advice) from None
    except RobotLostRunError as exc:  # the one arm is gone: what ran is stored, say how to go on
        stored = (Path(args.out) / "results.sqlite").is_file()
        then = f"continue with: {resume_command(args)}" if stored else "run the campaign again"
        raise RobotLostRunError(f"{exc}; once the robot answers again, {then}") from None
    if args.json:
        print_json(outcome.summary | {"out": str(outcome.out_dir)})
    else:
        call = outcome.summary["last_call"]
        print(
            f"{outcome.out_dir}: {outcome.ran} cases run, {outcome.skipped} already stored, "
            f"{call['wall_s']:.1f} s ({call['cases_per_s']:.2f} cases/s, {call['workers']} workers)"
        )
        for note in outcome.notes:  # anatomy repairs, a salvaged database
            print(note)
        print(summary_text(outcome.summary))
    if outcome.interrupted:
        print(
            f"interrupted: {outcome.summary['cases']['stored']} of {outcome.total} cases are stored in "
            f"{outcome.out_dir / 'results.sqlite'}; continue with:\n  {resume_command(args)}",
            file=sys.stderr,
        )
        return 130
    return 0


def resume_command(args: argparse.Namespace) -> str:
    """The command line that continues this run.

    Args:
        args: The parsed command line of the run, as :func:`run` takes it; the supervisor files are named by
            absolute path, ``--resume`` is added.
    """
    from cosim_validation.common.config import resolve_resource

    parts = ["cosim campaign", f"--config {shlex.quote(args.config)}"]
    parts += [f"--suite {shlex.quote(s)}" for s in args.suite]
    parts.append(f"--backends {shlex.quote(args.backends)}")
    for option in ("controller", "executor", "address", "workers"):
        value = getattr(args, option)
        if value is not None and not (option == "executor" and value == "local"):
            parts.append(f"--{option} {shlex.quote(str(value))}")
    if args.no_trajectories:
        parts.append("--no-trajectories")
    if args.validate is not None:
        parts.append("--validate" if args.validate else "--no-validate")
    parts += [f"--filter {shlex.quote(text)}" for text in args.filter]
    for option, value in (("--supervisor", args.supervisor), ("--supervisor-scenario", args.supervisor_scenario)):
        if value is not None:  # absolute: the resume may run from another directory
            parts.append(f"{option} {shlex.quote(str(resolve_resource(value).resolve()))}")
    if args.detector is not None:
        parts.append(f"--detector {shlex.quote(args.detector)}")
    if args.stop_on_alarm:
        parts.append("--stop-on-alarm")
    if getattr(args, "json", False):  # the same kind of answer as the call it continues
        parts.append("--json")
    return " ".join([*parts, f"--out {shlex.quote(args.out)}", "--resume"])


def _scaled(value: float, unit: str) -> tuple[float, str]:
    """SI value in the units of reports: mm for m, deg for rad."""
    if unit == "m":
        return value * 1e3, "mm"
    if unit == "rad":
        return float(np.degrees(value)), "deg"
    return value, unit


def summary_text(summary: dict[str, Any]) -> str:
    """The summary as text tables (millimetres and degrees).

    Args:
        summary: The campaign's summary, as ``summary.json`` holds it (``cases``, ``safety``, ``properties``,
            ``kpis``, and ``aborted`` / ``failures`` when present), KPI values in SI units ([m], [rad]).
    """
    cases = summary["cases"]
    counts = ", ".join(f"{k} {v}" for k, v in cases.items() if k not in ("stored", "expected"))
    lines = [f"cases: {cases['stored']} of {cases['expected']} stored ({counts or 'none'})"]
    safety = summary["safety"]
    order = {"expected": 0, "virtual": 1, "physical": 2}
    for robot, s in sorted(safety["by_robot"].items(), key=lambda item: order.get(item[0], 3)):
        lines.append(f"{safety['property']} violated on {robot}: {s['violated']} cases ({100 * s['rate']:.1f} %)")
    stopped = any(p.get("stopped", 0) for p in summary["properties"])  # a summary written before: no such count
    extra = ("stopped",) if stopped else ()  # the verdicts of cases stopped before their end, counted apart
    rows = [
        (p["property"], p["robot"], p["holds"], p["violated"], p["unknown"], *(p[k] for k in extra))
        for p in summary["properties"]
        if p["violated"] or p["unknown"]
    ]
    quiet = len({p["property"] for p in summary["properties"]} - {r[0] for r in rows})
    if rows:
        head = ["property", "robot", "holds", "violated", "unknown", *(("in stopped cases",) if stopped else ())]
        lines += ["", format_table(head, rows)]
    lines.append(f"{quiet} more properties hold on every robot in every completed case")
    kpi_rows = []
    for k in summary["kpis"]:
        mean, unit = _scaled(k["mean"], k["unit"])
        worst, _ = _scaled(k["max"], k["unit"])
        kpi_rows.append((k["kpi"], k["robot"], k["n"], mean, worst, unit))
    if kpi_rows:
        lines += ["", format_table(["kpi", "robot", "n", "mean", "max", "unit"], kpi_rows)]
    for kind, key in (("aborted", "aborted"), ("failed", "failures")):
        for case in summary.get(key, []):
            lines.append(f"{kind} {case['test_id']}: {case['message']}")
    return "\n".join(lines)
