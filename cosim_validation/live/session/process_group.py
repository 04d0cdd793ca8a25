"""Starting one process per node, waiting until each is ready, and stopping them all without orphans.

Each node runs as ``python -m cosim_validation.live.nodes.<executable> --ros-args ...`` would, in its own process
group (forked by a node host that loaded the heavy modules once, :mod:`.node_host`; ``COSIM_NODE_START=exec``
starts each as a fresh interpreter instead), so a Ctrl-C reaches only this launcher, which then stops the nodes
in order: SIGINT (rclpy shuts down cleanly), SIGTERM after a grace period, SIGKILL last; the recorder after all the
others, so its bag holds everything they sent. On Linux
each child also asks the kernel for SIGTERM if the launcher dies, so nothing is left behind even if the
launcher is killed.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.common.process_kernel import own_group_ended_with_parent
from cosim_validation.live.session.node_host import NodeHost
from cosim_validation.live.session.start_gate import GATE_ENV, OWNER_ENV, env_change, open_gate

READY_DIR_ENV = "COSIM_READY_DIR"
#: ``exec``: start every node as a fresh interpreter; otherwise (``fork``, the default) a node host forks them
NODE_START_ENV = "COSIM_NODE_START"
#: Signals of a crash in native code (the middleware, a physics engine): a node they end before it is ready is
#: started once more. Rare and not the node's fault (seen: SIGSEGV in rclpy's create_service in a node's
#: constructor, about once in a few hundred node starts); a node that exits with a status, or that a user or the
#: system stopped (SIGINT, SIGTERM, SIGKILL), is not started again.
CRASH_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE})


@dataclass(frozen=True)
class ProcessSpec:
    """How to start one node.

    Attributes:
        name: Node name (also the name of its ready file and log file).
        executable: Module under ``cosim_validation.live.nodes``.
        ros_args: Arguments after ``--ros-args`` (remappings, parameter files).
        env: Extra environment variables.
        stdout_to_console: Relay the node's stdout to ours (else into its log file).
        restart_on_crash: Start it once more if a crash signal ends it before it is ready (:data:`CRASH_SIGNALS`);
            False for a node that writes the run's outputs while it starts (the recorder opens its bag, the test
            generator its results database): a second start would find them there.
    """

    name: str
    executable: str
    ros_args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    stdout_to_console: bool = False
    restart_on_crash: bool = True

    @property
    def module(self) -> str:
        """The module the node process runs."""
        return f"cosim_validation.live.nodes.{self.executable}"

    def arguments(self) -> list[str]:
        """The node's command-line arguments."""
        return ["--ros-args", *self.ros_args]

    def command(self) -> list[str]:
        """The command line of the node process."""
        return [sys.executable, "-m", self.module, *self.arguments()]

    def forkable(self) -> bool:
        """Whether the node host can start this process.

        It can if the process runs a node module of ours (a subclass may run another command) and sets no variables
        of its own (a module the host loaded may have read them at its import).
        """
        return not self.env and self.command() == [sys.executable, "-m", self.module, *self.arguments()]


def node_start_forks(env: Mapping[str, str]) -> bool:
    """Whether nodes are forked from the node host (``COSIM_NODE_START`` unset or ``fork``), not started fresh.

    Args:
        env: The nodes' environment.

    Raises:
        InputError: Another value.
    """
    start = env.get(NODE_START_ENV) or "fork"  # unset or empty: the default
    if start not in ("fork", "exec"):
        raise InputError(f"{NODE_START_ENV}={start!r}: expected fork (the default) or exec")
    return start == "fork"


