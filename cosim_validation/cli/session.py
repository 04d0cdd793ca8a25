"""``cosim session``: a digital-twin session as one process per ROS 2 node, recorded and summarised."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.detector_options import add_detector_options
from cosim_validation.cli.output import format_table, print_json
from cosim_validation.cli.output_path import checked_run_dir
from cosim_validation.cli.supervisor_options import add_supervisor_options, supervisor_paths
from cosim_validation.common.config import load_json_file, regular_file_problem

HELP = "run a digital-twin session: the ROS 2 node graph of config/digital_twin.yaml on a suite"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``cosim session``.

    Args:
        parser: The ``cosim session`` subcommand's parser, to add its options to.
    """
    parser.add_argument("--config", type=arg_types.path, default="config/digital_twin.yaml", help="session graph YAML")
    parser.add_argument(
        "--suite",
        type=arg_types.path,
        default=None,
        help="suite (Parquet); default: a grid suite made from the case-study configuration into the run directory",
    )
    parser.add_argument("--cases", type=int, default=3, help="number of cases to run (0 = all of the suite)")
    parser.add_argument("--out", default="", help="run directory (default: runs/session-<time>)")
    parser.add_argument(
        "--validate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="check every setpoint with the state validator (default: validator.enabled of the configuration, "
        "off as shipped; cosim campaign has the same default)",
    )
    parser.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="ROBOT=KIND:OPTIONS",
        help="see a robot through a filter (repeat for more, innermost first): offset (a fixed joint offset, e.g. "
        "physical=offset:joint2=0.001), errors, hazards; the same in a campaign and in a session",
    )
    add_supervisor_options(parser)
    add_detector_options(parser)
    parser.add_argument(
        "--domain-id",
        type=int,
        default=None,
        help="ROS_DOMAIN_ID of the session's nodes (default: a free one of 1-101 that no other session on this "
        "machine uses and where no other ROS 2 node is seen, never the caller's own)",
    )
    parser.add_argument(
        "--discovery-range",
        default="localhost",
        help="ROS_AUTOMATIC_DISCOVERY_RANGE of the nodes: localhost (default), subnet, off, system_default",
    )
    parser.add_argument(
        "--foxglove",
        type=int,
        nargs="?",
        const=8765,
        default=None,
        metavar="PORT",
        help="serve the session live to Foxglove on ws://127.0.0.1:PORT (default 8765; see docs/DASHBOARD.md)",
    )


