"""``cosim export-crtk``: one robot's record of a case in a run as a CRTK-style MCAP, or as the dataset CSV."""

from __future__ import annotations

import argparse
from pathlib import Path

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import print_json
from cosim_validation.cli.output_path import check_folder, check_namespaces, checked_output

HELP = "write one robot's record of a case as a CRTK-style rosbag2 (.mcap) or the error dataset CSV (docs/CRTK.md)"

#: The CRTK namespace of each robot model by default (dVRK PSM1, Raven-II gold arm); others: /<model>.
DEFAULT_NAMESPACES = {"dvrk_psm": "/PSM1", "raven2": "/arm1"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim export-crtk``.

    Args:
        parser: The ``cosim export-crtk`` subcommand's parser, to add its arguments to.
    """
    parser.add_argument(
        "run_dir", type=arg_types.path, metavar="RUN_DIR", help="a campaign or session run directory (results.sqlite)"
    )
    parser.add_argument("case", metavar="TEST_ID", help="the case whose record to write")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="FILE.mcap (CRTK bag) or FILE.csv")
    parser.add_argument("--robot", default="physical", help="expected, virtual or physical (default: physical)")
    parser.add_argument("--namespace", default=None, help="the arm's CRTK namespace (default: /PSM1, /arm1, /<model>)")
    parser.add_argument("--tracker-namespace", default="/tracker", help="the tracker's namespace (default /tracker)")


def run(args: argparse.Namespace) -> int:
    """Write the file and say what it holds.

    Args:
        args: The parsed ``cosim export-crtk`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.common.record import RobotRole
    from cosim_validation.error_injection.dataset_io import dataset_of_record, write_csv
    from cosim_validation.error_injection.robot_identity import RobotIdentity
    from cosim_validation.live.ros.crtk_bag import export_crtk_bag
    from cosim_validation.robots.model import RobotConfig
    from cosim_validation.runs.report.run_data import load_run

    out = Path(args.output)
    checked_output("-o", out, {"RUN_DIR": args.run_dir}, (".mcap", ".csv"))
    check_namespaces(
        {
            "--namespace": "/default" if args.namespace is None else args.namespace,
            "--tracker-namespace": args.tracker_namespace,
        }
    )
    if out.exists():
        raise InputError(f"-o {str(out)!r}: already exists; refusing to overwrite it")
    RobotRole.parse(args.robot)
    run_data = load_run(args.run_dir)
    try:
        if run_data.config is None or run_data.kinematics is None:
            raise InputError(f"{args.run_dir}: the run's configuration is gone")
        model = RobotConfig.from_config(run_data.config["robot"]).model.name
        kinematics = run_data.kinematics
        record = run_data.trajectory(args.case, args.robot)
    finally:
        run_data.close()
    check_folder("-o", out)
    namespace = DEFAULT_NAMESPACES.get(model, f"/{model}") if args.namespace is None else args.namespace
    units = tuple(kinematics.chain.joint_unit(j) for j in range(kinematics.n_joints))
    if out.suffix.lower() == ".mcap":
        messages = export_crtk_bag(record, out, namespace, args.tracker_namespace)
        what = f"{messages} messages under {namespace} and {args.tracker_namespace}"
    else:
        write_csv(dataset_of_record(record, RobotIdentity.of(kinematics), units), out)
        messages, what = len(record.t_s), f"{len(record.t_s)} rows"
    if args.json:
        print_json({"out": str(out), "samples": len(record.t_s), "messages": messages, "namespace": namespace})
    else:
        print(f"wrote {out}: {args.case} ({args.robot}, {model}), {len(record.t_s)} samples, {what}")
    return 0