class NodeProcess(Protocol):
    """What the launcher uses of a node's process: :class:`subprocess.Popen`, or a process the node host forked."""

    returncode: int | None

    @property
    def pid(self) -> int: ...  # noqa: D102

    def poll(self) -> int | None: ...  # noqa: D102

    def wait(self, timeout: float | None = None) -> int:
        """Wait until the process ends; its exit status.

        Args:
            timeout: The longest wait [s]; None: no limit.
        """
        ...

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the process.

        Args:
            sig: The signal.
        """
        ...


class NodeStartError(CosimError):
    """A node exited or did not become ready in time."""


class ProcessGroup:
    """The node processes of one session.

    Args:
        run_dir: Where ``logs/<node>.log`` and the ready files go.
        env: Environment for every node (ROS_DOMAIN_ID, ...); defaults to ours.
        fork: Fork the nodes from a node host (:mod:`.node_host`) rather than start each as a fresh interpreter;
            None: unless ``COSIM_NODE_START=exec`` (in ``env``).
    """

    def __init__(self, run_dir: str | Path, env: Mapping[str, str] | None = None, fork: bool | None = None) -> None:
        self.run_dir = Path(run_dir)
        self.log_dir = self.run_dir / "logs"
        self.ready_dir = self.run_dir / ".ready"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.ready_dir.mkdir(parents=True, exist_ok=True)
        self.env = dict(os.environ if env is None else env)
        self.fork = node_start_forks(self.env) if fork is None else fork
        self._host: NodeHost | None = None
        self._host_lost = False
        self.processes: dict[str, NodeProcess] = {}
        self._started_env: dict[str, dict[str, str]] = {}  # each process's environment at its start
        self._logs: dict[str, IO[bytes]] = {}
        self.stop_s: dict[str, float] = {}
        self.escalated: dict[str, str] = {}
        #: nodes a crash ended before they were ready, started again once: name -> the crash's signal
        self.restarted: dict[str, str] = {}
        self._specs: dict[str, ProcessSpec] = {}

    def start(self, spec: ProcessSpec, gated: bool = False) -> NodeProcess:
        """Start one node (does not wait for it).

        Args:
            spec: The node.
            gated: The node waits, once it has loaded its modules, until :meth:`open_gate` lets it join ROS 2.
        """
        if spec.name in self.processes:
            raise CosimError(f"node {spec.name!r} started twice")
        (self.ready_dir / spec.name).unlink(missing_ok=True)
        env = {**self.env, **spec.env, READY_DIR_ENV: str(self.ready_dir), "PYTHONUNBUFFERED": "1"}
        if gated:
            self.gate_path(spec.name).unlink(missing_ok=True)
            forked = self.fork and spec.forkable()
            parent = self._node_host().process.pid if forked else os.getpid()  # the node's parent process
            env[GATE_ENV], env[OWNER_ENV] = str(self.gate_path(spec.name)), str(parent)
        self._started_env[spec.name] = env
        self._logs[spec.name] = open(self.log_dir / f"{spec.name}.log", "ab")  # noqa: SIM115 - closed in stop()
        self._specs[spec.name] = spec
        return self._spawn(spec.name)

    def _spawn(self, name: str) -> NodeProcess:
        spec, log = self._specs[name], self._logs[name]
        process: NodeProcess
        if self.fork and spec.forkable():
            log_path = self.log_dir / f"{name}.log"
            process = self._node_host().spawn(
                name, spec.module, spec.arguments(), self._started_env[name], log_path, spec.stdout_to_console
            )
        else:
            process = subprocess.Popen(
                spec.command(),
                stdout=None if spec.stdout_to_console else log,
                stderr=log,
                stdin=subprocess.DEVNULL,
                env=self._started_env[name],
                preexec_fn=own_group_ended_with_parent,
            )
        self.processes[name] = process
        return process

    def _node_host(self) -> NodeHost:
        """The node host, started the first time (its messages in ``logs/node_host.log``)."""
        if self._host is None:
            log = open(self.log_dir / "node_host.log", "ab")  # noqa: SIM115 - closed in stop()
            self._logs[" node host"] = log
            self._host = NodeHost(self.env, log, own_group_ended_with_parent)
        return self._host

    def _close_host(self) -> None:
        """Let the node host end, once its nodes have."""
        if self._host is not None:
            self._host.close()
            self._host_lost = self._host.lost
            self._host = None

    @property
    def node_host_lost(self) -> bool:
        """Whether the node host ended while its nodes were running (their exit codes are then assumed: SIGTERM)."""
        return self._host_lost or (self._host is not None and self._host.lost)

    def _restart_after_crash(self, name: str) -> bool:
        """Start node ``name`` again if a crash signal ended it before it was ready, the first time; whether it was.

        Its gate, if already opened, stays open: the new process joins ROS 2 with the same environment at once.
        """
        code = self.processes[name].returncode
        crashed = code is not None and code < 0 and -code in CRASH_SIGNALS
        restartable = self._specs[name].restart_on_crash and name not in self.restarted
        if code is None or not crashed or not restartable or (self.ready_dir / name).exists():
            return False
        crash = signal.Signals(-code).name
        log = self._logs[name]
        log.write(f"[session] {name} crashed ({crash}) before it was ready; started again\n".encode())
        log.flush()
        self._spawn(name)  # recorded as restarted once it runs: a Ctrl-C in Popen leaves the crash as it was
        self.restarted[name] = crash
        return True

    def gate_path(self, name: str) -> Path:
        """The gate file of node ``name`` (:mod:`.start_gate`).

        Args:
            name: The node.
        """
        return self.ready_dir / f"{name}.gate"

    def open_gate(self, name: str, env: Mapping[str, str] | None = None) -> None:
        """Let node ``name``, started gated, join ROS 2 with ``env`` in place of the group's environment.

        Args:
            name: The node.
            env: The environment it runs with from now on (default: the group's); what differs from the group's is
                sent through the gate, except the variables set for this process alone (its spec's, the ready folder),
                which stay.
        """
        set_env, unset = env_change(self.env, self.env if env is None else env)
        started = self._started_env[name]
        own = {k for k, v in started.items() if self.env.get(k) != v}  # set for this process: they stay
        open_gate(
            self.gate_path(name), {k: v for k, v in set_env.items() if k not in own}, [k for k in unset if k not in own]
        )

    def abort(self) -> None:
        """End every process at once (SIGTERM, SIGKILL after 5 s).

        For nodes that never joined ROS 2: they have nothing to finish. The node host is killed first (its nodes end
        with it), then each process it had forked is signalled as well and watched until it is gone.
        """
        forked: list[int] = []
        if self._host is not None:
            forked = self._host.abort()
            self._host_lost, self._host = True, None
        for pid in forked:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGTERM)
        for process in self.processes.values():
            if process.poll() is None:
                _signal_group(process, signal.SIGTERM)
        for process in self.processes.values():
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait(timeout=5)
        deadline = time.monotonic() + 5
        while [pid for pid in forked if not process_gone(pid)] and time.monotonic() < deadline:
            time.sleep(0.01)
        for pid in forked:
            if not process_gone(pid):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
        for log in self._logs.values():
            log.close()

    def wait_ready(self, names: Sequence[str], timeout_s: float, watch: Sequence[str] = ()) -> None:
        """Block until every named node wrote its ready file.

        Args:
            names: The nodes to wait for.
            timeout_s: The longest wait [s].
            watch: Other nodes that must not exit meanwhile (a node still waiting at its gate).

        Raises:
            NodeStartError: A node exited, or was not ready within ``timeout_s``; the message quotes the
                end of its log.
        """
        deadline = time.monotonic() + timeout_s
        pending = list(names)
        while pending:
            for name in list(pending):
                if (self.ready_dir / name).exists():
                    pending.remove(name)
            self.check_running([*pending, *watch])
            if pending and time.monotonic() > deadline:
                raise NodeStartError(
                    f"nodes not ready after {timeout_s:.0f} s: {', '.join(pending)}\n"
                    + "\n".join(self.log_tail(n) for n in pending)
                )
            if pending:
                time.sleep(0.05)

    def check_running(self, names: Sequence[str]) -> None:
        """Raise :class:`NodeStartError` for the first named node whose process has exited, quoting its log.

        A node that a crash signal (:data:`CRASH_SIGNALS`) ended before it was ready is started again instead, once
        (:attr:`restarted`).

        Args:
            names: The nodes to check (each one started).
        """
        for name in names:
            if self.processes[name].poll() is not None and not self._restart_after_crash(name):
                again = f" (started again after {self.restarted[name]})" if name in self.restarted else ""
                raise NodeStartError(
                    f"node {name!r} exited with code {self.processes[name].returncode} "
                    f"before it was ready{again}:\n{self.log_tail(name)}"
                )

    def log_tail(self, name: str, lines: int = 15) -> str:
        """The last lines of a node's log, indented, for error messages.

        Args:
            name: The node.
            lines: How many lines at most.
        """
        path = self.log_dir / f"{name}.log"
        if not path.exists():
            return f"  [{name}] (no log)"
        tail = path.read_text(errors="replace").splitlines()[-lines:]
        return "\n".join(f"  [{name}] {line}" for line in tail)

    def hung_in_teardown(self, name: str) -> bool:
        """Whether node ``name``'s log holds the dump of a ROS teardown that hung holding the GIL.

        See :func:`teardown_hung`; the whole log is read: the dump's first line is followed by every thread's
        stack.

        Args:
            name: The node.
        """
        path = self.log_dir / f"{name}.log"
        return path.exists() and teardown_hung(path.read_text(errors="replace"))

    def wait_quiet(self, name: str, quiet_s: float = 0.5, timeout_s: float = 10.0, rounds: int = 5) -> bool:
        """Wait until node ``name``'s progress (``<name>.progress``) is quiet (:class:`DrainWatch`).

        The recorder counts what it wrote: after the last case it may still be writing a backlog, which a
        stop now would lose. Returns False after ``timeout_s`` or if the node reports no progress (or exited).

        Args:
            name: The node (started).
            quiet_s: Wall time its count must stand still, in [s].
            timeout_s: The longest wait, in [s].
            rounds: Rounds of the node's timer its count must stand still for.
        """
        path = self.ready_dir / f"{name}.progress"
        deadline = time.monotonic() + timeout_s
        watch = DrainWatch(quiet_s, rounds)
        while time.monotonic() < deadline:
            progress = read_progress(path)
            if progress is None or self.processes[name].poll() is not None:
                return False
            if watch.quiet(progress):
                return True
            time.sleep(0.05)
        return False

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Send ``sig`` to one node (fault injection in tests and demos).

        Args:
            name: The node (started).
            sig: The signal, sent to the node's process alone (not its process group).
        """
        self.processes[name].send_signal(sig)

    def stop(
        self, grace_s: float = 3.0, last: Sequence[str] = (), drain_s: float = 2.0, drain_first: bool = False
    ) -> dict[str, int]:
        """Stop every node (SIGINT, then SIGTERM, then SIGKILL) and return their exit codes.

        The nodes named in ``last`` (the recorder) are stopped once the others have exited and their progress
        stood still (:meth:`wait_quiet`, at most ``drain_s``), so they take everything the others published while
        stopping. With ``drain_first`` (a session whose work is done) they are also drained before any node is
        stopped, while every publisher is still there to deliver what it sent: a reliable writer that exits
        takes its undelivered messages with it, and a recorder on a loaded machine may not have taken the last
        case's report yet. A Ctrl-C stops at once.

        ``stop_s`` then holds, for each node that was still running, the seconds from the first SIGINT to its
        exit, and ``escalated`` the nodes that needed SIGTERM or SIGKILL (with the last signal sent).

        Args:
            grace_s: Time from SIGINT to SIGTERM, in [s]; SIGKILL follows 1 s after SIGTERM.
            last: The nodes stopped after the others (the recorder).
            drain_s: The longest wait for each ``last`` node's progress to stand still, per drain, in [s].
            drain_first: Also drain the ``last`` nodes before any node is stopped.
        """
        if drain_first:
            self._drain(last, drain_s)
        start = time.monotonic()
        alive = {n: p for n, p in self.processes.items() if p.poll() is None}
        first = {n: p for n, p in alive.items() if n not in last}
        self._stop_wave(first, start, grace_s)
        rest = {n: p for n, p in alive.items() if n in last}
        self._drain(rest, drain_s)
        self._stop_wave(rest, start, grace_s)
        self._close_host()
        for log in self._logs.values():
            log.close()
        return {n: p.wait() for n, p in self.processes.items()}  # every one has ended

    def _drain(self, names: Iterable[str], drain_s: float) -> None:
        """Let each running node of ``names`` drain (:meth:`wait_quiet`); a Ctrl-C ends the wait, not the stop."""
        try:
            for name in names:
                if self.processes[name].poll() is None:
                    self.wait_quiet(name, quiet_s=0.5, timeout_s=drain_s)
        except KeyboardInterrupt:
            return

    def _stop_wave(self, alive: Mapping[str, NodeProcess], start: float, grace_s: float) -> None:
        """SIGINT to ``alive``, SIGTERM to those left after ``grace_s``, SIGKILL after 1 s more; exits noted."""
        for process in alive.values():
            _signal_group(process, signal.SIGINT)

        def note_exits() -> bool:
            for name, process in alive.items():
                if name not in self.stop_s and process.poll() is not None:
                    self.stop_s[name] = round(time.monotonic() - start, 3)
            return any(name not in self.stop_s for name in alive)

        for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 1.0)):
            deadline = time.monotonic() + wait_s
            while note_exits() and time.monotonic() < deadline:
                time.sleep(0.02)
            for name, process in alive.items():
                if process.poll() is None:
                    self.escalated[name] = signal.Signals(sig).name
                    _signal_group(process, sig)
        for process in alive.values():
            process.wait(timeout=5)
        note_exits()


