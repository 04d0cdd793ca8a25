"""``cosim dashboard``: the digital-twin dashboard without rqt, on a live session or a recorded bag."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.output import print_json
from cosim_validation.cli.output_path import check_folder, checked_output
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.ros_names import ros_name_problem

#: The longest --live --screenshot listens [s]: an hour (Qt's timer takes at most about 24 days in milliseconds).
MAX_LISTEN_S = 3600.0

HELP = "watch a digital-twin session (live or from its bag), or render the dashboard to a PNG"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``cosim dashboard``.

    Args:
        parser: The ``cosim dashboard`` subcommand's parser, to add its options to.
    """
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--bag", type=arg_types.path, default=None, help="a recorded session (session.mcap): play, pause, seek"
    )
    source.add_argument("--live", action="store_true", help="join a running session's ROS 2 graph")
    source.add_argument(
        "--foxglove-layout", default="", metavar="OUT.json", help="write the Foxglove layout made from --graph"
    )
    parser.add_argument(
        "--domain-id",
        type=int,
        default=None,
        help="ROS domain of the session (default: the domain of the one cosim session running on this machine; "
        "with none running, ROS_DOMAIN_ID, else 0)",
    )
    parser.add_argument(
        "--graph", type=arg_types.path, default="config/digital_twin.yaml", help="session graph YAML (robots, topics)"
    )
    parser.add_argument("--screenshot", default="", metavar="OUT.png", help="render off-screen into a PNG and exit")
    parser.add_argument(
        "--at",
        type=float,
        default=None,
        help="with --bag: the bag time shown [s from its start, default: the end]; "
        "with --live: seconds to listen before the screenshot (default 10)",
    )
    parser.add_argument("--rate", type=float, default=1.0, help="playback speed of --bag (bag seconds per second)")
    parser.add_argument(
        "--extra-topic",
        action="append",
        default=[],
        metavar="TOPIC",
        help="an extra alert/state topic of any type (repeatable; /diagnostics is always shown)",
    )
    parser.add_argument("--max-points", type=int, default=2000, help="most points drawn per series (decimation)")


