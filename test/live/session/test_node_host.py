"""The node host forks each node process from an interpreter that loaded the heavy modules once; a forked node is
the process ``python -m <module>`` would have been: its arguments, its own environment (not the host's), its own
process group, its log, its exit status (a signal's negative number), and it ends when the host does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cosim_validation.common.process_kernel import own_group_ended_with_parent
from cosim_validation.live.session.node_host import NodeHost
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec
from test.subprocesses import alive

CHILD = """
import json, os, signal, sys, time
what = sys.argv[1]
seen = {"argv": sys.argv[1:], "name": __name__, "pgid": os.getpgid(0), "env": dict(os.environ)}
print(json.dumps({**seen, "comm": open("/proc/self/comm").read().strip()}))
print("to stderr", file=sys.stderr)
if what == "exit":
    raise SystemExit(int(sys.argv[2]))
if what == "raise":
    raise ValueError("the node's own mistake")
if what == "interrupt":
    raise KeyboardInterrupt
if what == "sleep":
    time.sleep(600)
"""


DRAW = "import numpy\nprint(numpy.random.random())\n"


def _start_host(folder: Path) -> Iterator[NodeHost]:
    """A node host whose modules include ``host_child`` (the CHILD above) and ``draw``, started with HOST_ONLY=1."""
    (folder / "host_child.py").write_text(CHILD)
    (folder / "draw.py").write_text(DRAW)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), *sys.path]), "HOST_ONLY": "1"}
    with open(folder / "host.log", "ab") as log:
        started = NodeHost(env, log, own_group_ended_with_parent)
        try:
            yield started
        finally:
            started.close()


@pytest.fixture
def host(tmp_path: Path) -> Iterator[NodeHost]:
    """A node host of this test alone (the tests that end it)."""
    yield from _start_host(tmp_path)


@pytest.fixture(scope="module")
def shared_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeHost]:
    """One node host for the tests that fork from it and leave it running (its warm-up is about 2 CPU-s)."""
    yield from _start_host(tmp_path_factory.mktemp("host"))


def _run(host: NodeHost, tmp_path: Path, *args: str, console: bool = False) -> tuple[int, str]:
    log = tmp_path / f"{args[0]}.log"
    process = host.spawn("child", "host_child", args, {"PATH": os.environ["PATH"], "OWN": "mine"}, log, console)
    code = process.wait(timeout=120)
    return code, log.read_text()


def test_a_forked_node_runs_as_main_with_its_arguments_environment_and_process_group(
    shared_host: NodeHost, tmp_path: Path
) -> None:
    host = shared_host
    code, log = _run(host, tmp_path, "exit", "0")
    assert code == 0
    seen = json.loads(log.splitlines()[0])
    assert seen["argv"] == ["exit", "0"]
    assert seen["name"] == "__main__"
    assert seen["comm"] == "child"  # the node's name in ps -e, top and pgrep
    assert seen["env"] == {"PATH": os.environ["PATH"], "OWN": "mine"}  # its own, nothing of the host's (HOST_ONLY)
    assert seen["pgid"] not in (os.getpgid(0), os.getpgid(host.process.pid))  # a group of its own
    assert log.splitlines()[1] == "to stderr"


@pytest.mark.parametrize(
    ("args", "code", "logged"),
    [
        (("exit", "3"), 3, ""),
        (("raise",), 1, "ValueError: the node's own mistake"),
        (("interrupt",), -signal.SIGINT, "KeyboardInterrupt"),
    ],
)
def test_a_forked_node_ends_with_the_status_the_interpreter_gives(
    shared_host: NodeHost, tmp_path: Path, args: tuple[str, ...], code: int, logged: str
) -> None:
    status, log = _run(shared_host, tmp_path, *args)
    assert status == code
    assert logged in log


def test_a_signal_that_ends_a_forked_node_is_its_status_and_the_host_goes_on(
    shared_host: NodeHost, tmp_path: Path
) -> None:
    host = shared_host
    sleeper = host.spawn("child", "host_child", ["sleep"], dict(os.environ), tmp_path / "sleep.log", False)
    with pytest.raises(subprocess.TimeoutExpired):
        sleeper.wait(timeout=0.2)
    assert sleeper.poll() is None
    sleeper.send_signal(signal.SIGKILL)
    assert sleeper.wait(timeout=60) == -signal.SIGKILL
    assert _run(host, tmp_path, "exit", "5")[0] == 5  # the next one starts as before


def test_the_nodes_end_with_their_host(host: NodeHost, tmp_path: Path) -> None:
    sleeper = host.spawn("child", "host_child", ["sleep"], dict(os.environ), tmp_path / "sleep.log", False)
    pid = sleeper.pid
    host.process.kill()
    assert sleeper.wait(timeout=60) == -signal.SIGTERM
    deadline = time.monotonic() + 60  # a limit on the wait, not the property: the node must end at all
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def test_a_host_whose_launcher_is_done_ends_by_itself(host: NodeHost, tmp_path: Path) -> None:
    assert _run(host, tmp_path, "exit", "0")[0] == 0
    host.close()
    assert host.process.returncode == 0


@pytest.mark.parametrize("fork", [True, False])
def test_a_node_of_a_group_is_the_same_forked_or_started_fresh(tmp_path: Path, repo_root: Path, fork: bool) -> None:
    """The markers node refuses a bad configuration with one error line and status 1, either way."""
    group = ProcessGroup(tmp_path, fork=fork)
    group.start(ProcessSpec("markers", "markers", ("-p", f"config:={repo_root / 'config' / 'digital_twin.yaml'}")))
    assert group.processes["markers"].wait(timeout=120) == 1
    assert group.stop() == {"markers": 1}
    log = (tmp_path / "logs" / "markers.log").read_text()
    assert log.startswith("error: ")
    assert "unknown key" in log
    assert (tmp_path / "logs" / "node_host.log").exists() is fork


def test_exec_in_the_environment_starts_each_node_fresh(tmp_path: Path) -> None:
    assert ProcessGroup(tmp_path, env={"COSIM_NODE_START": "exec"}).fork is False
    assert ProcessGroup(tmp_path, env={}).fork is True


def test_the_host_loads_the_heavy_modules_and_nothing_of_ros_before_it_forks() -> None:
    probe = "import json, sys\nfrom cosim_validation.live.session.node_host import WARM_MODULES, warm_up\n"
    probe += "print(json.dumps([warm_up(), [m for m in WARM_MODULES if m not in sys.modules], 'rclpy' in sys.modules,"
    probe += " 'dash' in sys.modules]))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    # open3d as the nodes load it, without its Plotly viewer (Dash and Plotly: 0.35 CPU-s of every session's host)
    assert json.loads(done.stdout) == [[], [], False, False], done.stderr


def test_a_node_of_the_host_runs_a_kernel_without_loading_numba_again() -> None:
    """numba fills its registries at a process's first kernel (about 0.45 CPU-s, numpy's and scipy's implementations
    imported); the host does it before it forks, so a node's first kernel imports no module of numba's."""
    probe = """import json, os, sys