def read_progress(path: Path) -> tuple[str, int] | None:
    """Return a progress file's ``(count, timer rounds)``; None if there is none.

    A file of a bare count counts every read as a round; an empty one (caught while being written) has the
    count ``""``.

    Args:
        path: The progress file (``<node>.progress`` in the ready folder).
    """
    try:
        text = path.read_text().split()
    except FileNotFoundError:
        return None
    if not text:
        return "", 0
    if len(text) == 1:
        return text[0], time.monotonic_ns()
    try:
        return text[0], int(text[1])
    except ValueError:
        return "", 0


class DrainWatch:
    """Whether a recorder has taken everything sent to it, from the progress it reports.

    The recorder writes ``"<messages written> <timer rounds>"`` ten times a second from its executor, the same
    thread that takes its messages. Its progress is quiet once the count stood still for ``quiet_s`` of wall
    time while its timer ran ``rounds`` times: its subscriptions had nothing left to take. A count that stood
    still because the recorder got no CPU (a loaded machine), its timer standing too, is not quiet.

    Args:
        quiet_s: Wall time the count must stand still [s].
        rounds: Rounds of the recorder's timer it must stand still for.
    """

    def __init__(self, quiet_s: float = 0.5, rounds: int = 5) -> None:
        self.quiet_s, self.rounds = quiet_s, rounds
        self._count: str | None = None
        self._since_s, self._since_round = time.monotonic(), 0

    def quiet(self, progress: tuple[str, int]) -> bool:
        """Take the progress read now (:func:`read_progress`); whether it is quiet.

        Args:
            progress: ``(count, timer rounds)`` as :func:`read_progress` returns it; an empty count is no news.
        """
        count, round_ = progress
        if not count:  # caught between truncation and write: no news
            return False
        if count != self._count:
            self._count, self._since_s, self._since_round = count, time.monotonic(), round_
            return False
        return time.monotonic() - self._since_s >= self.quiet_s and round_ - self._since_round >= self.rounds


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (no such process, or a zombie waiting for its parent to reap it).

    Args:
        pid: A process id.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2 :].startswith(("Z", "X"))


