"""``cosim testgen``: generate a coverage-oriented test suite ([Actuators 2025], section 4.1) into a Parquet file."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.arg_types import name, seed
from cosim_validation.cli.output import format_table, print_json

HELP = "generate test cases over the target model with measured coverage (grid or random), write a Parquet suite"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options: method, granularity, k, count, region, seed, output.

    Args:
        parser: The ``cosim testgen`` subcommand's parser, to add its options to.
    """
    parser.add_argument(
        "--config",
        type=arg_types.path,
        default="config/needle_insertion.yaml",
        help="configuration file (anatomy, testgen)",
    )
    parser.add_argument(
        "--method", choices=("grid", "random"), default="grid", help="grid: k per cube; random: baseline"
    )
    parser.add_argument("--granularity-mm", type=float, required=True, metavar="G", help="cube edge [mm], > 0")
    parser.add_argument("--per-cube", type=int, default=3, metavar="K", help="targets per non-empty cube (default 3)")
    parser.add_argument(
        "--count", type=int, metavar="N", help="random only: valid targets (default K x non-empty cubes)"
    )
    parser.add_argument(
        "--region", type=name, metavar="NAME", help="target model or configured sub-region (default: testgen.target)"
    )
    parser.add_argument("--seed", type=seed, default=0, metavar="S", help="generator seed (default 0)")
    parser.add_argument("-o", "--output", required=True, type=Path, metavar="SUITE", help="Parquet file to write")


def _rows(metrics: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        ("generator", metrics["generator"]),
        ("granularity [mm]", metrics["granularity_m"] * 1e3),
        ("non-empty cubes", metrics["nonempty_cubes"]),
        ("full cubes", metrics["full_cubes"]),
        ("partial cubes", metrics["partial_cubes"]),
        ("full share [%]", 100.0 * metrics["full_share"]),
        ("valid cases", metrics["valid_cases"]),
        ("points generated", metrics["points_generated"]),
        ("covered cubes", metrics["covered_cubes"]),
        ("coverage [%]", 100.0 * metrics["coverage"]),
        ("max cases in one cube", metrics["max_cases_per_cube"]),
        ("cubes short of K", metrics["gave_up_cubes"]),
        ("cubes empty on 16^3 lattice", metrics["lattice_empty_cubes"]),
        ("generation time [s]", metrics["generation_s"]),
    ]


def _check_flags(args: argparse.Namespace) -> None:
    """The numeric options, checked before any work (the generator checks them too, without the flag names)."""
    from cosim_validation.common.exceptions import InputError

    if not (math.isfinite(args.granularity_mm) and args.granularity_mm * 1e-3 > 0):  # 5e-324 mm is 0 m
        raise InputError(f"--granularity-mm: expected a cube edge > 0 mm, got {args.granularity_mm!r}")
    for flag, value, minimum in (
        ("--per-cube", args.per_cube, 1),
        ("--count", args.count, 1),
    ):
        if value is not None and value < minimum:
            raise InputError(f"{flag}: expected an integer >= {minimum}, got {value!r}")


def run(args: argparse.Namespace) -> int:
    """Generate, write atomically, print the metrics table (or JSON).

    Args:
        args: The parsed ``cosim testgen`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.cli.output_path import checked_output

    checked_output("-o", args.output, {"--config": args.config}, (".parquet",), result=True)
    from cosim_validation.anatomy import load_anatomy
    from cosim_validation.common.config import load_case_config, resolve_resource
    from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config

    _check_flags(args)
    config = load_case_config(resolve_resource(args.config))
    scene = load_anatomy(config["anatomy"])
    cfg = load_testgen_config(config["testgen"])
    request = TestgenRequest(args.method, args.granularity_mm * 1e-3, args.per_cube, args.count, args.region, args.seed)
    # the file's name, not its path: the suite and its id must not depend on where the configuration lies
    raw = {"file": Path(config.source).name, "anatomy": config["anatomy"].value, "testgen": config["testgen"].value}
    suite, metrics = generate_suite(scene, cfg, request, raw)
    suite.write(args.output)
    values = metrics.as_dict()
    if args.json:
        print_json(
            {
                "suite": str(args.output),
                "suite_id": suite.suite_id,
                "region": suite.metadata["region"],
                "metrics": values,
                "anatomy_repairs": scene.repairs(),
            }
        )
    else:
        region = suite.metadata["region"]["name"]
        print(f"suite {suite.suite_id}: {len(suite)} cases in region {region!r} -> {args.output}")
        print("\n".join([*scene.repair_lines(), format_table(["metric", "value"], _rows(values))]))
    return 0
