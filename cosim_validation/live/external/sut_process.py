"""The process of an external node under test: started, watched, stopped and restarted by the framework.

The node runs in a process group of its own (a ``ros2 launch`` starts children; they are stopped with it), with
the DDS scope of the adapter in its environment, its output in a log file whose last lines go into the reason of
a case it fails. It is asked to stop as ``ros2 launch`` asks its nodes (SIGINT), then SIGTERM, then SIGKILL,
each after a grace period. On Linux the group's leader also gets SIGTERM when the framework's process dies, so a
crashed worker leaves no node behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.process_kernel import signal_on_parent_death
from cosim_validation.controllers.external_spec import fill_command, placeholders_of
from cosim_validation.controllers.plugin_api import RunLogs

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # an ANSI colour sequence (Fast DDS and rclpy colour their logs)
# Fast DDS's notice when another process holds a shared-memory port's lock (it falls back to UDP), e.g.
# "[RTPS_TRANSPORT_SHM Error] Failed init_port fastdds_port7007: open_and_lock_file failed"
_SHM_PORT = re.compile(r"RTPS_TRANSPORT_SHM.*init_port.*open_and_lock_file failed")
_GRACE_S = (3.0, 2.0, 2.0)  # after SIGINT, SIGTERM, SIGKILL [s]


class NodeUnderTestError(CosimError):
    """The node under test cannot be started, died, or does not answer; the message says which and why."""


def _die_with_parent() -> None:  # runs in the child between fork and exec
    signal_on_parent_death(signal.SIGTERM)


class NodeProcess:
    """One instance of the node under test.

    Its output goes to ``node-under-test-<pid>-<start>.log`` in the run's logs folder (``<pid>``: the process
    that runs the cases, a campaign worker; ``<start>``: 1, then one more at each restart), kept after the run;
    without a logs folder, to a temporary file removed when the node stops.

    Args:
        command: The program and its arguments, which may name placeholders
            (:data:`~cosim_validation.controllers.external_spec.COMMAND_PLACEHOLDERS`).
        cwd: The folder it starts in.
        env: Its environment (ROS_DOMAIN_ID and the discovery range of the adapter included).
        logs: Where to keep its output; None: not kept.
    """

    def __init__(self, command: Sequence[str], cwd: str, env: Mapping[str, str], logs: RunLogs | None = None) -> None:
        self.command, self.cwd, self.env = tuple(command), cwd, dict(env)
        self.logs = logs
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None
        self._log_kept = False  # in the run's logs folder: not removed at stop
        self._scratch: str | None = None  # {log_dir} outside a run: removed at stop
        self.starts = 0  # how many times it was started (1 + restarts)

    def start(self) -> None:
        """Start the node (a running one is left running).

        Raises:
            NodeUnderTestError: The program cannot be executed.
        """
        if self.running():
            return
        fd, self._log_path, self._log_kept = self._open_log()
        try:
            self._proc = subprocess.Popen(
                self.filled_command(),
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=fd,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except OSError as exc:
            self._log_path.unlink(missing_ok=True)  # nothing ran, nothing to read
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None
            self._log_path = None
            self._log_kept = False
            raise NodeUnderTestError(f"cannot start the node under test {self.command[0]!r}: {exc}") from None
        finally:
            os.close(fd)
        self.starts += 1

    def filled_command(self) -> tuple[str, ...]:
        """The command of this start, its placeholders filled in (:func:`fill_command`).

        ``{log_dir}`` is the run's logs folder, or outside a run a temporary folder removed when the node stops.
        """
        if "log_dir" not in placeholders_of(self.command[1:]):
            log_dir = ""
        elif self.logs is not None and self.logs.folder is not None:
            self.logs.folder.mkdir(parents=True, exist_ok=True)
            log_dir = str(self.logs.folder)
        else:
            if self._scratch is None:
                self._scratch = tempfile.mkdtemp(prefix="cosim-node-under-test-")
            log_dir = self._scratch
        return fill_command(self.command, int(self.env.get("ROS_DOMAIN_ID", "0")), log_dir)

    def _open_log(self) -> tuple[int, Path, bool]:
        """A new file for this start's output: (descriptor, path, kept in the run's logs folder).

        In the logs folder, ``node-under-test-<pid>-<n>.log`` with the first ``n`` from ``starts + 1`` that names no
        file yet (a resumed campaign, a process id used again, two nodes in one process never overwrite a log). A
        folder that cannot be written gives a warning and a temporary file, never a failed case.
        """
        if self.logs is not None and self.logs.folder is not None:
            n = self.starts + 1
            try:
                while True:
                    path = self.logs.path(f"node-under-test-{os.getpid()}-{n}.log")
                    assert path is not None
                    try:
                        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644), path, True
                    except FileExistsError:
                        n += 1
            except OSError as exc:
                print(
                    f"warning: cannot write the node under test's log into {self.logs.folder} ({exc.strerror}); "
                    "it goes to a temporary file, removed when the node stops",
                    file=sys.stderr,
                    flush=True,
                )
        fd, name = tempfile.mkstemp(prefix="cosim-node-under-test-", suffix=".log")
        return fd, Path(name), False

    def log_note(self) -> str:
        """`` (its output: logs/<file>)`` while the node's output is kept in the run's logs folder, else ""."""
        if not self._log_kept or self._log_path is None:
            return ""
        return f" (its output: {self._log_path.parent.name}/{self._log_path.name})"

    def running(self) -> bool:
        """Whether the node's process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def exit_problem(self) -> str:
        """Why the node is not running ("" while it runs), with the last lines of its output."""
        if self._proc is None:
            return "the node under test was not started"
        code = self._proc.poll()
        if code is None:
            return ""
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        tail = self.output_tail()
        return f"the node under test {how}" + (f"; its last output: {tail}" if tail else "") + self.log_note()

    def output_tail(self, lines: int = 3) -> str:
        """The last ``lines`` lines of the node's output, joined with a vertical bar between spaces.

        Terminal colour codes are taken out, and so is Fast DDS's notice that a shared-memory port is locked by
        another process (it then talks over UDP; the notice is not the node's own word and crowded out the line
        that said why the node exited).

        Args:
            lines: How many lines at most, from the last 4 KiB of the output.
        """
        if self._log_path is None:
            return ""
        try:
            with self._log_path.open("rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - 4096))
                text = log.read().decode("utf-8", "replace")
        except OSError:
            return ""
        kept = [line for line in (_plain(raw) for raw in text.splitlines()) if line and not _SHM_PORT.search(line)]
        return " | ".join(kept[-lines:])

    def stop(self) -> None:
        """Stop the node and everything it started.

        Sends SIGINT, SIGTERM, SIGKILL to its process group, each followed by SIGCONT, so that a stopped node runs
        its stop.
        """
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            for sig, grace_s in zip((signal.SIGINT, signal.SIGTERM, signal.SIGKILL), _GRACE_S, strict=True):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, sig)
                    # a stopped node (SIGSTOP, a debugger) takes the signal only once it runs again, and then leaves
                    # the DDS graph itself instead of lingering there until its lease ends
                    os.killpg(proc.pid, signal.SIGCONT)
                try:
                    proc.wait(timeout=grace_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._sweep_group(proc)
        if self._log_path is not None and not self._log_kept:
            with contextlib.suppress(OSError):
                self._log_path.unlink()
        self._log_path, self._log_kept = None, False
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    @staticmethod
    def _sweep_group(proc: subprocess.Popen[bytes] | None) -> None:
        """Kill what is left of the group (children that outlived their leader)."""
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def restart(self) -> None:
        """Stop the node, then start it again."""
        self.stop()
        self.start()


def _plain(line: str) -> str:
    """A line of the node's output without its terminal colour codes and surrounding blanks."""
    return _COLOUR.sub("", line).strip()