def run(args: argparse.Namespace) -> int:
    """Start the graph, run the cases, stop, print and write the summary.

    Args:
        args: The parsed ``cosim session`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    import contextlib
    import functools
    from concurrent.futures import ThreadPoolExecutor

    from cosim_validation.common.config import resolve_resource
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.hazards.hazard_watch import check_detector
    from cosim_validation.live.session.default_suite import DEFAULT_SUITE_FILE, make_default_suite
    from cosim_validation.live.session.discovery_scope import DomainLease, check_domain_request
    from cosim_validation.live.session.domain_probe import strangers
    from cosim_validation.live.session.graph import graph_inputs, load_graph
    from cosim_validation.live.session.process_group import TEARDOWN_DUMP_S, node_start_forks
    from cosim_validation.live.session.session_runner import prepare_run_dir, run_session, start_graph, write_summary
    from cosim_validation.runs.run_inputs import capture_inputs
    from cosim_validation.runs.run_lock import RunLock, command_line

    if args.cases < 0:
        raise InputError(f"--cases must be >= 0, got {args.cases}")
    graph = _with_run_files(load_graph(resolve_resource(args.config)))
    _check_node_files(graph)  # the nodes' configuration files, and a bad suite, are found before any node starts
    given_suite = _checked_suite(args.suite)
    if args.validate is not None:
        graph = graph.with_parameters("controller", {"validate_setpoints": bool(args.validate)})
    graph = _with_filters(graph, args.filter)
    supervisor, scenario = supervisor_paths(args)
    check_detector(args.detector, args.stop_on_alarm, supervisor)  # a session stopping on alarms names --supervisor
    chosen = {"supervisor": supervisor, "supervisor_scenario": scenario, "detector": args.detector}
    if args.stop_on_alarm:
        chosen["stop_on_alarm"] = True
    graph = graph.with_parameters("controller", {k: v for k, v in chosen.items() if v is not None})
    _check_controllers(graph)  # what the controller node will build, checked as it will check it, before it starts
    if args.foxglove is not None:
        from cosim_validation.live.dashboard.foxglove_graph import with_foxglove_bridge

        graph = with_foxglove_bridge(graph, args.foxglove)
    run_dir = Path(args.out or f"runs/session-{time.strftime('%Y%m%d-%H%M%S')}")
    checked_run_dir("--out", run_dir, {"--config": args.config, "--suite": args.suite})  # before any work
    check_domain_request(args.domain_id, args.discovery_range)  # before any node process starts
    node_start_forks(os.environ)  # how the nodes start (COSIM_NODE_START), checked before anything is written
    prepare_run_dir(run_dir)
    nodes_suite = given_suite or run_dir / DEFAULT_SUITE_FILE
    with contextlib.ExitStack() as held:
        held.enter_context(RunLock(run_dir, command_line()))
        lease = functools.partial(DomainLease.acquire, args.domain_id, args.discovery_range, probe=strangers)
        nodes = functools.partial(start_graph, graph, run_dir, str(nodes_suite), args.cases, console=not args.json)
        # a domain chosen here is probed while the nodes load their modules (the probe mostly waits for discovery),
        # and the default suite is made meanwhile (its CPU work beside the probe's wait); a given one is leased first
        # (a refusal then starts nothing)
        making = None
        if args.domain_id is None:
            started = held.enter_context(nodes())
            if given_suite is None:
                making = held.enter_context(ThreadPoolExecutor(1, "default-suite")).submit(
                    make_default_suite, graph, run_dir
                )
            scope = held.enter_context(lease())
        else:
            scope = held.enter_context(lease())
            started = held.enter_context(nodes())
        capture_inputs(run_dir, graph_inputs(graph))  # what the run is made with, for report, replay, completion
        suite = given_suite or _default_suite(graph, run_dir, args.json, making)
        repairs, repair_lines = _anatomy_repairs(graph)
        # started only now: two threads importing the same libraries at once (the suite's and the world's anatomy,
        # trimesh, open3d) can meet in a library's own import cycle, and Python then hands one of them a
        # half-imported module (seen under load: "needs the optional package 'open3d'")
        world = _bag_check_world(graph, run_dir)  # ready when the nodes stop
        if not args.json:
            print(f"session: {len(graph.nodes)} nodes from {graph.source}, suite {suite}, run directory {run_dir}")
            print(f"ROS 2: {scope.describe()}")
            for line in repair_lines:
                print(line)
            if args.foxglove is not None:
                print(f"foxglove: ws://127.0.0.1:{args.foxglove} (open it with the layout config/foxglove_layout.json)")
        outcome = run_session(
            graph, run_dir, str(suite), args.cases, console=not args.json, env=scope.env(), started=started
        )
        _stop_on_strangers(outcome, scope, run_dir)
        for name, sig in () if args.json else outcome.restarted.items():
            print(
                f"warning: node {name} crashed ({sig}) before it was ready and was started again "
                f"(both runs in {run_dir / 'logs' / name}.log)"
            )
        if outcome.escalated and not args.json:
            for name, sig in outcome.escalated.items():
                print(f"warning: node {name} did not stop on SIGINT; {sig} sent (see {run_dir / 'logs' / name}.log)")
        for name in [] if args.json else outcome.teardown_hung:
            print(
                f"warning: node {name}: its ROS teardown (rclpy destroy_node in Fast DDS) hung after its outputs "
                f"were written; its watchdog ended it after {TEARDOWN_DUMP_S:g} s, status 1 (stacks in "
                f"{run_dir / 'logs' / name}.log)"
            )
        recovered = _recover_bag(run_dir, args.json)  # a recorder that died left its bag unfinished
        summary = {**scope.as_dict(), **summarise(run_dir), **recovered, "anatomy_repairs": repairs}
        summary["bag_check"] = _complete_or_skip(world, run_dir, args.json, outcome.status == "interrupted")
        if outcome.status == "completed" and summary["bag_check"].get("replay_equals_live") is False:
            outcome.status = "failed"  # the monitor gave other verdicts live than on the recorded messages
            outcome.message = "the replayed bag's verdicts differ from the live monitor's (see bag_check)"
        path = write_summary(outcome, summary)
    if args.json:
        print_json(
            {
                "status": outcome.status,
                "message": outcome.message,
                "run_dir": str(run_dir.resolve()),
                "wall_s": outcome.wall_s,
                **summary,
            }
        )
    else:
        _print_text(outcome.status, outcome.message, outcome.wall_s, summary, run_dir / path.name)  # as given
    return 0 if outcome.status == "completed" else (130 if outcome.status == "interrupted" else 1)


def _stop_on_strangers(outcome: Any, scope: Any, run_dir: Path) -> None:
    """End the session with one error if the recorder found a topic of ours with a type that is not ours.

    Raises:
        ForeignTopicsError: A ROS 2 node that is not of the session published on one of its topics; the run
            directory keeps ``summary.json`` (status ``failed``) and the recorder's list of such topics.
    """
    from cosim_validation.live.ros.recorded_types import foreign_file
    from cosim_validation.live.session.session_runner import ForeignTopicsError, write_summary

    path = foreign_file(run_dir / "session.mcap")  # as given: the message is stored
    if not path.is_file():
        return
    found = load_json_file(path)
    topic = min(found)
    publishers = ", ".join(found[topic].get("publishers", [])) or "an unnamed participant"
    outcome.status = "failed"
    outcome.message = (
        f"{path}: {topic} carries {', '.join(found[topic].get('types', []))} (expected {found[topic].get('expected')}) "
        f"from {publishers}, a ROS 2 node that is not of this session, on ROS_DOMAIN_ID={scope.domain_id}; stop it or "
        "choose another --domain-id (without one, cosim session takes a domain with no other node)"
    )
    write_summary(outcome, {**scope.as_dict(), "foreign_topics": found})
    raise ForeignTopicsError(outcome.message)


def _with_filters(graph: Any, texts: list[str]) -> Any:
    """``graph`` with a proxy node applying the filters in front of each filtered robot's driver."""
    from cosim_validation.robots.filters.robot_filters import FilterSpec

    specs = [FilterSpec.parse(text) for text in texts]
    if specs:
        _check_filters(graph, texts, specs)
    for robot in dict.fromkeys(spec.robot for spec in specs):
        graph = graph.with_robot_filters(robot.label, [s.text for s in specs if s.robot is robot])
    return graph