def run(args: argparse.Namespace) -> int:
    """Open the dashboard, or render it to a PNG, or write the Foxglove layout.

    Args:
        args: The parsed ``cosim dashboard`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    if args.foxglove_layout:
        checked_output(
            "--foxglove-layout", args.foxglove_layout, {"--graph": args.graph, "--bag": args.bag}, (".json",)
        )
        return _write_layout(args)
    if not args.bag and not args.live:
        raise InputError("give --bag FILE (a recorded session), --live (a running one) or --foxglove-layout OUT.json")
    if args.max_points < 2:
        raise InputError(f"--max-points must be >= 2, got {args.max_points}")
    if args.live and args.at is not None and not 0 < args.at <= MAX_LISTEN_S:  # nan fails too
        raise InputError(f"--at {args.at:g}: with --live, the seconds to listen, expected (0, {MAX_LISTEN_S:g}]")
    for topic in args.extra_topic:
        problem = ros_name_problem(topic)
        if problem is not None:
            raise InputError(f"--extra-topic: {problem}")
    if args.screenshot:
        checked_output("--screenshot", args.screenshot, {"--bag": args.bag, "--graph": args.graph}, (".png",))
        check_folder("--screenshot", args.screenshot)
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    elif not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("QT_QPA_PLATFORM")):
        raise InputError("no display (DISPLAY is not set): use --screenshot OUT.png to render off-screen")
    robots = _robots(args.graph)
    extra = ["/diagnostics", *args.extra_topic]
    if args.bag:
        return _run_bag(args, robots, extra)
    return _run_live(args, robots, extra)


def _robots(graph_path: str) -> list[str]:
    from cosim_validation.common.config import resolve_resource
    from cosim_validation.live.dashboard.foxglove_layout import session_robots
    from cosim_validation.live.session.graph import load_graph

    return session_robots(load_graph(resolve_resource(graph_path)))


def _run_bag(args: argparse.Namespace, robots: list[str], extra: list[str]) -> int:
    from cosim_validation.live.dashboard import BagPlayer
    from cosim_validation.live.dashboard.qt_binding import application
    from cosim_validation.live.ros.dashboard_events import bag_events

    timeline = bag_events(args.bag, robots, extra)
    if not timeline:  # e.g. a CRTK bag: other topics
        raise InputError(f"{args.bag}: the bag holds no message of the dashboard's topics (/cosim/...)")
    player = BagPlayer(timeline, rate=args.rate)
    if args.at is not None and not 0 <= args.at <= player.duration_s:
        raise InputError(f"--at {args.at:g}: the bag {args.bag} spans 0 to {player.duration_s:.1f} s")
    player.seek(player.duration_s if args.at is None else args.at)
    app = application()
    from cosim_validation.live.dashboard.view.dashboard_widget import DashboardWidget

    dashboard = DashboardWidget(player, args.max_points)
    if args.screenshot:
        return _screenshot(dashboard, args, f"bag {args.bag} at {player.position_s:.1f} of {player.duration_s:.1f} s")
    dashboard.widget.show()
    return int(app.exec())


def live_domain(given: int | None) -> int:
    """The ROS domain ``--live`` joins.

    ``given``; else the one running session's (sessions lease their own domain, see session/discovery_scope.py); else
    the caller's ROS_DOMAIN_ID (0 when unset).

    Args:
        given: The ``--domain-id`` value, or None to find the domain as above.

    Raises:
        InputError: ``given`` out of range, or several sessions running and none chosen.
    """
    from cosim_validation.live.session.discovery_scope import MAX_DOMAIN_ID, caller_domain, running_sessions

    if given is not None:
        if not 0 <= given <= MAX_DOMAIN_ID:
            raise InputError(f"--domain-id must be within 0..{MAX_DOMAIN_ID} (Fast DDS), got {given}")
        return given
    sessions = running_sessions()
    if len(sessions) > 1:
        listed = ", ".join(str(d) for d in sessions)
        raise InputError(
            f"--live: {len(sessions)} cosim sessions are running (ROS domains {listed}): choose one with --domain-id"
        )
    if sessions:
        print(f"dashboard: joining the running cosim session in ROS domain {sessions[0]}", file=sys.stderr)
        return sessions[0]
    domain = caller_domain()
    print(f"dashboard: no cosim session is running on this machine; listening on ROS domain {domain}", file=sys.stderr)
    return domain


def _run_live(args: argparse.Namespace, robots: list[str], extra: list[str]) -> int:
    import queue
    import threading

    from cosim_validation.live.dashboard.qt_binding import application
    from cosim_validation.live.ros.dashboard_live import LiveFeed

    domain = live_domain(args.domain_id)
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    app = application()
    from cosim_validation.live.dashboard.view.dashboard_widget import DashboardWidget

    context = Context()
    rclpy.init(context=context, domain_id=domain)
    node = rclpy.create_node("cosim_dashboard", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    events: queue.SimpleQueue[Any] = queue.SimpleQueue()
    feed = LiveFeed(node, events, robots, extra)
    spinner = threading.Thread(target=executor.spin, name="dashboard-ros", daemon=True)
    spinner.start()
    try:
        dashboard = DashboardWidget(max_points=args.max_points)
        dashboard.attach_queue(events)
        if args.screenshot:
            listen_s = 10.0 if args.at is None else args.at
            _wait_qt(app, listen_s)
            return _screenshot(dashboard, args, f"live in ROS domain {domain} after {listen_s:g} s")
        dashboard.widget.show()
        return int(app.exec())
    finally:
        feed.close()
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()


def _wait_qt(app: Any, seconds: float) -> None:
    """Run the Qt event loop for ``seconds`` (the drain timer keeps filling the model)."""
    from cosim_validation.live.dashboard.qt_binding import load_qt

    qt = load_qt()
    qt.QtCore.QTimer.singleShot(int(seconds * 1000), app.quit)
    app.exec()


def _screenshot(dashboard: Any, args: argparse.Namespace, what: str) -> int:
    path = dashboard.save_png(args.screenshot)
    model = dashboard.model
    shown = dashboard.shown_case()
    info = {
        "screenshot": str(path.resolve()),
        "source": what,
        "cases": len(model.cases),
        "finished": model.finished(),
        "alerts": model.alert_count,
        "shown_case": shown.test_id if shown else "",
    }
    if args.json:
        print_json(info)
    else:
        print(f"{what}: {info['cases']} cases ({info['finished']} finished), {info['alerts']} alerts")
        print(f"wrote {path}")
    return 0


def _write_layout(args: argparse.Namespace) -> int:
    from cosim_validation.common.config import resolve_resource
    from cosim_validation.live.dashboard.foxglove_layout import write_layout
    from cosim_validation.live.session.graph import load_graph

    path = write_layout(load_graph(resolve_resource(args.graph)), Path(args.foxglove_layout))
    if args.json:
        print_json({"layout": str(path.resolve()), "graph": args.graph})
    else:
        print(f"wrote {path} (Foxglove layout of {args.graph})")
    return 0
