"""The digital-twin session of ``cosim session``, for ``ros2 launch``.

Usage::

    ros2 launch cosim_validation digital_twin.launch.py [graph:=FILE] [run_dir:=DIR] [suite:=FILE] [cases:=N]
        [domain_id:=auto|N] [discovery_range:=localhost|subnet|off|system_default]

The nodes, parameters and remappings come from ``cosim_validation.live.session.session_plan.node_launches``,
the function ``cosim session`` starts its processes from, on the same graph YAML (config/digital_twin.yaml by
default). As in ``cosim session``:
- without ``suite`` the default grid suite is made into the run directory first;
- the session gets its own ROS_DOMAIN_ID (a free one of 1-101 with no other ROS 2 node on it, not the caller's)
  and localhost discovery,
  printed at start; ``domain_id:=N`` and ``discovery_range:=subnet`` make it visible elsewhere;
- the test generator starts once every other node is ready, and its exit ends the launch (after the
  recorder has written what it received); a required node that exits takes the launch down;
- Ctrl-C stops every node (SIGINT, then SIGTERM after the graph's ``shutdown_grace_s``, then SIGKILL).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo, OpaqueFunction, Shutdown, TimerAction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from cosim_validation.common.config import package_root
from cosim_validation.common.exceptions import InputError
from cosim_validation.live.session.default_suite import make_default_suite
from cosim_validation.live.session.discovery_scope import DomainLease
from cosim_validation.live.session.domain_probe import strangers
from cosim_validation.live.session.graph import GraphSpec, load_graph
from cosim_validation.live.session.process_group import READY_DIR_ENV, DrainWatch, read_progress
from cosim_validation.live.session.session_plan import NodeLaunch, node_launches
from cosim_validation.live.session.session_runner import prepare_run_dir

_LEASES: list[DomainLease] = []  # the session's domain stays leased for the life of the launch process
POLL_S = 0.2
QUIET_S = 0.5  # the recorder has written everything once its message count stood still this long (DrainWatch)
DRAIN_LIMIT_S = 10.0


def _int_argument(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InputError(f"launch argument {name}:={text!r}: expected an integer") from None


def _session(context: LaunchContext) -> list[Any]:
    def argument(name: str) -> str:
        return str(LaunchConfiguration(name).perform(context))

    graph = load_graph(argument("graph"))
    run_dir = Path(argument("run_dir") or f"runs/session-{time.strftime('%Y%m%d-%H%M%S')}").resolve()
    prepare_run_dir(run_dir)
    suite = argument("suite")
    notes = []
    if not suite:
        made = make_default_suite(graph, run_dir)
        suite = str(made.path)
        notes.append(f"suite: {made.description} -> {made.path}")
    domain = argument("domain_id")
    domain_id = None if domain == "auto" else _int_argument("domain_id", domain)
    lease = DomainLease.acquire(domain_id, argument("discovery_range"), probe=strangers)
    _LEASES.append(lease)
    ready_dir = run_dir / ".ready"
    ready_dir.mkdir(exist_ok=True)
    # the nodes stop if this process dies (launch itself leaves them running after a SIGTERM)
    env = {
        **lease.scope.env(),
        READY_DIR_ENV: str(ready_dir),
        "PYTHONUNBUFFERED": "1",
        "COSIM_PARENT_PID": str(os.getpid()),
    }
    launches = node_launches(graph, run_dir, suite, _int_argument("cases", argument("cases")))
    notes += [
        f"session: {len(launches)} nodes from {graph.source}, run directory {run_dir}",
        f"ROS 2: {lease.scope.describe()}",
    ]
    console = [n for n in launches if n.console]
    if len(console) != 1:
        raise InputError(f"{graph.source}: exactly one node must have console: true (the test generator)")
    others = [n for n in launches if not n.console]
    recorders = [n.name for n in launches if n.executable == "recorder"]
    start_console = _when(
        lambda: [n.name for n in others if not (ready_dir / n.name).exists()],
        graph.settings.ready_timeout_s,
        [_node(console[0], env, graph, _console_exit(console[0].name, ready_dir, recorders))],
        "nodes not ready",
    )
    nodes = [_node(n, env, graph, _required_exit(n)) for n in others]
    return [*(LogInfo(msg=note) for note in notes), *nodes, start_console]


def _node(launch: NodeLaunch, env: dict[str, str], graph: GraphSpec, on_exit: Callable[..., Any] | None) -> Node:
    return Node(
        package="cosim_validation",
        executable=launch.executable,
        name=launch.name,
        parameters=[dict(launch.parameters)],
        remappings=list(launch.remappings),
        env=env,
        output="screen",
        sigterm_timeout=str(graph.settings.shutdown_grace_s),
        on_exit=on_exit,
    )


def _required_exit(launch: NodeLaunch) -> Callable[..., Any] | None:
    if not launch.required:
        return None  # the controller goes on without a driver that died

    def on_exit(event: Any, context: LaunchContext) -> list[Any]:
        if context.is_shutdown:  # stopped with the others
            return []
        return [Shutdown(reason=f"required node {launch.name} exited with code {event.returncode}")]

    return on_exit


def _console_exit(name: str, ready_dir: Path, recorders: Sequence[str]) -> Callable[..., Any]:
    def on_exit(event: Any, context: LaunchContext) -> list[Any]:
        if context.is_shutdown:  # stopped with the others (Ctrl-C, a required node's exit)
            return []
        if event.returncode != 0:
            return [Shutdown(reason=f"{name} exited with code {event.returncode}")]
        return [_after_quiet([ready_dir / f"{r}.progress" for r in recorders], f"{name} finished: all cases run")]

    return on_exit


def _when(missing: Callable[[], list[str]], timeout_s: float, then: list[Any], what: str) -> OpaqueFunction:
    """Run ``then`` once ``missing()`` is empty; shut down if it is not within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s

    def check(context: LaunchContext) -> list[Any]:
        left = missing()
        if not left:
            return then
        if time.monotonic() > deadline:
            return [Shutdown(reason=f"{what} after {timeout_s:.0f} s: {', '.join(left)}")]
        return [TimerAction(period=POLL_S, actions=[OpaqueFunction(function=check)])]

    return OpaqueFunction(function=check)


