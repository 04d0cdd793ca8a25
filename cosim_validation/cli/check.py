"""``cosim check``: evaluate properties, KPIs and behaviour machines on stored trajectory records."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.arg_types import coordinate

HELP = "check properties, KPIs and behaviour machines on trajectory records (.npz); exit 2 if one is violated"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim check``.

    Args:
        parser: The ``cosim check`` subcommand's parser, to add its arguments to.
    """
    parser.add_argument(
        "traces", nargs="+", type=arg_types.path, metavar="TRACE", help="TrajectoryRecord .npz files (e.g. run outputs)"
    )
    parser.add_argument(
        "--properties",
        type=arg_types.path,
        default=None,
        help="properties file (default: campaign.properties of --config, as a campaign)",
    )
    parser.add_argument(
        "--expected",
        help="the expected (planned) record; default: a TRACE whose robot is 'expected', if one is given",
    )
    parser.add_argument(
        "--config",
        type=arg_types.path,
        default="config/needle_insertion.yaml",
        help="case-study configuration: the robot (self-collision), the anatomy (obstacles), the property file",
    )
    parser.add_argument("--no-scene", action="store_true", help="no obstacles (obstacle properties are unknown)")
    parser.add_argument(
        "--no-self-collision", action="store_true", help="no self-collision check (that property is unknown)"
    )
    parser.add_argument("--target", nargs=3, type=coordinate, metavar=("X", "Y", "Z"), help="target in base_link [m]")
    parser.add_argument("--no-machines", action="store_true", help="skip the behaviour machines")


def _check_expected(path: str, expected: Any, records: list[Any], traces: list[str]) -> None:
    """``--expected`` must be a plan: a record of the expected robot; one of another test id is said in a warning.

    A robot's own record as the plan judged it against itself (``tip_follows_plan holds``). The test ids may differ
    rightly: a record imported from a recording (``cosim import-crtk``) is named after its file.

    Raises:
        InputError: Another robot's record, or one with no instant in common with a trace.
    """
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.common.record import RobotRole

    if expected.robot is not RobotRole.EXPECTED:
        raise InputError(
            f"--expected {path}: a record of the {expected.robot.label} robot; expected the expected (planned) "
            "trajectory of the case (robot 'expected')"
        )
    for trace, record in zip(traces, records, strict=True):
        if record.n_samples and expected.n_samples and not _overlap(record.t_s, expected.t_s):
            raise InputError(  # a plan 1e9 s later was compared as if at the same times: "violated -186 mm"
                f"--expected {path}: its times ({_span(expected.t_s)}) and those of {trace} ({_span(record.t_s)}) have "
                "no instant in common; expected the plan of this run, on the same clock"
            )
        if record.test_id and expected.test_id and record.test_id != expected.test_id:
            print(
                f"warning: --expected {path}: the plan of case {expected.test_id!r}, but {trace} is case "
                f"{record.test_id!r} (fine for a recording imported under its file's name; else the wrong plan)",
                file=sys.stderr,
            )


def _overlap(a: Any, b: Any) -> bool:
    """Whether the time spans of ``a`` and ``b`` (sorted arrays of times [s]) share an instant."""
    return bool(a[0] <= b[-1] and b[0] <= a[-1])


def _span(t_s: Any) -> str:
    """``t = first .. last s``."""
    return f"t = {t_s[0]:.3f} .. {t_s[-1]:.3f} s"  # :g printed an epoch span as 1e+09 .. 1e+09


def run(args: argparse.Namespace) -> int:
    """Evaluate and print; 0 if nothing is violated, 2 otherwise.

    Args:
        args: The parsed ``cosim check`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    import numpy as np

    from cosim_validation.assembly import check_records, monitor_world_of
    from cosim_validation.cli.output import format_table, print_json
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.common.record import RobotRole, TrajectoryRecord
    from cosim_validation.monitor.properties import Status
    from cosim_validation.monitor.properties.scene_context import record_target

    records = [TrajectoryRecord.load(Path(p)) for p in args.traces]
    expected = TrajectoryRecord.load(Path(args.expected)) if args.expected else None
    named = [(str(p), r) for p, r in zip(args.traces, records, strict=True)]
    for path, record in named + ([(args.expected, expected)] if expected is not None else []):
        try:
            record_target(record)  # the target stored with it is read later, where the file is not known any more
        except InputError as exc:
            raise InputError(f"{path}: {exc}") from None
        if record.n_samples == 0:  # every verdict would be "unknown (empty trace)" and the exit code 0, as a pass
            raise InputError(f"{path}: the record holds no samples: nothing to check")
        if record.n_samples > 1 and record.t_s[-1] == record.t_s[0]:  # a motion of no duration: every speed infinite
            n, t0 = record.n_samples, record.t_s[0]
            raise InputError(f"{path}: time does not advance: all {n} samples at t = {t0:g} s")
    if expected is not None:
        _check_expected(args.expected, expected, records, args.traces)
    if expected is None:
        expected = next((r for r in records if r.robot is RobotRole.EXPECTED), None)
    world = monitor_world_of(args.config, args.properties or "")
    target = np.asarray(args.target, dtype=np.float64) if args.target else None
    reports = check_records(
        world,
        records,
        expected,
        target,
        machines=not args.no_machines,
        sources=args.traces,
        expected_source=f"--expected {args.expected}" if args.expected else "the expected record",
        obstacles=not args.no_scene,
        self_collision=not args.no_self_collision,
    )
    violated = any(v.status is Status.VIOLATED for rep in reports for v in rep.verdicts)
    if args.json:
        for line in world.repair_lines:  # the JSON on stdout is the list of reports
            print(f"note: {line}", file=sys.stderr)
        print_json([rep.to_dict() for rep in reports])
        return 2 if violated else 0
    for line in world.repair_lines:
        print(line)
    for rep in reports:
        print(f"{rep.source}: test {rep.test_id!r}, {rep.robot} robot ({rep.backend}), {rep.n_samples} samples")
        print(format_table(_VERDICT_HEADERS, [_verdict_row(v) for v in rep.verdicts]))
        if rep.kpis:
            print()
            print(format_table(("kpi", "stage", "value", "unit", "note"), [_kpi_row(k) for k in rep.kpis]))
        print()
    return 2 if violated else 0


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
