"""A process that has loaded the nodes' heavy modules once and forks each node process from itself.

Every node of a session used to start as a fresh interpreter and load the same libraries: numpy, numba, MuJoCo,
open3d and the project's assembly cost about 1.5 CPU-s per node, a third of what a one-case session's nodes spend
in all. The launcher (:class:`~cosim_validation.live.session.process_group.ProcessGroup`) starts this host once; the
host imports :data:`WARM_MODULES` and then, for each node, forks a child that runs
``python -m cosim_validation.live.nodes.<executable>`` as that command would: its own process group, its own
environment, its log as stdout and stderr, the same exit status.

Nothing of ROS 2 is loaded before the fork: rclpy's libraries start tracing threads (LTTng-UST) when they load,
and a forked child would lack them; each node loads rclpy itself (about 0.15 s) and joins the graph as before.

The launcher and the host talk over two pipes, one JSON object per line. The launcher asks
``{"name", "module", "args", "env", "log", "console"}``; the host answers ``{"pid": N}`` (or ``{"error": text}``)
and, whenever a child ends, ``{"exited": pid, "code": c}`` with the code as :attr:`subprocess.Popen.returncode`
gives it (negative: the signal that ended it). Run as ``python -m cosim_validation.live.session.node_host
REQUEST_FD REPLY_FD``.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import os
import runpy
import select
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from cosim_validation.common.open3d_import import load_open3d
from cosim_validation.common.process_kernel import own_group_ended_with_parent, set_process_name

#: Imported by the host before it forks: what most nodes load and that starts no thread of its own when loaded
#: (numpy's BLAS re-creates its threads in a forked child). Optional ones that are missing are skipped.
WARM_MODULES = (
    "numpy",
    "numba",
    "mujoco",
    "open3d",
    "cosim_validation.assembly",
    "cosim_validation.assembly.monitor_world",
)
#: Modules that must not be loaded before a fork (they start threads when they load)
COLD_MODULES = ("rclpy",)
#: The longest wait for the host's answer to a request [s]: its warm-up imports, on a loaded machine
ANSWER_LIMIT_S = 120.0


def warm_up(modules: tuple[str, ...] = WARM_MODULES) -> list[str]:
    """Import ``modules``; the ones that could not be imported, with why (the nodes meet the same error themselves).

    Args:
        modules: Module names.
    """
    missing = []
    for name in modules:
        try:
            if name == "open3d":  # as the nodes load it: its Plotly viewer (Dash, 0.35 CPU-s) deferred until used
                load_open3d("the node host's warm-up")
            else:
                importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a node that needs it reports it in its own log
            missing.append(f"{name}: {exc}")
    if "numba" in sys.modules:
        # numba fills its CPU target's registries (numpy's and scipy's implementations) at a process's first compile
        # or cache load: about 0.45 CPU-s in every node that runs a kernel; done here, the children inherit them
        from numba.core.registry import cpu_target

        cpu_target.target_context.refresh()
    # rclpy's logger finds its caller's module with inspect, whose first lookup maps the file of every loaded module
    # (about 2,000 real paths, 0.05-0.1 CPU-s at each node's first log line); mapped here, a node maps only its own
    inspect.getmodule(warm_up.__code__)
    loaded = [m for m in COLD_MODULES if m in sys.modules]
    if loaded:
        raise RuntimeError(f"node host: {', '.join(loaded)} loaded before the fork (by {', '.join(modules)})")
    return missing


def _run_child(request: dict[str, Any], channels: tuple[int, int], host: int) -> None:
    """In the forked child of ``host``: become the node process ``request`` describes, run it, exit with its status.

    What a fresh interpreter would have of its own and a fork shares is renewed: numpy's global random state (drawn
    from the system's entropy, as at numpy's import). Python's string hash seed stays the host's.
    """
    code = 1
    try:
        own_group_ended_with_parent()  # Linux: ended when the host ends
        set_process_name(request["name"])  # its command line is the host's; its name in ps -e, top, pgrep the node's
        if os.getppid() != host:  # the host died before the request took effect: nobody would stop this process
            os._exit(1)
        for fd in channels:
            os.close(fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if not request.get("console", False):
            os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [request["module"], *request["args"]]
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if "numpy" in sys.modules:
            sys.modules["numpy"].random.seed()
        code = _run_module(request["module"])
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _run_module(module: str) -> int:
    """Run ``module`` as ``__main__``; its exit status as the interpreter gives it.

    1 after a traceback; a KeyboardInterrupt nobody caught ends the process by SIGINT.
    """
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        _finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        code = 1
    except BaseException:  # noqa: BLE001 - printed as the interpreter prints it
        traceback.print_exc()
        code = 1
    _finish()
    return code


def _exit_code(value: object) -> int:
    """The process status of ``SystemExit(value)``, as the interpreter maps it."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _finish() -> None:
    """What the interpreter does at exit: wait for the non-daemon threads, run the exit handlers."""
    with contextlib.suppress(Exception):
        threading._shutdown()  # type: ignore[attr-defined]  # joins the non-daemon threads, as at exit
    import atexit

    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()


