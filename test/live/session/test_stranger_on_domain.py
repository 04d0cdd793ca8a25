"""A ROS 2 node that is not ours on the domain a session would take.

The stranger (``stranger_node``) publishes ``std_msgs/String`` on ``/cosim/expected``. A domain chosen
automatically is probed first and skipped while the stranger is there; a session forced onto that domain
(``--domain-id``) ends with one ``error:`` line naming the topic, the type and the stranger, exit code 1, and a
``summary.json`` that says failed, instead of a ``session.mcap`` that replay would refuse.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cosim_validation.live.session import discovery_scope
from cosim_validation.live.session.discovery_scope import LOCK_DIR_ENV, DiscoveryScope, DomainLease
from cosim_validation.live.session.domain_probe import strangers

pytestmark = [pytest.mark.ros]


@pytest.fixture
def two_domains() -> Iterator[tuple[int, int]]:
    """Two domains held from every other session and test on this machine for the test's length, the second one
    empty when taken (as a session takes one: probed, domains with anyone on them skipped).

    Probed because a domain whose lease another test of this machine gave back is not always empty: seen twice in
    full runs of the suite, '/parameter_events' of no node on it for more than 30 s.
    """
    with DomainLease.acquire() as first, DomainLease.acquire(probe=strangers) as second:
        yield first.domain_id, second.domain_id


@pytest.fixture
def stranger(two_domains: tuple[int, int]) -> Iterator[int]:
    """The stranger running in the first domain; yields that domain."""
    domain = two_domains[0]
    command = [sys.executable, "-m", "test.live.session.stranger_node", "/cosim/expected"]
    process = subprocess.Popen(command, env=DiscoveryScope(domain).env(), stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().strip() == "up"
        yield domain
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.mark.slow
def test_the_probe_sees_the_stranger_and_nothing_on_an_empty_domain(
    stranger: int, two_domains: tuple[int, int]
) -> None:
    found = strangers(DiscoveryScope(stranger).env())  # the first sign of it ends the look
    assert found
    assert all(item.split()[0] in ("node", "topic") for item in found), found
    assert not any("_cosim_domain_probe" in item for item in found)
    assert strangers(DiscoveryScope(two_domains[1]).env()) == []


@pytest.mark.slow
def test_an_automatic_domain_skips_the_stranger(
    stranger: int, two_domains: tuple[int, int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # only the two held domains are candidates, and no lock of another session hides them from this lease
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))
    monkeypatch.setattr(discovery_scope, "_candidates", lambda *_: list(two_domains))
    with DomainLease.acquire(probe=strangers) as scope:
        assert scope.domain_id == two_domains[1]
        assert scope.occupied == (stranger,)
        assert scope.as_dict()["domains_skipped_as_occupied"] == [stranger]
    with DomainLease.acquire() as unprobed:  # the lock alone does not see the stranger
        assert unprobed.domain_id == stranger


@pytest.mark.slow
def test_a_session_forced_onto_the_strangers_domain_ends_with_one_error(
    stranger: int, two_domains: tuple[int, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, repo_root: Path
) -> None:
    from cosim_validation.live.session.default_suite import make_default_suite
    from cosim_validation.live.session.graph import load_graph

    suite = make_default_suite(load_graph(repo_root / "config" / "digital_twin.yaml"), tmp_path / "suite").path
    # the domain is held by this test: the session must not find its lock taken
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path / "locks"))
    run = tmp_path / "run"
    command = [sys.executable, "-m", "cosim_validation.cli.main", "session", "--suite", str(suite), "--cases", "1"]
    command += ["--out", str(run), "--domain-id", str(stranger)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=dict(os.environ), check=False)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    errors = done.stderr.strip().splitlines()
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith("error: "), done.stderr
    for words in ("/cosim/expected", "std_msgs/msg/String", "/stranger", f"ROS_DOMAIN_ID={stranger}"):
        assert words in errors[0]
    assert "session.mcap" not in done.stdout  # no line claims the bag
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert summary["ros_domain_id"] == stranger
    assert summary["foreign_topics"]["/cosim/expected"]["publishers"] == ["/stranger"]
