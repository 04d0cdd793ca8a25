"""``cosim check``: evaluate properties, KPIs and behaviour machines on stored trajectory records."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

HELP = "check properties, KPIs and behaviour machines on trajectory records (.npz); exit 2 if one is violated"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim check``."""
    parser.add_argument("traces", nargs="+", metavar="TRACE", help="TrajectoryRecord .npz files (e.g. run outputs)")
    parser.add_argument(
        "--properties", default="config/properties.yaml", help="properties file (default: the shipped one)"
    )
    parser.add_argument(
        "--expected",
        help="the expected (planned) record; default: a TRACE whose robot is 'expected', if one is given",
    )
    parser.add_argument(
        "--config", default="config/needle_insertion.yaml", help="configuration whose anatomy gives the obstacles"
    )
    parser.add_argument("--no-scene", action="store_true", help="no obstacles (obstacle properties are unknown)")
    parser.add_argument(
        "--no-self-collision", action="store_true", help="no self-collision check (that property is unknown)"
    )
    parser.add_argument("--target", nargs=3, type=float, metavar=("X", "Y", "Z"), help="target in base_link [m]")
    parser.add_argument("--no-machines", action="store_true", help="skip the behaviour machines")


def run(args: argparse.Namespace) -> int:
    """Evaluate and print; 0 if nothing is violated, 2 otherwise."""
    import numpy as np

    from cosim_validation.cli.output import format_table, print_json
    from cosim_validation.config import load_case_config, resolve_resource
    from cosim_validation.properties import PropertySet, Status
    from cosim_validation.properties.checking import check_records
    from cosim_validation.record import RobotRole, TrajectoryRecord

    properties = PropertySet.load(resolve_resource(args.properties))
    records = [TrajectoryRecord.load(Path(p)) for p in args.traces]
    expected = TrajectoryRecord.load(Path(args.expected)) if args.expected else None
    if expected is None:
        expected = next((r for r in records if r.robot is RobotRole.EXPECTED), None)
    obstacles = {}
    if not args.no_scene:
        from cosim_validation.anatomy import load_anatomy
        from cosim_validation.properties.scene_context import scene_obstacles

        obstacles = scene_obstacles(load_anatomy(load_case_config(resolve_resource(args.config))["anatomy"]))
    target = np.asarray(args.target, dtype=np.float64) if args.target else None
    config_path = resolve_resource(args.config)
    files = {id(record): path for record, path in zip(records, args.traces, strict=True)}
    if expected is not None and args.expected:
        files[id(expected)] = args.expected
    self_collision = None if args.no_self_collision else _self_collision(load_case_config(config_path), files)
    reports = check_records(
        properties, records, expected, obstacles, target,
        machines=not args.no_machines, sources=args.traces, self_collision=self_collision,
    )  # fmt: skip
    violated = any(v.status is Status.VIOLATED for rep in reports for v in rep.verdicts)
    if args.json:
        print_json([rep.to_dict() for rep in reports])
        return 2 if violated else 0
    for rep in reports:
        print(f"{rep.source}: test {rep.test_id!r}, {rep.robot} robot ({rep.backend}), {rep.n_samples} samples")
        print(format_table(_VERDICT_HEADERS, [_verdict_row(v) for v in rep.verdicts]))
        if rep.kpis:
            print()
            print(format_table(("kpi", "stage", "value", "unit", "note"), [_kpi_row(k) for k in rep.kpis]))
        print()
    return 2 if violated else 0


def _self_collision(config: Any, files: dict[int, str]) -> Any:
    """Record -> the robot's self-collision check with the record's needle (built once per needle length).

    ``files`` names each record's file (by ``id(record)``) for the error of a needle the arm cannot carry.
    """
    from cosim_validation.exceptions import InputError
    from cosim_validation.robot import RobotConfig, SelfCollision
    from cosim_validation.robot.errors import KinematicsInputError

    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    checks: dict[float, Any] = {}

    def for_record(record: Any) -> Any:
        length = float(record.needle_length_m)
        if length not in checks:
            try:
                checks[length] = SelfCollision(kinematics.with_needle_length(length)).in_collision
            except KinematicsInputError as exc:
                raise InputError(f"{files.get(id(record), record.test_id)}: header: {exc}") from None
        return checks[length]

    return for_record


_VERDICT_HEADERS = ("property", "status", "margin", "unit", "first violation [s]", "stage", "note")


def _display(value: float, unit: str) -> tuple[float, str]:
    """SI value to the CLI's units: mm for m, deg for rad."""
    if unit == "m":
        return value * 1e3, "mm"
    if unit == "rad":
        return math.degrees(value), "deg"
    return value, unit


def _verdict_row(v: Any) -> list[Any]:
    margin, unit = _display(v.margin, v.unit)
    stage = v.first_violation_stage.label if not math.isnan(v.first_violation_time_s) else ""
    return [v.property, v.status.label, margin, unit, v.first_violation_time_s, stage, v.reason]


def _kpi_row(k: Any) -> list[Any]:
    value, unit = _display(k.value, k.unit)
    return [k.name, k.stage.label if k.stage else "case", value, unit, k.reason]
