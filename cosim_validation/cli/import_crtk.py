"""``cosim import-crtk``: a CRTK-style bag or the dataset CSV as an error dataset (Parquet) for ``cosim errors``."""

from __future__ import annotations

import argparse
from pathlib import Path

from cosim_validation.cli.output import print_json

HELP = "read a CRTK-style rosbag2 (.mcap) or the dataset CSV into an error dataset (.parquet) (docs/CRTK.md)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim import-crtk``."""
    parser.add_argument("input", metavar="FILE", help="a CRTK-style .mcap (or rosbag2 folder), or a dataset .csv")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.parquet", help="the error dataset to write")
    parser.add_argument("--config", required=True, help="configuration with the robot the data comes from")
    parser.add_argument("--namespace", default="", help="the arm's CRTK namespace (default: the bag's only arm)")
    parser.add_argument("--tracker-namespace", default="/tracker", help="the tracker's namespace (default /tracker)")


def run(args: argparse.Namespace) -> int:
    """Import, write, and say how many rows (and how many with the marker seen)."""
    from cosim_validation.config import load_case_config, resolve_resource
    from cosim_validation.errors.dataset_io import read_csv, write_parquet
    from cosim_validation.errors.robot_identity import RobotIdentity
    from cosim_validation.exceptions import InputError
    from cosim_validation.robot import RobotConfig
    from cosim_validation.ros.crtk_bag import import_crtk_bag

    source, out = Path(args.input), Path(args.output)
    if out.suffix.lower() != ".parquet":
        raise InputError(f"-o {str(out)!r}: expected a .parquet error dataset")
    if out.exists():
        raise InputError(f"-o {str(out)!r}: already exists; refusing to overwrite it")
    kinematics = RobotConfig.from_config(load_case_config(resolve_resource(args.config))["robot"]).kinematics
    robot = RobotIdentity.of(kinematics)
    units = tuple(kinematics.chain.joint_unit(j) for j in range(kinematics.n_joints))
    if source.suffix.lower() == ".csv":
        dataset = read_csv(source, robot, units)
    else:
        dataset = import_crtk_bag(source, robot, units, args.namespace, args.tracker_namespace)
    write_parquet(dataset, out)
    seen = int(dataset.marker_seen.sum())
    if args.json:
        print_json({"out": str(out), "rows": dataset.n_rows, "marker_seen": seen, "source": dataset.meta["source"]})
    else:
        print(f"wrote {out}: {dataset.n_rows} rows ({seen} with the marker seen) from {dataset.meta['source']}")
    return 0