def _signal_group(process: NodeProcess, sig: int) -> None:
    pid = process.pid
    if pid <= 0:  # never started (its node host ended first): killpg(0) would signal the launcher's own group
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)


#: How long a node's ROS teardown may take before its watchdog (live.nodes.node_runtime) ends it [s]: below the
#: launcher's shutdown_grace_s (3 s by default), after which the launcher escalates
TEARDOWN_LIMIT_S = 2.0
#: How much later the watchdog's GIL-free fallback (faulthandler) ends a teardown that holds the GIL [s]
TEARDOWN_FALLBACK_S = 0.5
#: When a node whose teardown hung holding the GIL is ended, after SIGINT [s] (the limit, then the fallback)
TEARDOWN_DUMP_S = TEARDOWN_LIMIT_S + TEARDOWN_FALLBACK_S

#: The first line faulthandler writes when a node's teardown watchdog (live.nodes.node_runtime) fires, GIL-free,
#: with status 1: only ever after the node's outputs were closed, during its ROS teardown
_TEARDOWN_DUMP = re.compile(r"^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!$", re.MULTILINE)


def teardown_hung(log_text: str) -> bool:
    """Whether a node's log shows that its ROS teardown hung holding the GIL and the watchdog ended it.

    Its outputs were complete: ``run_node`` closes them before the watchdog starts.

    Args:
        log_text: The node's whole log.
    """
    return _TEARDOWN_DUMP.search(log_text) is not None