from cosim_validation.live.session.node_host import warm_up
warm_up()
before = set(sys.modules)
from cosim_validation.monitor.metrics.inside_test import InsideTest
tetra = InsideTest([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
inside = tetra.contains([[0.1, 0.1, 0.1], [1, 1, 1]]).tolist()
print(json.dumps([inside, sorted(m for m in set(sys.modules) - before if m.startswith("numba."))]))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout) == [[True, False], []], done.stderr


def test_a_node_of_the_host_finds_its_log_callers_module_without_mapping_every_loaded_file() -> None:
    """rclpy's logger looks up its caller's module with inspect, which maps the file of every loaded module at the
    first lookup; the host maps its modules before it forks, so a node maps only the ones it loads itself."""
    probe = """import inspect, json, os, sys
from cosim_validation.live.session.node_host import warm_up
warm_up()
mapped = set(inspect.modulesbyfile)
import numpy
print(json.dumps([os.path.realpath(numpy.__file__) in mapped, len(mapped) >= len(sys.modules) // 2]))
"""
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout) == [True, True], done.stderr


@pytest.mark.parametrize("json_output", [False, True])
def test_another_node_start_is_one_error_before_anything_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], json_output: bool
) -> None:
    from cosim_validation.cli.main import main

    monkeypatch.setenv("COSIM_NODE_START", "spawn")
    code = main(["session", *(["--json"] if json_output else []), "--cases", "1", "--out", str(tmp_path / "run")])
    out, err = capsys.readouterr()
    message = "COSIM_NODE_START='spawn': expected fork (the default) or exec"
    assert code == 1
    if json_output:
        assert json.loads(out)["error"]["message"] == message
        assert err == ""
    else:
        assert err.splitlines() == [f"error: {message}"]
    assert not (tmp_path / "run").exists()


