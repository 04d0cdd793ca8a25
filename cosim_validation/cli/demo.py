"""``cosim demo``: the main job on the embedded defaults, end to end (what ``make demo`` runs).

1. ``cosim testgen``: a 20 mm grid suite (3 targets per cube) of the left lung within 3 cm of the heart,
   and a random suite of as many cases over the same region ([Actuators 2025]'s baseline).
2. ``cosim session --validate``: a digital-twin session of a few of its cases (the ROS 2 graph: controller
   with the state validator, MuJoCo virtual robot, emulated physical ER3 Pro, monitor, recorder, markers).
3. ``cosim campaign``: both suites in batch on the virtual and the physical robot (the flawed
   ``straight`` controller: the monitor finds the cases where the needle enters the heart).
4. ``cosim report`` of both runs; the last line is the path of the campaign's report.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

from cosim_validation.cli.output_path import checked_run_dir

HELP = "run the main job on the embedded defaults: suite, digital-twin session, batch campaign, report"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``cosim demo``.

    Args:
        parser: The ``cosim demo`` subcommand's parser, to add its options to.
    """
    parser.add_argument("--out", default="", help="output folder (default: runs/demo-<time>)")
    parser.add_argument("--session-cases", type=int, default=4, help="cases of the digital-twin session")
    parser.add_argument("--granularity-mm", type=float, default=20.0, help="cube edge of the suite [mm]")
    parser.add_argument("--workers", type=int, default=0, help="campaign workers (0 = every core)")


def run(args: argparse.Namespace) -> int:
    """The steps in order; stops at the first that fails.

    Args:
        args: The parsed ``cosim demo`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.runs.campaign.executor import default_workers
    from cosim_validation.testgen import Suite

    if args.session_cases < 1:
        raise InputError(f"--session-cases must be >= 1, got {args.session_cases}")
    if not (math.isfinite(args.granularity_mm) and args.granularity_mm > 0):
        raise InputError(f"--granularity-mm: expected a cube edge > 0 mm, got {args.granularity_mm!r}")
    if args.workers < 0:
        raise InputError(f"--workers: expected an integer >= 0 (0: every core), got {args.workers!r}")
    out = Path(args.out or f"runs/demo-{time.strftime('%Y%m%d-%H%M%S')}")
    checked_run_dir("--out", out, {})
    out.mkdir(parents=True, exist_ok=True)
    grid, random = out / "grid.parquet", out / "random.parquet"
    region = ["--region", "near_heart", "--granularity-mm", str(args.granularity_mm)]
    start = time.monotonic()
    step = _Steps(args.json)
    step(
        "grid suite over the left lung near the heart (3 per 20 mm cube)",
        ["testgen", "--method", "grid", "--per-cube", "3", *region, "-o", str(grid)],
    )
    count = str(len(Suite.read(grid)))
    step(
        f"random suite of as many cases ({count}) over the same region",
        ["testgen", "--method", "random", "--count", count, "--per-cube", "3", *region, "-o", str(random)],
    )
    step(
        "digital-twin session with the state validator (ROS 2 nodes over DDS, sim time)",
        [
            "session",
            "--suite",
            str(grid),
            "--cases",
            str(args.session_cases),
            "--validate",
            "--out",
            str(out / "session"),
        ],
    )
    step(
        "batch campaign: both suites on the virtual and the physical robot",
        [
            "campaign",
            "--suite",
            str(grid),
            "--suite",
            str(random),
            "--backends",
            "virtual,physical",
            "--workers",
            str(args.workers or default_workers()),
            "--out",
            str(out / "campaign"),
        ],
    )
    step("report of the session", ["report", str(out / "session")])
    step("report of the campaign", ["report", str(out / "campaign")])
    if not args.json:
        print(f"\ndemo done in {time.monotonic() - start:.0f} s; session report: {out / 'session' / 'report.html'}")
        print(f"report: {(out / 'campaign' / 'report.html').resolve()}")
    return 0


class _Steps:
    """Runs ``cosim`` subcommands in this process, numbered, raising on the first failure."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.n = 0

    def __call__(self, title: str, argv: list[str]) -> None:
        from cosim_validation.cli.main import main
        from cosim_validation.common.exceptions import CosimError

        self.n += 1
        if not self.as_json:
            print(f"\n=== {self.n}. {title}: cosim {' '.join(argv)}", flush=True)
        code = main([*argv, *(["--json"] if self.as_json else [])])
        if code != 0:
            raise CosimError(f"demo step {self.n} (cosim {argv[0]}) failed with exit code {code}")
