"""``cosim hazards run|table``: safety hazard campaigns ([Li et al. 2016]) and their detection table."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import format_table, print_json
from cosim_validation.cli.output_path import checked_run_dir
from cosim_validation.cli.supervisor_options import DEFAULT_SUPERVISOR

HELP = "inject hazard scenarios (config/hazards.yaml) into the physical robot and measure their detection"

HEADERS = (
    "scenario",
    "cases",
    "windows",
    "detected",
    "rate",
    "latency median [s]",
    "latency max [s]",
    "within 1 cycle",
    "2nd detector",
    "false alarms",
    "per case-hour",
    "2nd false alarms",
    "violated by fault",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim hazards``: an action, then its options.

    Args:
        parser: The ``cosim hazards`` subcommand's parser, to add its arguments to.
    """
    parser.add_argument("action", choices=("run", "table"), help="run: campaigns + detector; table: show a run's")
    parser.add_argument(
        "--config", type=arg_types.path, default="config/needle_insertion.yaml", help="configuration file"
    )
    parser.add_argument(
        "--suite", type=arg_types.path, action="append", default=[], help="suite file (Parquet); repeat for more (run)"
    )
    parser.add_argument("--scenarios", default="all", help="names, comma-separated, all, or none (fault-free only)")
    parser.add_argument("--library", type=arg_types.path, default="config/hazards.yaml", help="scenario library (run)")
    parser.add_argument("--out", required=True, help="hazard run directory (runs/<scenario>/, hazards.sqlite)")
    parser.add_argument("--resume", action="store_true", help="continue the runs stored in --out (run)")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: every core)")
    parser.add_argument("--validate", action=argparse.BooleanOptionalAction, default=None, help="state validator")
    parser.add_argument("--threshold-mm", type=float, default=None, help="tip threshold [mm] (default: derived)")
    parser.add_argument("--margin", type=float, default=1.25, help="derived thresholds = fault-free max x margin")
    parser.add_argument(
        "--calibration", type=arg_types.path, default=None, help="fault-free campaign run to derive thresholds from"
    )
    parser.add_argument("--reanalyse", action="store_true", help="run: only recompute the detection tables")
    parser.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="ROBOT=KIND:OPTIONS",
        help="see a robot through a filter in every campaign of the run (repeat for more, innermost first), as "
        "cosim campaign does; e.g. virtual=errors:model=M, a twin that errs like the robot (docs/HAZARDS.md). A "
        "--calibration run must have been made with the same filters",
    )
    parser.add_argument(
        "--mitigate",
        action="store_true",
        help="run every case with the detector in the loop and stop on alarm under the task supervisor (needs "
        "--calibration or --threshold-mm: the thresholds are fixed before the cases run)",
    )
    parser.add_argument(
        "--supervisor",
        type=arg_types.path,
        default=None,
        help=f"the task supervisor of a --mitigate run (default {DEFAULT_SUPERVISOR})",
    )


def run(args: argparse.Namespace) -> int:
    """Run the action; the detection table on stdout.

    Args:
        args: The parsed ``cosim hazards`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.cli.main import UsageError
    from cosim_validation.common.config import resolve_resource
    from cosim_validation.hazards.detector import DetectorSettings
    from cosim_validation.hazards.hazard_watch import MAX_THRESHOLDS
    from cosim_validation.robots.filters.robot_filters import FilterSpec
    from cosim_validation.runs.campaign.hazard_campaign import HazardRequest, reanalyse, run_hazards
    from cosim_validation.runs.campaign.hazard_tables import HAZARDS_FILE

    config_path = resolve_resource(args.config)
    out = Path(args.out)
    if args.action == "run":
        inputs = {"--config": args.config, "--calibration": args.calibration, **{f"--suite {s}": s for s in args.suite}}
        checked_run_dir("--out", out, inputs, may_hold=args.resume or args.reanalyse, resume_flag="--resume")
        if not args.suite and not args.reanalyse:
            raise UsageError("cosim hazards run: --suite is required")
        most = MAX_THRESHOLDS["tip_mm"]
        if args.threshold_mm is not None and not (math.isfinite(args.threshold_mm) and 0 < args.threshold_mm <= most):
            raise UsageError(
                f"cosim hazards run: --threshold-mm: expected a number > 0 and at most {most:g} (a tip a metre off), "
                f"got {args.threshold_mm}"
            )
        if args.supervisor is not None and not args.mitigate:  # it was ignored without a word
            raise UsageError("cosim hazards run: --supervisor: only with --mitigate (the supervisor of the loop)")
        settings = None if args.threshold_mm is None else DetectorSettings(args.threshold_mm / 1000.0)
        if not any(n.strip() for n in args.scenarios.split(",")):  # '' ran every scenario, as `all` does
            raise UsageError("cosim hazards run: --scenarios: expected names, all or none; got no name")
        request = HazardRequest(
            config_path=config_path,
            suite_paths=tuple(Path(s) for s in args.suite),
            out_dir=out,
            scenarios=tuple(n.strip() for n in args.scenarios.split(",") if n.strip()),
            library=args.library,
            workers=args.workers,
            resume=args.resume,
            validate=args.validate,
            settings=settings,
            margin=args.margin,
            calibration=Path(args.calibration) if args.calibration else None,
            mitigate=args.mitigate,
            supervisor=args.supervisor or DEFAULT_SUPERVISOR,
            filters=tuple(FilterSpec.parse(text) for text in args.filter),
        )
        run_hazards(request) if not args.reanalyse else reanalyse(request)
    return _show(out / HAZARDS_FILE, args.json)


def _show(path: Path, as_json: bool) -> int:
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.runs.campaign.hazard_tables import summarize

    if not path.is_file():
        raise InputError(f"{path}: no hazard tables (run cosim hazards run first)")
    rows = summarize(path)
    if as_json:
        print_json({"tables": str(path), "scenarios": [_as_dict(r) for r in rows]})
        return 0
    print(f"{path}:")
    print(format_table(HEADERS, [_cells(r) for r in rows]))
    return 0


def _cells(r: Any) -> list[Any]:
    rates = [_pct(r.rate), _num(r.latency_median_s), _num(r.latency_max_s)]
    alarms = [r.within_cycle, r.second_detected, r.false_alarms, _num(r.false_alarms_per_case_hour)]
    return [r.scenario, r.cases, r.windows, r.detected, *rates, *alarms, r.second_false_alarms, r.violated_cases]


def _as_dict(r: Any) -> dict[str, Any]:
    out = {k: getattr(r, k) for k in r.__dataclass_fields__}
    return out | {"rate": r.rate, "false_alarms_per_case_hour": r.false_alarms_per_case_hour}


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{100 * value:.1f} %"


def _num(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3g}"
