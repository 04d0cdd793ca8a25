"""``cosim replay``: feed a recorded session (rosbag2 MCAP) into the monitor and compare with the live verdicts."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import format_table, print_json

HELP = "replay a recorded session (MCAP) into the monitor; the verdicts equal the live monitor's"


#: Slowest and fastest paced replay (a 1-minute recording then takes at most 100 minutes); 0 = unpaced
MIN_RATE, MAX_RATE = 0.01, 1000.0
#: The longest wait for a subscriber on every joint-state topic before republishing [s] (an hour)
MAX_SUBSCRIBER_WAIT_S = 3600.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``cosim replay``.

    Args:
        parser: The ``cosim replay`` subcommand's parser, to add its options to.
    """
    parser.add_argument("bag", type=arg_types.path, help="session.mcap (or a rosbag2 folder)")
    parser.add_argument(
        "--config",
        type=arg_types.path,
        default=None,
        help="case-study configuration (robot, anatomy); default: the run directory's copy when the bag is a "
        "session's (RUN/session.mcap), else config/needle_insertion.yaml",
    )
    parser.add_argument(
        "--properties",
        type=arg_types.path,
        default=None,
        help="properties, KPIs and, for someone else's bag, its topics (a 'topics:' section); default: the run "
        "directory's copy, else campaign.properties of the configuration",
    )
    parser.add_argument(
        "--rate", type=float, default=0.0, help="replay speed relative to the recording (0 = as fast as possible)"
    )
    parser.add_argument(
        "--publish", action="store_true", help="also republish every message on its topic (for a live monitor node)"
    )
    parser.add_argument(
        "--wait-for-subscribers",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="with --publish: first wait up to this long for a subscriber on every joint-state topic (0: do not wait)",
    )


def run(args: argparse.Namespace) -> int:
    """Replay, print a verdict table per case, and whether it equals the live monitor's.

    Args:
        args: The parsed ``cosim replay`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.live.ros.replay import ReplayTopics, compare, replay_bag, topics_from_config, unreported
    from cosim_validation.monitor.properties import Status

    if not (args.rate == 0 or MIN_RATE <= args.rate <= MAX_RATE):  # NaN fails both
        raise InputError(
            f"--rate: expected 0 (as fast as possible) or a speed from {MIN_RATE:g} to {MAX_RATE:g} times the "
            f"recording, got {args.rate}"
        )
    if not 0 <= args.wait_for_subscribers <= MAX_SUBSCRIBER_WAIT_S:  # NaN fails too; inf waited for ever
        raise InputError(
            f"--wait-for-subscribers: expected 0 (do not wait) to {MAX_SUBSCRIBER_WAIT_S:g} s, got "
            f"{args.wait_for_subscribers}"
        )
    world = _world(args)
    topics = topics_from_config(world.properties_root)
    joint_topics = (topics or ReplayTopics()).joints.values()
    publisher = _publisher(args.bag, joint_topics, args.wait_for_subscribers) if args.publish else None
    try:
        result = replay_bag(
            args.bag,
            world,
            topics,
            rate=args.rate,
            on_message=publisher.publish if publisher else None,
        )
    finally:
        if publisher is not None:
            publisher.close()
    problems = compare(result) if result.live_reports else []
    not_compared = unreported(result) if result.live_reports else []
    cases = [_case_dict(end, Status) for end in result.cases]
    if args.json:
        print_json(
            {
                "bag": args.bag,
                "messages": result.messages,
                "cases": cases,
                "live_reports": len(result.live_reports),
                "equal_to_live": not problems if result.live_reports else None,
                "differences": problems,
                "not_compared": not_compared,
                "anatomy_repairs": world.repairs,
            }
        )
    else:
        for line in world.repair_lines:
            print(line)
        _print_text(args.bag, result, cases, problems, not_compared)
    return 1 if problems else 0


def _world(args: argparse.Namespace) -> Any:
    """The monitor's world: the files given, else the copies of the bag's run directory, else the shipped ones."""
    from pathlib import Path

    from cosim_validation.assembly.monitor_world import monitor_world_of
    from cosim_validation.live.ros.bag import require_bag
    from cosim_validation.runs.run_inputs import read_manifest, run_monitor_world

    require_bag(args.bag)  # before resolve(): a loop of symbolic links is named, not a RuntimeError
    run_dir = Path(args.bag).resolve().parent
    if args.config is None and args.properties is None and read_manifest(run_dir):
        world = run_monitor_world(run_dir, None, None, lambda text: print(f"warning: {text}", file=sys.stderr))
        if world is not None:
            return world
    return monitor_world_of(args.config or "config/needle_insertion.yaml", args.properties or "")


def _case_dict(end: Any, status: Any) -> dict[str, Any]:
    return {
        "test_id": end.info.test_id,
        "outcome": end.outcome,
        "message": end.message,
        "samples": {r.label: n for r, n in end.conclusion.samples.items()},
        "verdicts": [v.to_dict() for v in end.conclusion.verdicts],
        "violated": sorted(
            {f"{v.property}@{v.robot.label}" for v in end.conclusion.verdicts if v.status is status.VIOLATED}
        ),
        "kpis": [k.to_dict() for k in end.conclusion.kpis],
    }


def _print_text(
    bag: str, result: Any, cases: list[dict[str, Any]], problems: list[str], not_compared: list[str]
) -> None:
    from cosim_validation.live.ros.replay import not_compared_line

    print(f"{bag}: {result.messages} messages, {len(cases)} cases")
    for case in cases:
        samples = ", ".join(f"{r} {n}" for r, n in case["samples"].items())
        print(f"\n{case['test_id']}: {case['outcome']} ({samples} samples)")
        rows = [
            (v["property"], v["robot"], v["status"], _mm(v["margin"], v["unit"]), _first_violation(v))
            for v in case["verdicts"]
        ]
        print(format_table(["property", "robot", "verdict", "margin", "first violation"], rows))
    if result.live_reports:
        print(
            "\nreplayed verdicts equal the live monitor's"
            if not problems
            else "\nreplayed verdicts DIFFER from the live monitor's:\n  " + "\n  ".join(problems)
        )
        for test_id in not_compared:
            print(not_compared_line(test_id))


def _first_violation(verdict: dict[str, Any]) -> str:
    """``10.46 s (injection)``: the time of the first violation and its stage, or ``none``."""
    time_s = verdict.get("first_violation_time_s")
    if time_s is None or time_s != time_s:
        return "none"
    stage = verdict.get("first_violation_stage") or "none"
    return f"{time_s:.2f} s" + (f" ({stage})" if stage != "none" else "")


def _mm(margin: float, unit: str) -> str:
    if margin != margin or margin in (float("inf"), float("-inf")):
        return "-"
    return f"{1000 * margin:.2f} mm" if unit == "m" else f"{margin:.4g} {unit}"


def _publisher(bag: str, joint_topics: Iterable[str], wait_s: float) -> Any:
    """A republisher of every topic of ``bag``, once its joint-state topics have subscribers (or ``wait_s``)."""
    from cosim_validation.live.ros.bag import topics_of
    from cosim_validation.live.ros.republisher import Republisher

    available = topics_of(bag)
    publisher = Republisher({topic: msgtype for topic, (msgtype, _) in available.items()})
    if wait_s > 0:
        missing = publisher.wait_for_subscribers([t for t in joint_topics if t in available], wait_s)
        if missing:
            print(f"note: no subscriber on {', '.join(missing)} after {wait_s:g} s; replaying anyway", file=sys.stderr)
    return publisher