def test_forked_nodes_draw_their_own_random_numbers(shared_host: NodeHost, tmp_path: Path) -> None:
    """A fresh interpreter seeds numpy's global random state from the system; a fork would share the host's."""
    draws = []
    for i in range(2):
        process = shared_host.spawn("draw", "draw", [], dict(os.environ), tmp_path / f"draw{i}.log", False)
        assert process.wait(timeout=120) == 0
        draws.append((tmp_path / f"draw{i}.log").read_text().strip())
    assert draws[0] != draws[1]


def test_a_node_with_variables_of_its_own_or_another_command_is_started_fresh() -> None:
    assert ProcessSpec("markers", "markers").forkable()
    assert not ProcessSpec("markers", "markers", env={"OMP_NUM_THREADS": "1"}).forkable()  # read at import


def test_an_empty_node_start_is_the_default(tmp_path: Path) -> None:
    assert ProcessGroup(tmp_path, env={"COSIM_NODE_START": ""}).fork is True


LOST_HOST = """
import os, signal, sys, time
from cosim_validation.live.session.node_host import NodeHost
from cosim_validation.common.process_kernel import own_group_ended_with_parent
from cosim_validation.live.session.process_group import _signal_group
host = NodeHost(dict(os.environ), open(os.devnull, "wb"), own_group_ended_with_parent)
process = host.spawn("never", "never_forked", [], dict(os.environ), os.devnull, False)
host.process.kill()  # before it answered: the request is never forked
host.process.wait()
_signal_group(process, signal.SIGTERM)  # the launcher stopping what it started
print(process.pid, process.poll(), host.lost, flush=True)
"""


def test_a_process_the_host_never_forked_is_never_signalled() -> None:
    """Its pid is 0: killpg(0) would have signalled the launcher's own process group (seen in a review: the
    launcher and everything in its group ended by SIGTERM). Run in a group of its own, so a regression ends only
    that."""
    done = subprocess.run(
        [sys.executable, "-c", LOST_HOST], capture_output=True, text=True, timeout=120, start_new_session=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "1", "True"]


@pytest.mark.ros
def test_a_lost_host_is_named_and_its_nodes_end(tmp_path: Path, node_env: dict[str, str]) -> None:
    group = ProcessGroup(tmp_path, env=node_env)
    group.start(ProcessSpec("recorder", "recorder", ("-p", f"output:={tmp_path / 'bag.mcap'}")))
    group.wait_ready(["recorder"], timeout_s=120)
    pid = group.processes["recorder"].pid
    assert group._host is not None
    group._host.process.kill()
    assert group.processes["recorder"].wait(timeout=60) == -signal.SIGTERM  # assumed: the kernel's signal
    assert group.node_host_lost
    deadline = time.monotonic() + 60  # a limit on the wait, not the property: the node must end at all
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    group.stop()