def _check_filters(graph: Any, texts: list[str], specs: list[Any]) -> None:
    """Build each filter once with the session's configuration, before any node starts.

    A filter's proxy node found ``joint2=nan`` after the graph was up, and the run directory was left behind.

    Raises:
        InputError: A bad filter, named as given to ``--filter``.
    """
    from cosim_validation.common.config import load_case_config
    from cosim_validation.common.record import RobotRole
    from cosim_validation.live.session.graph import graph_inputs
    from cosim_validation.robots.filters.robot_filters import check_filters
    from cosim_validation.robots.model import RobotConfig

    path = graph_inputs(graph).get("config")
    if path is None:
        return
    config = load_case_config(path)
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    pairs = [(spec.robot.label, spec.text) for spec in specs]  # a bad one names --filter (check_filters)
    check_filters(config, pairs, (RobotRole.VIRTUAL, RobotRole.PHYSICAL), kinematics)


def _anatomy_repairs(graph: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """What ``repair: true`` did to the session's anatomy (the nodes load the same scene), as dicts and lines."""
    from cosim_validation.anatomy import load_anatomy
    from cosim_validation.common.config import load_case_config
    from cosim_validation.live.session.graph import graph_inputs

    config = graph_inputs(graph).get("config")
    if config is None:
        return [], []
    scene = load_anatomy(load_case_config(config)["anatomy"])
    return scene.repairs(), scene.repair_lines()


#: The files of a session's nodes that ``cosim session`` reads from the run directory once they stop: the recorder's
#: bag (trajectories, bag check, recovery) and the test generator's results (summary, report)
RUN_FILES = {
    "recorder": ("output", "{run_dir}/session.mcap"),
    "test_generator": ("results", "{run_dir}/results.sqlite"),
}


def _with_run_files(graph: Any) -> Any:
    """``graph`` with its recorder and test generator writing the run directory's files where it leaves them out.

    A graph that names another file is refused before anything starts (a bag written elsewhere lost the run's
    trajectories and read "bag check skipped").
    """
    from cosim_validation.common.exceptions import ConfigError

    for executable, (key, expected) in RUN_FILES.items():
        running = [i for i, node in enumerate(graph.nodes) if node.executable == executable]
        if len(running) > 1:  # both would write the one file (the second recorder ended in a FileExistsError)
            raise ConfigError(
                graph.source,
                f"nodes[{running[1]}].executable",
                f"a session runs one {executable} (it writes {expected}); nodes[{running[0]}] runs it already",
            )
        for index, node in enumerate(graph.nodes):
            given = node.parameters.get(key)
            if node.executable == executable and given not in (None, expected):
                raise ConfigError(
                    graph.source,
                    f"nodes[{index}].parameters.{key}",
                    f"cosim session reads this file from the run directory once the nodes stop; expected "
                    f"{expected!r} or no value, got {given!r}",
                )
        graph = graph.with_parameters(executable, {key: expected})
    return graph


def _check_node_files(graph: Any) -> None:
    """Read the configuration and property files the nodes are given (a node would fail on them after start)."""
    from cosim_validation.common.config import load_case_config, resolve_resource
    from cosim_validation.common.exceptions import ConfigError, CosimError
    from cosim_validation.monitor.properties import PropertySet

    readers: dict[str, Callable[[Path], object]] = {
        "config": lambda path: load_case_config(path),
        "properties": PropertySet.load,
    }
    for index, node in enumerate(graph.nodes):
        for name, read in readers.items():
            value = node.parameters.get(name)
            if not isinstance(value, str) or not value or "{" in value:  # "": the configuration's own file
                continue
            try:
                read(resolve_resource(value))
            except CosimError as exc:
                raise ConfigError(graph.source, f"nodes[{index}].parameters.{name}", str(exc)) from None


def _check_controllers(graph: Any) -> None:
    """Check each controller node's case assembly from its parameters, as the node will build it (check_spec).

    A supervisor scenario without a supervisor, a bad supervisor file or detector are one error before any node
    starts, not a node that fails after every other one started.
    """
    from cosim_validation.assembly.spec_check import check_spec
    from cosim_validation.live.session.node_parameters import ControllerParams

    for node in graph.nodes:
        if node.executable != "controller" or "{" in str(node.parameters.get("config", "")):
            continue
        declared = {k: v for k, v in node.parameters.items() if k != "use_sim_time"}  # rclpy's own, not the node's
        check_spec(ControllerParams.from_values(declared, node.name).assembly_spec())


def _checked_suite(given: str | None) -> Path | None:
    """The given suite file, read and checked (None if none was given)."""
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.testgen import Suite

    if not given:
        return None
    path = Path(given)
    problem = regular_file_problem(path)
    if problem is not None:
        raise InputError(f"--suite {given!r}: {'no such file' if problem == 'not found' else problem}")
    Suite.read(path)  # names the file and what is wrong with it
    return path


def _default_suite(graph: Any, run_dir: Path, as_json: bool, making: Future[Any] | None) -> Path:
    """The default grid suite in the run directory: the one ``making`` makes, else one made now."""
    from cosim_validation.live.session.default_suite import make_default_suite

    made = making.result() if making is not None else make_default_suite(graph, run_dir)
    if not as_json:
        print(f"suite: {made.description} -> {made.path}")
    return made.path


def _bag_check_world(graph: Any, run_dir: Path) -> Any:
    """The bag check's monitor world, built in the background from now on; None if the graph has no monitor."""
    from cosim_validation.live.session.completion_world import WorldInBackground
    from cosim_validation.live.session.graph import graph_inputs

    if not any(n.executable == "monitor" for n in graph.nodes):
        return None
    inputs = graph_inputs(graph)
    return WorldInBackground(run_dir, inputs.get("config"), inputs.get("properties"))


def _complete_or_skip(world: Any, run_dir: Path, as_json: bool, interrupted: bool) -> dict[str, Any]:
    """:func:`_complete`, which a second Ctrl-C skips (the nodes are stopped already; the bag stays)."""
    from cosim_validation.common.interrupts import interrupted as caused_by_ctrl_c

    try:
        if interrupted and not as_json:
            print(f"nodes stopped; completing {run_dir} from session.mcap (Ctrl-C again to skip)", flush=True)
        return _complete(world, run_dir, as_json)
    except BaseException as exc:
        if not caused_by_ctrl_c(exc):  # a Ctrl-C during a compiled module's import arrives as an ImportError
            raise
        return {"skipped": "second Ctrl-C: trajectories not copied from session.mcap, replay check not run"}


def _complete(world: Any, run_dir: Path, as_json: bool) -> dict[str, Any]:
    """Trajectories from the bag into results.sqlite, and the replay-equals-live check.

    Args:
        world: The monitor world in the making (:func:`_bag_check_world`); None if the graph has no monitor.
        run_dir: The session's run directory.
        as_json: Print no warnings (the JSON summary carries the outcome).
    """
    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.live.ros.session_records import complete_session

    if world is None or not (run_dir / "session.mcap").is_file() or not (run_dir / "results.sqlite").is_file():
        return {"skipped": "no monitor, bag or results database"}
    built = world.result(_warner(as_json))
    if built is None:
        return {"skipped": "no configuration for the monitor"}
    try:
        return complete_session(run_dir, built)
    except CosimError as exc:  # a damaged bag: the live results stay as they are
        if not as_json:
            print(f"warning: could not replay session.mcap: {exc}")
        return {"error": str(exc)}


def _warner(as_json: bool) -> Any:
    import sys

    def warn(message: str) -> None:
        if not as_json:
            print(f"warning: {message}", file=sys.stderr)

    return warn


def _recover_bag(run_dir: Path, as_json: bool) -> dict[str, Any]:
    """A recorder that died left its bag unfinished: finish it into session.mcap."""
    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.live.ros.bag_recovery import in_progress_bag, recover_bag

    bag = run_dir / "session.mcap"
    part = None if bag.exists() else in_progress_bag(bag)
    if part is None:
        return {}
    try:
        recovered = recover_bag(part, bag)
    except CosimError as exc:
        if not as_json:
            print(f"warning: the recorder left {part} unfinished and it cannot be recovered: {exc}")
        return {"bag_recovery_error": str(exc)}
    part.unlink()
    if not as_json:
        print(f"the recorder did not finish the bag: {recovered.message()}")
    return {"bag_recovered": {"source": str(part), "messages": recovered.messages, "topics": recovered.topics}}


def summarise(run_dir: Path) -> dict[str, Any]:
    """Cases, verdicts and bag contents of a finished (or interrupted) session.

    Args:
        run_dir: The session's run directory (``results.sqlite`` and ``session.mcap``; either may be missing).
    """
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.live.ros.bag import topics_of
    from cosim_validation.live.ros.recorded_types import skipped_file
    from cosim_validation.runs.campaign.results_db import ResultsDB

    summary: dict[str, Any] = {"cases": {}, "verdicts": {}, "bag_topics": {}}
    db_path, bag_path = run_dir / "results.sqlite", run_dir / "session.mcap"
    if db_path.exists():
        with ResultsDB.open(db_path) as db:
            for case in db.cases():
                summary["cases"][case.outcome] = summary["cases"].get(case.outcome, 0) + 1
            for verdict in db.verdicts():
                key = f"{verdict.robot}/{verdict.status}"
                summary["verdicts"][key] = summary["verdicts"].get(key, 0) + 1
    try:
        summary["bag_topics"] = {t: {"type": ty, "messages": n} for t, (ty, n) in topics_of(bag_path).items()}
    except InputError as exc:
        summary["bag_error"] = str(exc)
    skipped = skipped_file(bag_path)  # topics of types the recorder does not know
    if skipped.is_file():
        summary["recorder_skipped_topics"] = load_json_file(skipped)
    return summary


def _print_text(status: str, message: str, wall_s: float, summary: dict[str, Any], path: Path) -> None:
    from cosim_validation.live.ros.replay import not_compared_line

    print(f"\nsession {status} in {wall_s:.1f} s: {message}")
    if summary["cases"]:
        print("cases: " + ", ".join(f"{n} {k}" for k, n in sorted(summary["cases"].items())))
    if summary["verdicts"]:
        print("verdicts: " + ", ".join(f"{n} {k}" for k, n in sorted(summary["verdicts"].items())))
    rows = [(t, v["type"], v["messages"]) for t, v in sorted(summary["bag_topics"].items())]
    if rows:
        print("\nsession.mcap:\n" + format_table(["topic", "type", "messages"], rows))
    for topic, skipped in sorted(summary.get("recorder_skipped_topics", {}).items()):
        print(f"not recorded: {topic} ({skipped['reason']})")
    check = summary.get("bag_check", {})
    if "replay_equals_live" in check:
        verdict = "equal" if check["replay_equals_live"] else "NOT equal: " + "; ".join(check["replay_differences"])
        stored = check["cases_with_trajectories"]
        print(
            f"\nreplayed the bag: verdicts {verdict} to the live monitor's; trajectories of "
            f"{stored} case{'' if stored == 1 else 's'} stored"
        )
        for test_id in check.get("not_compared", []):  # a Ctrl-C or a dead node stopped the recording first
            print(not_compared_line(test_id))
    elif "skipped" in check:
        print(f"\nbag check skipped: {check['skipped']}")
    written = [name for name in ("session.mcap", "results.sqlite", "summary.json") if (path.parent / name).is_file()]
    print(f"wrote {path.parent}: {', '.join(written)}")  # only what is there (a bag that could not be recovered is not)
