"""``cosim import-crtk``: a CRTK-style bag or the dataset CSV as an error dataset or a trajectory record.

The error dataset (Parquet) is for ``cosim errors``, the trajectory record (.npz) for ``cosim check``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import print_json, warn_line
from cosim_validation.cli.output_path import check_namespaces, checked_output

if TYPE_CHECKING:
    from cosim_validation.error_injection.dataset import ErrorDataset
    from cosim_validation.robots.model import Kinematics

HELP = (
    "read a CRTK-style rosbag2 (.mcap) or the dataset CSV into an error dataset (.parquet) or a trajectory record "
    "(.npz, for cosim check) (docs/CRTK.md)"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim import-crtk``.

    Args:
        parser: The ``cosim import-crtk`` subcommand's parser, to add its arguments to.
    """
    parser.add_argument(
        "input", type=arg_types.path, metavar="FILE", help="a CRTK-style .mcap (or rosbag2 folder), or a dataset .csv"
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE.parquet|FILE.npz",
        help="what to write: an error dataset (.parquet) or a trajectory record (.npz; stage none, no plan known)",
    )
    parser.add_argument(
        "--config", type=arg_types.path, required=True, help="configuration with the robot the data comes from"
    )
    parser.add_argument("--namespace", default="", help="the arm's CRTK namespace (default: the bag's only arm)")
    parser.add_argument("--tracker-namespace", default="/tracker", help="the tracker's namespace (default /tracker)")
    parser.add_argument("--test-id", default=None, help="the record's test id (.npz only; default: the input's name)")
    parser.add_argument(
        "--robot", default="physical", choices=("virtual", "physical"), help="the record's robot role (.npz only)"
    )


def run(args: argparse.Namespace) -> int:
    """Import, write, and say how many rows or samples (and how many with the marker seen).

    Args:
        args: The parsed ``cosim import-crtk`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.common.config import load_case_config, resolve_resource
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.error_injection.dataset_io import read_csv, write_parquet
    from cosim_validation.error_injection.joint_range import check_joint_range
    from cosim_validation.error_injection.robot_identity import RobotIdentity
    from cosim_validation.live.ros.crtk_bag import import_crtk_bag
    from cosim_validation.robots.model import RobotConfig

    source, out = Path(args.input), Path(args.output)
    checked_output("-o", out, {"INPUT": source, "--config": args.config}, (".parquet", ".npz"))
    check_namespaces({"--namespace": args.namespace or "/default", "--tracker-namespace": args.tracker_namespace})
    if out.exists():
        raise InputError(f"-o {str(out)!r}: already exists; refusing to overwrite it")
    kinematics = RobotConfig.from_config(load_case_config(resolve_resource(args.config))["robot"]).kinematics
    robot = RobotIdentity.of(kinematics)
    units = tuple(kinematics.chain.joint_unit(j) for j in range(kinematics.n_joints))
    if source.suffix.lower() == ".csv":
        dataset = read_csv(source, robot, units, warn_line)
    else:
        dataset = import_crtk_bag(source, robot, units, args.namespace, args.tracker_namespace)
    check_joint_range(dataset, kinematics, str(source))
    seen = int(dataset.marker_seen.sum())
    if out.suffix.lower() == ".npz":
        return _write_record(args, dataset, kinematics, source, out, seen)
    write_parquet(dataset, out)
    if args.json:
        print_json({"out": str(out), "rows": dataset.n_rows, "marker_seen": seen, "source": dataset.meta["source"]})
    else:
        print(f"wrote {out}: {dataset.n_rows} rows ({seen} with the marker seen) from {dataset.meta['source']}")
    return 0


def _write_record(
    args: argparse.Namespace, dataset: ErrorDataset, kinematics: Kinematics, source: Path, out: Path, seen: int
) -> int:
    """Write the dataset's rows as one trajectory record (errors.record_of_dataset) and say so."""
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.common.record import RobotRole
    from cosim_validation.common.record.trajectory_record import test_id_problem
    from cosim_validation.error_injection.record_of_dataset import record_of_dataset

    test_id = source.stem if args.test_id is None else args.test_id
    problem = test_id_problem(test_id) or ("expected a name, got an empty text" if not test_id else "")
    if problem:
        where = "--test-id" if args.test_id is not None else f"{source.name}: its name, the default --test-id,"
        raise InputError(f"{where} {test_id!r}: {problem}")
    record = record_of_dataset(
        dataset, kinematics, test_id, RobotRole.parse(args.robot), f"crtk import of {source.name}", str(source)
    )
    record.save(out)
    if args.json:
        print_json(
            {
                "out": str(out),
                "test_id": test_id,
                "robot": record.robot.label,
                "samples": record.n_samples,
                "marker_seen": seen,
                "source": dataset.meta["source"],
            }
        )
    else:
        print(
            f"wrote {out}: record {test_id!r} ({record.robot.label}), {record.n_samples} samples "
            f"({seen} with the marker seen), stage none (no plan) from {dataset.meta['source']}"
        )
    return 0