def serve(request_fd: int, reply_fd: int) -> None:
    """Answer spawn requests from ``request_fd`` on ``reply_fd`` until the launcher closes its end.

    Args:
        request_fd: Read end of the launcher's requests.
        reply_fd: Write end of the host's answers and exit notices.
    """
    pending = b""
    host = os.getpid()
    replies = os.fdopen(reply_fd, "w", buffering=1)

    def send(message: dict[str, Any]) -> None:
        with contextlib.suppress(BrokenPipeError):
            replies.write(json.dumps(message) + "\n")

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            send({"exited": pid, "code": os.waitstatus_to_exitcode(status)})

    while True:
        readable, _, _ = select.select([request_fd], [], [], 0.02)
        reap()
        if not readable:
            continue
        chunk = os.read(request_fd, 65536)
        if not chunk:  # the launcher is done (or gone): the children end with their own signals
            return
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            try:
                pid = os.fork()
            except OSError as exc:
                send({"error": f"cannot fork: {exc.strerror}"})
                continue
            if pid == 0:
                _run_child(request, (request_fd, reply_fd), host)
            print(f"node host: {request['name']} ({request['module']}) is process {pid}", file=sys.stderr, flush=True)
            send({"pid": pid})


def main() -> int:
    """``python -m cosim_validation.live.session.node_host REQUEST_FD REPLY_FD``."""
    request_fd, reply_fd = int(sys.argv[1]), int(sys.argv[2])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the launcher's Ctrl-C is the launcher's; it stops the nodes
    set_process_name("node_host")
    for line in warm_up():
        print(f"node host: not preloaded: {line}", file=sys.stderr)
    serve(request_fd, reply_fd)
    return 0


class HostedProcess:
    """A node process the host forked: the part of :class:`subprocess.Popen` the launcher uses.

    Its pid is known once the host answered (``pid`` waits for it); its exit status once the host reaped it.

    Args:
        host: The host that forks it.
    """

    def __init__(self, host: NodeHost) -> None:
        self._host = host
        self._pid: int | None = None
        self.returncode: int | None = None

    @property
    def pid(self) -> int:
        """The process id, once the host answered (0: the host ended or gave up before it forked the process).

        A host that does not answer within :data:`ANSWER_LIMIT_S` is ended, as if it had died.
        """
        deadline = time.monotonic() + ANSWER_LIMIT_S
        while self._pid is None:
            if time.monotonic() > deadline:
                self._host.give_up()
            self._host.pump(block_s=0.1)
        return self._pid

    def poll(self) -> int | None:
        """The exit status if the process ended, else None (negative: the signal that ended it)."""
        self._host.pump()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait until the process ends; its exit status.

        Args:
            timeout: The longest wait [s]; None: no limit.

        Raises:
            subprocess.TimeoutExpired: Still running after ``timeout``.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"node process {self._pid}", timeout or 0.0)
            self._host.pump(block_s=0.02)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        """Send ``sig`` to the process (not its group) unless it has ended.

        Args:
            sig: The signal.
        """
        pid = self.pid
        if pid > 0 and self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)


