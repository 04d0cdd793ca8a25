"""``cosim report DIR``: report.html (self-contained) and summary.json of a campaign or session run."""

from __future__ import annotations

import argparse
import warnings

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import print_json

#: The most cubes per granularity Figure 6 may be asked to measure: more than a lung holds at 2 mm (about 500,000);
#: a larger number is a typing error, not a wish.
MAX_CUBES = 1_000_000

HELP = "write report.html (tables and figures, readable offline) and summary.json for a run directory"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``cosim report``.

    Args:
        parser: The ``cosim report`` subcommand's parser, to add its options to.
    """
    parser.add_argument(
        "run_dir", type=arg_types.path, metavar="DIR", help="run directory of `cosim campaign` or `cosim session`"
    )
    parser.add_argument(
        "--max-cubes", type=int, default=200, help="Figure 6 measures at most this many cubes per granularity"
    )


def run(args: argparse.Namespace) -> int:
    """Build the report.

    Args:
        args: The parsed ``cosim report`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.runs.report import build_report

    warnings.filterwarnings("ignore", message="The TBB threading layer")  # numba then uses another layer

    if not 1 <= args.max_cubes <= MAX_CUBES:
        raise InputError(f"--max-cubes: expected an integer in [1, {MAX_CUBES}], got {args.max_cubes!r}")
    outcome = build_report(args.run_dir, args.max_cubes)
    if args.json:
        print_json({"report": str(outcome.html_path), "summary": str(outcome.summary_path), "wall_s": outcome.wall_s})
        return 0
    sections = outcome.summary["report"]
    missing = [k for k, v in sections.items() if isinstance(v, dict) and not v.get("available", True)]
    print(f"wrote {outcome.html_path} and {outcome.summary_path.name} in {outcome.wall_s:.1f} s")
    for key in missing:
        print(f"  {key}: not available ({sections[key]['reason']})")
    return 0
