"""A session's node processes start before its domain is chosen: each loads its modules, then waits at its gate
(``start_gate``) until the session writes the chosen domain's environment into it, and joins ROS 2 only then, on
that domain, whatever domain it was started with."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cosim_validation.live.session.discovery_scope import DiscoveryScope, DomainLease
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec
from cosim_validation.live.session.start_gate import GATE_ENV, OWNER_ENV, env_change, open_gate
from test.subprocesses import alive

CHILD = """
import os, sys
from cosim_validation.live.session.start_gate import pass_gate
print("loaded", flush=True)
pass_gate()
print(os.environ.get("KEPT"), os.environ.get("SET"), os.environ.get("REMOVED"), os.environ.get("COSIM_START_GATE"))
"""


def test_env_change_sets_what_differs_and_removes_what_is_gone() -> None:
    before = {"KEPT": "1", "CHANGED": "a", "REMOVED": "x"}
    after = {"KEPT": "1", "CHANGED": "b", "NEW": "n"}
    assert env_change(before, after) == ({"CHANGED": "b", "NEW": "n"}, ["REMOVED"])
    assert env_change(before, before) == ({}, [])


def test_a_process_waits_at_its_gate_and_takes_its_environment(tmp_path: Path) -> None:
    gate = tmp_path / "node.gate"
    env = {**_python_env(), GATE_ENV: str(gate), "KEPT": "k", "REMOVED": "r"}
    child = subprocess.Popen([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "loaded"
        assert child.poll() is None  # it cannot go on without its gate file
        open_gate(gate, {"SET": "s"}, ["REMOVED"])
        assert child.stdout.readline().split() == ["k", "s", "None", "None"]  # a process it starts waits at no gate
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
        child.wait()
    assert not (tmp_path / "node.gate.part").exists()  # written whole, then renamed


def test_without_a_gate_a_process_goes_through(tmp_path: Path) -> None:
    env = {**_python_env(), "KEPT": "k"}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["loaded", "k", "None", "None", "None"]


def test_a_process_at_its_gate_ends_when_the_process_that_started_it_is_gone(tmp_path: Path) -> None:
    """Without the kernel's parent-death signal (which the session asks for), the gate itself notices."""
    starter = (  # it exits at once, perhaps before the child even looked at its gate
        "import os, subprocess, sys\n"
        f"env = dict(os.environ, {OWNER_ENV}=str(os.getpid()))\n"
        f"child = subprocess.Popen([sys.executable, '-c', {CHILD!r}], stdout=subprocess.DEVNULL, env=env)\n"
        "print(child.pid, flush=True)\n"
    )
    env = {**_python_env(), GATE_ENV: str(tmp_path / "never.gate")}
    done = subprocess.run([sys.executable, "-c", starter], env=env, stdout=subprocess.PIPE, text=True, timeout=60)
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 60  # a limit on the wait, not the property: the child must end at all
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


@pytest.mark.parametrize("all_forked", [False, True], ids=["host_still_loading", "every_node_forked"])
def test_a_started_graph_never_run_is_ended_with_nothing_left(
    tmp_path: Path, repo_root: Path, all_forked: bool
) -> None:
    """Processes started for a session that never ran (a refused lease, a Ctrl-C during the probe) are ended when
    the block is left, at once: none of them joined ROS 2. Either at once (the node host may still be loading its
    modules, its nodes not yet forked) or once the host has forked every node: no process is left either way."""
    from cosim_validation.live.session.graph import load_graph
    from cosim_validation.live.session.session_runner import start_graph

    graph = load_graph(repo_root / "config" / "digital_twin.yaml")
    processes: dict[str, Any] = {}
    pids: list[int] = []

    def refused_lease() -> None:
        with start_graph(graph, tmp_path / "run", "suite.parquet", 1, console=False) as started:
            processes.update(started.group.processes)
            if all_forked:  # a process's pid is known once it runs (the host answered)
                pids.extend(p.pid for p in processes.values())
            raise RuntimeError("the lease was refused")

    with pytest.raises(RuntimeError, match="the lease was refused"):
        refused_lease()
    assert len(processes) == len(graph.nodes)
    assert {name: p.poll() is not None for name, p in processes.items()} == dict.fromkeys(processes, True)
    pids.extend(p.pid for p in processes.values() if p.pid > 0)  # the ones known by now (0: never forked)
    assert [pid for pid in pids if alive(pid)] == []  # ended, not only taken for ended
    if all_forked:
        assert len(set(pids)) == len(graph.nodes)
    assert not list((tmp_path / "run" / ".ready").glob("*.gate"))  # no gate was opened
    assert not (tmp_path / "run" / ".ready" / "recorder").exists()  # nobody was ready


@pytest.fixture
def two_domains() -> Iterator[tuple[int, int]]:
    """Two domains held from every other session and test on this machine for the test's length."""
    with DomainLease.acquire() as first, DomainLease.acquire() as second:
        yield first.domain_id, second.domain_id


@pytest.mark.ros
def test_a_gated_node_joins_the_domain_its_gate_names(tmp_path: Path, two_domains: tuple[int, int]) -> None:
    started_on, chosen = (DiscoveryScope(domain) for domain in two_domains)
    group = ProcessGroup(tmp_path / "run", env=started_on.env())
    output = f"output:={tmp_path / 'run' / 'gated.mcap'}"
    spec = ProcessSpec("gated_recorder", "recorder", ("-r", "recorder:__node:=gated_recorder", "-p", output))
    group.start(spec, gated=True)
    try:
        group.open_gate("gated_recorder", chosen.env())
        group.wait_ready(["gated_recorder"], timeout_s=120)
        # the recorder makes one rclpy context, in one domain: seen by name on the chosen one, it joined that one
        assert "gated_recorder" in _node_names_seen(chosen, "gated_recorder")
    finally:
        codes = group.stop(grace_s=10.0)
    assert codes == {"gated_recorder": 0}


def _node_names_seen(scope: DiscoveryScope, wanted: str, timeout_s: float = 60.0) -> list[str]:
    """The node names a node of this process sees on ``scope``'s domain once ``wanted`` is among them (or later)."""
    import rclpy
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor

    from test.live.ros.ros_harness import spin_until

    with scope.joined():
        context = Context()
        rclpy.init(context=context, domain_id=scope.domain_id)
    try:
        node = rclpy.create_node("gate_watcher", context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        spin_until(node, executor, lambda: wanted in node.get_node_names(), timeout_s)
        names = node.get_node_names()
        executor.shutdown()
        node.destroy_node()
        return names
    finally:
        context.try_shutdown()


def _python_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != GATE_ENV}
