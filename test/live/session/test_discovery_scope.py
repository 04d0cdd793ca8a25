"""Every session leases its own ROS_DOMAIN_ID (file locks shared by every process on the machine)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.live.session.discovery_scope import (
    LOCK_DIR_ENV,
    DiscoveryScope,
    DomainLease,
    caller_domain,
    check_domain_request,
    next_scope,
)


@pytest.fixture
def locks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A private lock folder and a caller in the default domain, so the lowest free domain is known."""
    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))
    monkeypatch.delenv("ROS_DOMAIN_ID", raising=False)
    return tmp_path


def test_sessions_get_distinct_domains_and_give_them_back(locks: Path) -> None:
    with DomainLease.acquire() as first, DomainLease.acquire() as second:
        assert (first.domain_id, second.domain_id) == (1, 2)
        assert next_scope().domain_id == 3
    assert next_scope().domain_id == 1  # both released


def test_the_callers_domain_is_never_leased(locks: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROS_DOMAIN_ID", "1")
    assert caller_domain() == 1
    assert next_scope().domain_id == 2


@pytest.mark.parametrize("value", ["abc", "-5", "99999", "1.5"])
def test_a_callers_domain_that_is_none_is_refused(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """rcl refused 'abc' deep in a probe and Fast DDS printed only its own lines for 99999 (cosim doctor: no
    error line, exit 1; or a table that spoke of domain 0)."""
    monkeypatch.setenv("ROS_DOMAIN_ID", value)
    with pytest.raises(
        InputError, match=rf"ROS_DOMAIN_ID='{re.escape(value)}' in the environment: expected an integer"
    ):
        caller_domain()
    with pytest.raises(InputError, match="ROS_DOMAIN_ID="):
        check_domain_request(None, "localhost")
    monkeypatch.setenv("ROS_DOMAIN_ID", " ")
    assert caller_domain() == 0  # unset or blank: domain 0, as rcl reads it


def test_a_lease_held_by_another_process_is_skipped(locks: Path) -> None:
    code = (
        "import sys, time; from cosim_validation.live.session.discovery_scope import DomainLease\n"
        "lease = DomainLease.acquire(); print(lease.scope.domain_id, flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "1"
        assert next_scope().domain_id == 2
        with pytest.raises(InputError, match="--domain-id 1: another cosim session on this machine is using it"):
            DomainLease.acquire(1)
    finally:
        holder.communicate("", timeout=30)
    assert next_scope().domain_id == 1  # the kernel dropped the lock with the process


def test_a_process_with_its_own_tmpdir_sees_the_same_leases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's lock folder, not TMPDIR's: a campaign worker or a test run with a TMPDIR of its own would
    otherwise lease a domain that another process holds, and the two graphs would meet in it."""
    monkeypatch.delenv(LOCK_DIR_ENV, raising=False)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    code = (
        "from cosim_validation.live.session.discovery_scope import DomainLease\n"
        "import sys\ntry:\n    DomainLease.acquire(int(sys.argv[1]))\nexcept Exception as exc:\n    print(exc)"
    )
    with DomainLease.acquire() as held:
        env = {k: v for k, v in os.environ.items() if k not in ("TMP", "TEMP")} | {"TMPDIR": str(scratch)}
        command = [sys.executable, "-c", code, str(held.domain_id)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == f"--domain-id {held.domain_id}: another cosim session on this machine is using it"
    assert list(scratch.iterdir()) == []  # no lock folder of its own


def test_given_domain_and_range(locks: Path) -> None:
    with DomainLease.acquire(150, "SUBNET") as scope:
        assert scope == DiscoveryScope(150, "subnet", "given")
        assert scope.as_dict() == {"ros_domain_id": 150, "discovery_range": "SUBNET", "chosen": "given"}
    with pytest.raises(InputError, match=r"--domain-id 233: expected 0..232"):
        DomainLease.acquire(233)
    with pytest.raises(InputError, match="discovery range 'lan': expected one of localhost, subnet, off"):
        DomainLease.acquire(None, "lan")


def test_every_domain_busy(locks: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cosim_validation.live.session.discovery_scope.SESSION_DOMAINS", range(1, 3))
    with DomainLease.acquire(), DomainLease.acquire(), pytest.raises(InputError, match=r"every session domain"):
        DomainLease.acquire()


def test_environment_of_the_nodes(locks: Path) -> None:
    base = {"ROS_DOMAIN_ID": "0", "ROS_LOCALHOST_ONLY": "0", "ROS_STATIC_PEERS": "10.0.0.2", "PATH": "/bin"}
    env = DiscoveryScope(7).env(base)
    assert env == {
        "ROS_DOMAIN_ID": "7",
        "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST",
        "COSIM_DOMAIN_LOCK": str(locks / "7.lock"),
        "PATH": "/bin",
    }
    assert DiscoveryScope(7).describe() == "ROS_DOMAIN_ID=7 (auto), ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST"


def test_joining_a_scope_sets_this_process_and_restores_it(locks: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROS_STATIC_PEERS", "10.0.0.2")
    before = dict(os.environ)
    with DiscoveryScope(9).joined():
        assert os.environ["ROS_DOMAIN_ID"] == "9"
        assert "ROS_STATIC_PEERS" not in os.environ
        os.environ["SET_INSIDE"] = "1"
    assert dict(os.environ) == before  # also what the block set is gone
    with pytest.raises(RuntimeError), DiscoveryScope(9).joined():
        raise RuntimeError
    assert dict(os.environ) == before


def test_a_node_that_outlives_its_session_keeps_the_domain(locks: Path) -> None:
    """Nodes hold their session's lock shared: an orphaned node blocks the domain until it ends."""
    code = (
        "import sys; from cosim_validation.live.session.discovery_scope import join_domain_lock\n"
        "print(join_domain_lock() is not None, flush=True); sys.stdin.read()"
    )
    with DomainLease.acquire() as scope:
        node = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=scope.env()
        )
    try:  # the session is over, its node is not
        assert node.stdout is not None
        assert node.stdout.readline().strip() == "True"
        assert next_scope().domain_id == 2
    finally:
        node.communicate("", timeout=30)
    assert next_scope().domain_id == 1


def test_the_dashboard_joins_the_one_running_session(locks: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``cosim dashboard --live`` without --domain-id: the running session's leased domain, or the caller's when
    none runs, and a clear refusal when several run."""
    from cosim_validation.cli.dashboard import live_domain
    from cosim_validation.live.session.discovery_scope import running_sessions

    assert running_sessions() == []
    assert live_domain(None) == 0
    assert "no cosim session is running" in capsys.readouterr().err
    with DomainLease.acquire() as first:
        assert running_sessions() == [first.domain_id]
        assert live_domain(None) == first.domain_id
        assert f"joining the running cosim session in ROS domain {first.domain_id}" in capsys.readouterr().err
        with DomainLease.acquire(57) as second:
            assert running_sessions() == [first.domain_id, 57]
            with pytest.raises(InputError, match=r"2 cosim sessions are running \(ROS domains 1, 57\)"):
                live_domain(None)
            assert live_domain(57) == second.domain_id
    assert running_sessions() == []  # given back
    with pytest.raises(InputError, match=r"--domain-id must be within 0\.\.232"):
        live_domain(300)
