"""A node that a crash in native code ends before it is ready is started once more; any other end is the session's
error, as before (process_group.ProcessGroup.check_running)."""

from __future__ import annotations

import signal
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from cosim_validation.live.session.process_group import NodeStartError, ProcessGroup, ProcessSpec
from cosim_validation.live.session.session_runner import process_specs

# starts N times: crashes (SIGSEGV, as rclpy did in a node's constructor) or exits while the count of starts is
# below its limit, then says it is ready and waits to be stopped
NODE = textwrap.dedent(
    """
    import ctypes, os, pathlib, signal, sys, time
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as every node does (run_node): a parent may have ignored it
    name, limit, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ready = pathlib.Path(os.environ["COSIM_READY_DIR"])
    starts = ready / f"{name}.starts"
    count = int(starts.read_text()) + 1 if starts.exists() else 1
    starts.write_text(str(count))
    print(f"start {count}", file=sys.stderr, flush=True)
    if count <= limit:
        if how == "crash":
            ctypes.string_at(0)
        sys.exit(1)
    (ready / name).write_text("")
    while True:
        time.sleep(0.1)
    """
)


@dataclass(frozen=True)
class ScriptSpec(ProcessSpec):
    """A process that plays a node: fails ``limit`` times (``how``: crash or exit 1), then is ready."""

    limit: int = 1
    how: str = "crash"

    def command(self) -> list[str]:
        return [sys.executable, "-c", NODE, self.name, str(self.limit), self.how]


def _group(tmp_path: Path, spec: ProcessSpec) -> ProcessGroup:
    group = ProcessGroup(tmp_path)
    group.start(spec)
    return group


def test_a_node_that_crashes_once_before_it_is_ready_is_started_again(tmp_path: Path) -> None:
    group = _group(tmp_path, ScriptSpec("flaky", "flaky", limit=1, how="crash"))
    try:
        group.wait_ready(["flaky"], timeout_s=60)
        assert group.restarted == {"flaky": "SIGSEGV"}
    finally:
        codes = group.stop(grace_s=2)
    assert codes["flaky"] == -signal.SIGINT  # the second process, stopped by the session
    log = (tmp_path / "logs" / "flaky.log").read_text()
    assert "start 1" in log
    assert "[session] flaky crashed (SIGSEGV) before it was ready; started again" in log
    assert "start 2" in log


@pytest.mark.parametrize(
    ("limit", "how", "message"),
    [
        (2, "crash", r"node 'twice' exited with code -11 before it was ready \(started again after SIGSEGV\)"),
        (1, "exit", r"node 'twice' exited with code 1 before it was ready:\n  \[twice\] start 1"),  # its own error
    ],
)
def test_a_second_crash_or_an_exit_is_the_error(tmp_path: Path, limit: int, how: str, message: str) -> None:
    group = _group(tmp_path, ScriptSpec("twice", "twice", limit=limit, how=how))
    try:
        with pytest.raises(NodeStartError, match=message):
            group.wait_ready(["twice"], timeout_s=60)
    finally:
        group.stop(grace_s=2)
    assert group.restarted == ({"twice": "SIGSEGV"} if how == "crash" else {})


def test_a_node_that_writes_outputs_at_its_start_is_not_started_again(tmp_path: Path) -> None:
    group = _group(tmp_path, ScriptSpec("writer", "writer", restart_on_crash=False, limit=1, how="crash"))
    try:
        with pytest.raises(NodeStartError, match=r"node 'writer' exited with code -11 before it was ready:\n"):
            group.wait_ready(["writer"], timeout_s=60)
    finally:
        group.stop(grace_s=2)
    assert group.restarted == {}


def test_the_session_never_starts_the_recorder_or_the_test_generator_twice(tmp_path: Path) -> None:
    from cosim_validation.common.config import package_root
    from cosim_validation.live.session.graph import load_graph
    from cosim_validation.live.session.session_plan import node_launches

    graph = load_graph(package_root() / "config" / "digital_twin.yaml")
    (tmp_path / "params").mkdir()
    launches = node_launches(graph, tmp_path, "", 1)
    specs = {s.executable: s.restart_on_crash for s in process_specs(launches, tmp_path, console=False)}
    assert not specs.pop("recorder")
    assert not specs.pop("test_generator")
    assert all(specs.values()), specs