def _running(ready_file: Path) -> bool:
    """Whether the node whose ready file (its process id) this is still runs."""
    try:
        os.kill(int(ready_file.read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def _after_quiet(progress_files: list[Path], reason: str) -> OpaqueFunction:
    """Shut down once every running recorder's progress is quiet (:class:`DrainWatch`), at most DRAIN_LIMIT_S."""
    deadline = time.monotonic() + DRAIN_LIMIT_S
    watches = [DrainWatch(QUIET_S) for _ in progress_files]

    def check(context: LaunchContext) -> list[Any]:
        progress = [read_progress(p) for p in progress_files]
        quiet = [
            p is None or not _running(f.with_suffix("")) or w.quiet(p)
            for f, p, w in zip(progress_files, progress, watches, strict=True)
        ]
        if all(quiet) or time.monotonic() > deadline:
            return [Shutdown(reason=reason)]
        return [TimerAction(period=POLL_S, actions=[OpaqueFunction(function=check)])]

    return OpaqueFunction(function=check)


def generate_launch_description() -> LaunchDescription:
    """The launch arguments and the session (built when the arguments are known)."""
    default_graph = str(package_root() / "config" / "digital_twin.yaml")
    arguments = (
        ("graph", default_graph, "session graph YAML"),
        ("run_dir", "", "run directory (default: runs/session-<time> in the current directory)"),
        ("suite", "", "suite file (default: a 20 mm grid suite made into the run directory)"),
        ("cases", "3", "number of cases (0 = all of the suite)"),
        ("domain_id", "auto", "ROS_DOMAIN_ID of the nodes (auto: a free one of 1-101, not the caller's)"),
        ("discovery_range", "localhost", "ROS_AUTOMATIC_DISCOVERY_RANGE: localhost, subnet, off, system_default"),
    )
    return LaunchDescription(
        [
            *(DeclareLaunchArgument(name, default_value=value, description=text) for name, value, text in arguments),
            OpaqueFunction(function=_session),
        ]
    )