class NodeHost:
    """The launcher's end of a node host: starts it, asks it for node processes, learns when they end.

    Args:
        env: The host's environment (the nodes' common one; each node gets its own at the fork).
        log: Where the host's own messages go.
        preexec_fn: Run in the host's process before it starts (its process group, its parent-death signal).
    """

    def __init__(self, env: Mapping[str, str], log: IO[bytes], preexec_fn: Callable[[], None]) -> None:
        request_r, self._requests = os.pipe()
        self._replies, reply_w = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", __name__, str(request_r), str(reply_w)],
            pass_fds=(request_r, reply_w),
            stdin=subprocess.DEVNULL,
            stdout=None,  # a node that writes to the console writes to ours
            stderr=log,
            env={**env, "PYTHONUNBUFFERED": "1"},
            preexec_fn=preexec_fn,
        )
        os.close(request_r)
        os.close(reply_w)
        os.set_blocking(self._replies, False)
        self._buffer = b""
        self._unanswered: deque[HostedProcess] = deque()
        self._children: dict[int, HostedProcess] = {}
        self.error = ""
        self._closed = False
        #: the host ended while the launcher still needed it (its nodes' exit codes are assumed, not observed)
        self.lost = False

    def spawn(
        self, name: str, module: str, args: Sequence[str], env: Mapping[str, str], log: Path, console: bool
    ) -> HostedProcess:
        """Ask for a node process (does not wait for it).

        Args:
            name: The node's name (the process's name, its first 15 bytes).
            module: The module it runs as ``__main__``.
            args: Its command-line arguments.
            env: Its whole environment.
            log: Its log file (stderr, and stdout unless ``console``).
            console: Its stdout is ours.
        """
        request: dict[str, Any] = {"name": name, "module": module, "args": list(args), "env": dict(env)}
        request.update(log=str(log), console=console)
        process = HostedProcess(self)
        self._unanswered.append(process)
        try:
            os.write(self._requests, (json.dumps(request) + "\n").encode())
        except BrokenPipeError:
            self._host_gone()
        return process

    def pump(self, block_s: float = 0.0) -> None:
        """Take the host's answers and exit notices that arrived (waiting up to ``block_s`` for the first).

        Args:
            block_s: The longest wait for something to arrive [s].
        """
        if self._closed:
            return
        if block_s > 0:
            select.select([self._replies], [], [], block_s)
        while True:
            try:
                chunk = os.read(self._replies, 65536)
            except BlockingIOError:
                break
            if not chunk:
                self._host_gone()
                break
            self._buffer += chunk
        while b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            self._take(json.loads(line))

    def _take(self, message: dict[str, Any]) -> None:
        if "exited" in message:
            child = self._children.pop(int(message["exited"]), None)
            if child is not None:
                child.returncode = int(message["code"])
            return
        process = self._unanswered.popleft()
        if "pid" in message:
            process._pid = int(message["pid"])
            self._children[process._pid] = process
        else:  # the host could not fork: the process ended before it began
            self.error = str(message.get("error", ""))
            process._pid, process.returncode = 0, 1

    def give_up(self) -> None:
        """End a host that does not answer (a hung import): its nodes end with it."""
        self.process.kill()
        self.process.wait()
        self._host_gone()

    def _host_gone(self) -> None:
        """The host ended: its children end with it (their parent-death signal, SIGTERM).

        What they exited with is not known here: SIGTERM (what the kernel sends them) is assumed, and :attr:`lost`
        says the host ended first.
        """
        self.lost = True
        for process in self._unanswered:
            process._pid, process.returncode = 0, 1
        self._unanswered.clear()
        for process in self._children.values():
            process.returncode = -signal.SIGTERM
        self._children.clear()

    def abort(self) -> list[int]:
        """End the host at once (SIGKILL), and with it every node process: the pids of those it had forked.

        For nodes that never joined ROS 2: waiting for the host to answer (it may still be loading its modules, seconds
        on a loaded machine) and then for each node to be signalled and reaped one by one took 17-33 s. Those it forked
        end by their parent-death signal (SIGTERM); a request it had not forked yet never becomes a process.
        """
        if self._closed:
            return []
        self.pump()
        forked = list(self._children)
        self.process.kill()
        self.process.wait()
        self._host_gone()
        self._closed = True
        os.close(self._requests)
        os.close(self._replies)
        return forked

    def close(self) -> None:
        """Let the host end (its children should have ended), wait for it and take its last notices."""
        if self._closed:
            return
        os.close(self._requests)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        self.pump()
        self._closed = True
        os.close(self._replies)


if __name__ == "__main__":
    raise SystemExit(main())
