"""``cosim export``: write a run directory's stored trajectories as the ``.npz`` records ``cosim check`` reads."""

from __future__ import annotations

import argparse
from pathlib import Path

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import print_json
from cosim_validation.cli.output_path import checked_run_dir

HELP = "write the trajectories stored in a run directory as .npz trajectory records (one per case and robot)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim export``.

    Args:
        parser: The ``cosim export`` subcommand's parser, to add its arguments to.
    """
    parser.add_argument(
        "run_dir", type=arg_types.path, metavar="RUN_DIR", help="a campaign or session run directory (results.sqlite)"
    )
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="folder for <test_id>/<robot>.npz")
    parser.add_argument(
        "--case", action="append", default=[], metavar="TEST_ID", help="only this case (repeat for more)"
    )
    parser.add_argument(
        "--robot", action="append", default=[], metavar="ROBOT", help="only expected, virtual or physical (repeatable)"
    )
    parser.add_argument(
        "--config",
        type=arg_types.path,
        default=None,
        help="configuration with the run's robot (default: the one the run names)",
    )


def run(args: argparse.Namespace) -> int:
    """Export and print what was written.

    Args:
        args: The parsed ``cosim export`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.common.config import load_case_config, resolve_resource
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.robots.model import RobotConfig
    from cosim_validation.runs.campaign.record_export import export_records
    from cosim_validation.runs.report.run_data import load_run

    out = Path(args.output)
    # a folder with other records is fine: the export refuses each file it would overwrite
    checked_run_dir("-o", out, {"RUN_DIR": args.run_dir, "--config": args.config}, may_hold=True)
    run = load_run(args.run_dir)
    try:
        config = resolve_resource(args.config) if args.config else run.config_path
        if config is None:
            raise InputError(f"{args.run_dir}: the run's configuration is gone; give the robot's with --config")
        kinematics = RobotConfig.from_config(load_case_config(config)["robot"]).kinematics
        written = export_records(run.db, out, kinematics, args.case, args.robot)
    finally:
        run.close()
    if args.json:
        print_json(
            {
                "out": str(out),
                "records": [{"test_id": w.test_id, "robot": w.robot, "path": str(w.path)} for w in written],
            }
        )
    else:
        cases = len({w.test_id for w in written})
        print(f"wrote {len(written)} trajectory records of {cases} cases into {out} (<test_id>/<robot>.npz)")
    return 0
