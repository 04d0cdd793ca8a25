"""``cosim experiment rq1|rq2|rq3|adaptive``: [Actuators 2025]'s research questions and adaptive refinement."""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import format_table, print_json
from cosim_validation.cli.output_path import checked_run_dir

HELP = (
    "run the research questions (rq1, rq2, rq3) of the needle-insertion validation study (Actuators 2025) "
    "or the adaptive-refinement comparison on the embedded models"
)

NAMES = ("rq1", "rq2", "rq3", "adaptive")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``cosim experiment``.

    Args:
        parser: The ``cosim experiment`` subcommand's parser, to add its options to.
    """
    parser.add_argument("name", choices=NAMES, help="which experiment")
    parser.add_argument("--quick", action="store_true", help="a small version that finishes in minutes on 2 cores")
    parser.add_argument("--out", required=True, help="output directory (suites, run/, experiment.json)")
    parser.add_argument(
        "--config", type=arg_types.path, default="config/needle_insertion.yaml", help="configuration file"
    )
    parser.add_argument("--granularities-mm", default=None, help="rq1/rq2: other cube edges, e.g. 20,10 [mm]")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: every core)")
    parser.add_argument("--executor", default="local", help="local (process pool) or ray")
    parser.add_argument("--address", default=None, help="Ray cluster address")
    parser.add_argument("--resume", action="store_true", help="continue an interrupted experiment in --out")
    parser.add_argument(
        "--errors",
        type=arg_types.path,
        default=None,
        metavar="MODEL",
        help="rq3: a third row of Table 4, the virtual robot with the learned errors of MODEL (cosim errors train)",
    )


def _granularities(text: str | None) -> tuple[float, ...] | None:
    from cosim_validation.common.exceptions import InputError

    if text is None:
        return None
    try:
        values = tuple(float(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise InputError(f"--granularities-mm: expected comma-separated numbers, got {text!r}") from None
    twice = sorted({g for g in values if values.count(g) > 1})
    if twice:  # the same suite twice: refused only once the first suites and the experiment's file were written
        raise InputError(f"--granularities-mm: {twice[0]:g} given twice in {text!r}; expected each cube edge once")
    return values


def _check_flags(args: argparse.Namespace) -> None:
    """What the campaign would refuse only after the suites were made into --out: checked first."""
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.runs.campaign.campaign_runner import EXECUTORS

    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers: expected an integer >= 1, got {args.workers!r}")
    if args.executor not in EXECUTORS:
        raise InputError(f"--executor: expected one of {', '.join(EXECUTORS)}, got {args.executor!r}")
    if args.address is not None and args.executor != "ray":
        raise InputError("--address applies to --executor ray only")
    inputs = {"--config": args.config, "--errors": args.errors}
    checked_run_dir("--out", args.out, inputs, may_hold=args.resume, resume_flag="--resume")
    _granularities(args.granularities_mm)


def run(args: argparse.Namespace) -> int:
    """Run the experiment and print its answer.

    Args:
        args: The parsed ``cosim experiment`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.common.config import resolve_resource

    warnings.filterwarnings("ignore", message="The TBB threading layer")  # numba then uses another layer
    from cosim_validation.runs.experiment.research_questions import RunOptions, run_experiment

    _check_flags(args)
    errors_model = None if args.errors is None else Path(args.errors)
    options = RunOptions(
        resolve_resource(args.config),
        Path(args.out),
        args.workers,
        args.executor,
        args.address,
        args.resume,
        errors_model,
    )
    started = time.perf_counter()
    if args.name == "adaptive":
        from cosim_validation.cli.output import to_json
        from cosim_validation.runs.experiment.adaptive import ADAPTIVE, run_adaptive

        if args.granularities_mm is not None or args.errors is not None:
            from cosim_validation.common.exceptions import InputError

            flag = "--granularities-mm applies to rq1 and rq2" if args.errors is None else "--errors applies to rq3"
            raise InputError(f"{flag} only")
        results = run_adaptive(ADAPTIVE[args.quick], options) | {"wall_s": time.perf_counter() - started}
        (Path(args.out) / "experiment.json").write_text(to_json(results) + "\n")
    else:
        from cosim_validation.runs.experiment.experiment_specs import experiment_spec

        spec = experiment_spec(args.name, args.quick, _granularities(args.granularities_mm))
        outcome = run_experiment(spec, options)
        results = outcome.results
        if outcome.interrupted:
            print(f"interrupted: continue with the same command and --resume (output in {args.out})")
            return 130
    if args.json:
        print_json(results)
    else:
        print(answer_text(args.name, results))
    return 0


def answer_text(name: str, results: dict[str, Any]) -> str:
    """The experiment's answer as text tables.

    Args:
        name: The experiment: ``rq1``, ``rq2``, ``rq3`` or ``adaptive``.
        results: What the experiment writes to ``experiment.json``
            (:func:`~cosim_validation.runs.experiment.research_questions.run_experiment`, or
            :func:`~cosim_validation.runs.experiment.adaptive.run_adaptive`'s with ``wall_s``); wall times in
            [s], deviations in [deg] and [mm].
    """
    wall = results["wall_s"]
    calls = len(results.get("calls", [])) if isinstance(wall, dict) else 1
    over = f" summed over {calls} calls (--resume)" if calls > 1 else ""
    lines = [f"{name}: wall time {wall if isinstance(wall, float) else wall['total']:.0f} s{over}"]
    if name == "adaptive":
        return "\n".join(lines + _adaptive_lines(results))
    answer = results.get("answer", {})
    for table in answer.get("tables", []):
        lines += [
            f"\n{table['region']}:",
            format_table(list(TABLE_COLUMNS), [[r[c] for c in TABLE_COLUMNS] for r in table["rows"]]),
        ]
    for row in answer.get("table_4", []):
        joint, tip, linear = row["joint_deg"], row["tip_mm"], row.get("prismatic_mm")
        prismatic = f"; prismatic |dq| mean {linear['mean']:.4f} mm, max {linear['max']:.4f} mm" if linear else ""
        lines.append(
            f"{row['robot']} ({row['n_cases']} cases): joint |dq| mean {joint['mean']:.4f} deg, max {joint['max']:.4f} "
            f"deg{prismatic}; tip mean {tip['mean']:.3f} mm, max {tip['max']:.3f} mm"
        )
    if "table_4_errors" in answer:
        from cosim_validation.runs.experiment.rq3_errors import goal_lines

        lines += goal_lines(answer["table_4_errors"])
    if "report" in results:
        lines.append(f"report: {results['report']}")
    return "\n".join(lines)


TABLE_COLUMNS = (
    "granularity_mm",
    "cubes",
    "grid_cases",
    "grid_points",
    "grid_violations",
    "grid_rate",
    "random_points",
    "random_coverage",
    "random_max_per_cube",
    "random_violations",
    "random_rate",
)


def _adaptive_lines(results: dict[str, Any]) -> list[str]:
    rows = []
    for method in ("adaptive", "uniform_grid", "random"):
        r = results[method]
        rows.append(
            (method, r["cases"], r["violations"], 100 * r["violations_per_case"], r["violating_cubes_at_finest"])
        )
    finest = results["finest_granularity_mm"]
    return [
        f"equal budget: {results['budget_cases']} cases; violating cubes counted at {finest:g} mm",
        format_table(["method", "cases", "violations", "violations per case [%]", "violating cubes"], rows),
    ]
