"""Running a digital-twin session: start the graph, run the suite, stop cleanly, summarise.

Every node process starts at once and loads its modules; the others join ROS 2 first, the graph's console node (the
test generator) last, once every other node is ready (:mod:`.start_gate`). The session ends when the console node
exits (all cases done), when a required node dies, or on Ctrl-C. Every node is then stopped (SIGINT first, the
recorder last, so it finishes the bag with everything sent) and the run directory is summarised:
``session.mcap`` (rosbag2), ``results.sqlite``, ``summary.json``, ``logs/<node>.log``.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.live.session.graph import GraphSpec
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec, node_start_forks
from cosim_validation.live.session.session_plan import NodeLaunch, node_launches


class ForeignTopicsError(CosimError):
    """A node that is not of the session published on one of its topics with another type (a stranger)."""


@dataclass
class SessionOutcome:
    """How a session ended."""

    run_dir: Path
    status: str  # completed | interrupted | failed
    message: str
    exit_codes: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    stop_s: dict[str, float] = field(default_factory=dict)  # SIGINT to exit, per node still running then
    escalated: dict[str, str] = field(default_factory=dict)  # nodes that needed SIGTERM/SIGKILL: the last one
    stop_logs: dict[str, str] = field(default_factory=dict)  # the end of those nodes' logs
    #: nodes whose ROS teardown hung in the middleware after their outputs were complete, ended by their watchdog
    teardown_hung: list[str] = field(default_factory=list)
    #: nodes a crash ended before they were ready, started again once (:attr:`ProcessGroup.restarted`): the signal
    restarted: dict[str, str] = field(default_factory=dict)


def prepare_run_dir(run_dir: Path) -> None:
    """Create the run directory; refuse a file, or a directory that already holds a session.

    Args:
        run_dir: The session's run directory (created with its ``params`` folder).

    Raises:
        InputError: ``run_dir`` is a file, already holds a session's outputs, or cannot be created.
    """
    if run_dir.exists() and not run_dir.is_dir():
        raise InputError(f"--out {str(run_dir)!r} is a file, expected a run directory")
    for name in ("session.mcap", "session.mcap.part", "results.sqlite", "summary.json"):
        if (run_dir / name).exists():
            raise InputError(f"{run_dir}: already holds {name}; choose another --out")
    try:
        (run_dir / "params").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"--out {str(run_dir)!r}: cannot create the run directory ({exc.strerror})") from None


#: Nodes that create the run's outputs while they start (the bag, the results database): never started twice
WRITE_OUTPUTS_AT_START = ("recorder", "test_generator")


def process_specs(launches: tuple[NodeLaunch, ...], run_dir: Path, console: bool) -> list[ProcessSpec]:
    """One process per node, parameters written to ``run_dir/params/<node>.yaml``.

    Args:
        launches: Every node as it is started (:func:`~cosim_validation.live.session.session_plan.node_launches`).
        run_dir: The run directory (its ``params`` folder exists).
        console: Relay the console node's stdout to ours (else into its log file).
    """
    specs = []
    for node in launches:
        params_file = run_dir / "params" / f"{node.name}.yaml"
        params_file.write_text(node.params_file_content())
        specs.append(
            ProcessSpec(
                node.name,
                node.executable,
                node.ros_arguments(params_file),
                stdout_to_console=console and node.console,
                restart_on_crash=node.executable not in WRITE_OUTPUTS_AT_START,
            )
        )
    return specs


@dataclass
class StartedGraph:
    """A graph's node processes started gated (:mod:`.start_gate`): loading their modules, not on ROS 2 yet.

    Use as a context manager around what happens before :func:`run_session` takes them over: if that is never
    reached (a bad input, no free domain, Ctrl-C), the processes are stopped on the way out.

    Attributes:
        group: The processes.
        first: Every node but the console node, in the graph's order.
        console: The console node (the test generator), whose gate opens once the others are ready.
        taken: Whether :func:`run_session` took them over (it stops them itself).
        started_at: When the processes were started (``time.monotonic``), the start of the session's wall time.
    """

    group: ProcessGroup
    first: list[ProcessSpec]
    console: ProcessSpec
    taken: bool = False
    started_at: float = field(default_factory=time.monotonic)

    def __enter__(self) -> StartedGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.taken:  # never on ROS 2: ended at once
            self.group.abort()


def start_graph(
    graph: GraphSpec,
    run_dir: Path,
    suite: str,
    cases: int,
    *,
    console: bool = True,
    env: Mapping[str, str] | None = None,
) -> StartedGraph:
    """Start every node process of ``graph``; each loads its modules and waits at its gate.

    Args:
        graph: The parsed graph (placeholders not yet filled).
        run_dir: New or empty run directory.
        suite: Suite file for the test generator (it reads it once its gate opens).
        cases: Number of cases to run (0 = all).
        console: Relay the console node's progress lines to our stdout.
        env: Environment of the processes (default: ours); :func:`run_session` may change it at the gates.

    Raises:
        InputError: The run directory cannot be used, or the graph has not exactly one console node.
    """
    run_dir = run_dir.resolve()
    fork = node_start_forks(os.environ if env is None else env)  # a bad value is refused before anything is written
    prepare_run_dir(run_dir)
    launches = node_launches(graph, run_dir, suite, cases)
    specs = process_specs(launches, run_dir, console)
    last = [s for s, node in zip(specs, launches, strict=True) if node.console]
    first = [s for s in specs if s not in last]
    if len(last) != 1:
        raise InputError(f"{graph.source}: exactly one node must have console: true (the test generator)")
    group = ProcessGroup(run_dir, env=env, fork=fork)
    started = StartedGraph(group, first, last[0])
    with contextlib.ExitStack() as stop_on_error:
        stop_on_error.push(started)
        for spec in [*first, *last]:
            group.start(spec, gated=True)
        stop_on_error.pop_all()
    return started


def run_session(
    graph: GraphSpec,
    run_dir: Path,
    suite: str,
    cases: int,
    *,
    console: bool = True,
    env: Mapping[str, str] | None = None,
    on_ready: Callable[[ProcessGroup], None] | None = None,
    started: StartedGraph | None = None,
) -> SessionOutcome:
    """Run the session of ``graph`` in ``run_dir``.

    The nodes but the console node join ROS 2 first; the console node (the test generator, which starts the
    cases) once they are ready. Every node loads its modules meanwhile (:func:`start_graph`).

    Args:
        graph: The parsed graph (placeholders not yet filled).
        run_dir: New or empty run directory.
        suite: Suite file for the test generator.
        cases: Number of cases to run (0 = all).
        console: Relay the console node's progress lines to our stdout.
        env: Environment of the nodes (default: ours).
        on_ready: Called once every node is ready (tests use it to inject faults).
        started: The processes, started already by :func:`start_graph` (with this graph, run directory, suite and
            cases) while the caller chose the domain; ``env`` then reaches them through their gates.
    """
    if started is None:
        started = start_graph(graph, run_dir, suite, cases, console=console, env=env)
        env = None  # the processes were started with it
    started.taken = True
    group, first, last = started.group, started.first, started.console
    start = started.started_at
    outcome = SessionOutcome(run_dir.resolve(), "failed", "")
    try:
        group.check_running(list(group.processes))  # a node that died while it loaded is named now
        for spec in first:
            group.open_gate(spec.name, env)
        group.wait_ready([s.name for s in first], graph.settings.ready_timeout_s, watch=[last.name])
        group.open_gate(last.name, env)
        group.wait_ready([last.name], graph.settings.ready_timeout_s)
        if on_ready is not None:
            on_ready(group)
        outcome.status, outcome.message = _wait(group, graph, last.name)
    except KeyboardInterrupt:
        outcome.status, outcome.message = "interrupted", "interrupted by Ctrl-C"
    except CosimError as exc:
        outcome.status, outcome.message = "failed", str(exc)
    finally:
        # the recorder stops last, once it wrote its backlog; after a completed session it is also drained before the
        # others stop, while they can still deliver (each drain up to 10 s after a completed session, 2 s after Ctrl-C)
        recorders = [node.name for node in graph.nodes if node.executable == "recorder"]
        completed = outcome.status == "completed"
        drain_s = 10.0 if completed else 2.0
        outcome.exit_codes = group.stop(
            graph.settings.shutdown_grace_s, last=recorders, drain_s=drain_s, drain_first=completed
        )
        outcome.stop_s, outcome.escalated = dict(group.stop_s), dict(group.escalated)
        outcome.restarted = dict(group.restarted)
        outcome.stop_logs = {name: group.log_tail(name, lines=40) for name in group.escalated}
        hung = (name for name, code in outcome.exit_codes.items() if code == 1 and group.hung_in_teardown(name))
        outcome.teardown_hung = sorted(hung)
        outcome.wall_s = time.monotonic() - start
    return outcome


def _wait(group: ProcessGroup, graph: GraphSpec, console: str) -> tuple[str, str]:
    while True:
        for name, process in group.processes.items():
            code = process.poll()
            if code is None:
                continue
            if group.node_host_lost:
                log = group.log_dir / "node_host.log"
                return "failed", f"the node host ended while the session ran, and every node with it (see {log})"
            if name == console:
                return (
                    ("completed", "all cases run")
                    if code == 0
                    else ("failed", f"{name} exited with code {code}:\n{group.log_tail(name)}")
                )
            if graph.node(name).required:
                return "failed", f"required node {name} exited with code {code}:\n{group.log_tail(name)}"
        time.sleep(0.1)


def write_summary(outcome: SessionOutcome, extra: Mapping[str, Any]) -> Path:
    """Write ``summary.json`` of a session and return its path.

    Args:
        outcome: How the session ended (its ``run_dir`` gets the file).
        extra: More keys for the summary (e.g. the discovery scope); they replace standard keys of the same name.
    """
    path = outcome.run_dir / "summary.json"
    data = {
        "kind": "session",
        "status": outcome.status,
        "message": outcome.message,
        "wall_s": round(outcome.wall_s, 3),
        "node_exit_codes": outcome.exit_codes,
        "node_stop_s": outcome.stop_s,
        "nodes_escalated": outcome.escalated,
        "nodes_teardown_hung": outcome.teardown_hung,
        "nodes_restarted": outcome.restarted,
        **extra,
    }
    path.write_text(json.dumps(data, indent=2, allow_nan=False, default=str) + "\n")
    return path
