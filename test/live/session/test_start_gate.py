"""A session's node processes start before its domain is chosen: each loads its modules, then waits at its gate
(``start_gate``) until the session writes the chosen domain's environment into it, and joins ROS 2 only then, on
that domain, whatever domain it was started with."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cosim_validation.live.session.discovery_scope import DiscoveryScope, DomainLease
from cosim_validation.live.session.domain_probe import strangers
from cosim_validation.live.session.process_group import ProcessGroup, ProcessSpec
from cosim_validation.live.session.start_gate import GATE_ENV, env_change, open_gate

CHILD = """
import os, sys
from cosim_validation.live.session.start_gate import pass_gate
print("loaded", flush=True)
pass_gate()
print(os.environ.get("KEPT"), os.environ.get("SET"), os.environ.get("REMOVED"), flush=True)
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
        assert child.stdout.readline().split() == ["k", "s", "None"]
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
        child.wait()
    assert not (tmp_path / "node.gate.part").exists()  # written whole, then renamed


def test_without_a_gate_a_process_goes_through(tmp_path: Path) -> None:
    env = {**_python_env(), "KEPT": "k"}
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["loaded", "k", "None", "None"]


@pytest.fixture
def two_domains() -> Iterator[tuple[int, int]]:
    """Two domains held from every other session and test on this machine for the test's length."""
    with DomainLease.acquire() as first, DomainLease.acquire() as second:
        yield first.domain_id, second.domain_id


@pytest.mark.ros
def test_a_gated_node_joins_the_domain_its_gate_names(tmp_path: Path, two_domains: tuple[int, int]) -> None:
    started_on, chosen = (DiscoveryScope(domain) for domain in two_domains)
    group = ProcessGroup(tmp_path / "run", env=started_on.env())
    spec = ProcessSpec("recorder", "recorder", ("-p", f"output:={tmp_path / 'run' / 'session.mcap'}"))
    group.start(spec, gated=True)
    try:
        group.open_gate("recorder", chosen.env())
        group.wait_ready(["recorder"], timeout_s=120)
        assert strangers(chosen.env())  # the recorder, the only process here (the probe stops at its first sign)
        assert strangers(started_on.env()) == []
    finally:
        codes = group.stop(grace_s=10.0)
    assert codes == {"recorder": 0}


def _python_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != GATE_ENV}
