"""The domain probe's answer survives a crash of the middleware: printed before the teardown, and a probe killed
before it answered is started once more (a Fast DDS SIGSEGV was seen once on a loaded machine)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from cosim_validation.live.session import domain_probe
from cosim_validation.live.session.domain_probe import DomainProbeError, strangers

ENV = {"ROS_DOMAIN_ID": "7"}


def finished(returncode: int, stdout: str = "", stderr: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(["graph_probe"], returncode, stdout, stderr)


def runs(monkeypatch: pytest.MonkeyPatch, *results: subprocess.CompletedProcess[str]) -> list[int]:
    """Make the probe's processes end as ``results`` say, in turn; returns the list of attempts made."""
    made: list[int] = []
    queue: Iterator[subprocess.CompletedProcess[str]] = iter(results)

    def run(env: object, window_s: float, domain: str) -> subprocess.CompletedProcess[str]:
        made.append(len(made) + 1)
        return next(queue)

    monkeypatch.setattr(domain_probe, "_run_probe", run)
    return made


def test_a_probe_killed_before_it_answered_is_started_once_more(monkeypatch: pytest.MonkeyPatch) -> None:
    made = runs(monkeypatch, finished(-11), finished(0, '["node /stranger"]\n'))
    assert strangers(ENV) == ["node /stranger"]
    assert made == [1, 2]


def test_an_answer_printed_before_a_crash_in_the_teardown_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    made = runs(monkeypatch, finished(-11, "[]\n"))
    assert strangers(ENV) == []
    assert made == [1]


def test_a_probe_that_keeps_crashing_or_fails_is_one_error(monkeypatch: pytest.MonkeyPatch) -> None:
    runs(monkeypatch, finished(-11), finished(-11))
    with pytest.raises(DomainProbeError, match=r"domain 7: the graph probe failed \(exit -11: no output; 2 tries\)"):
        strangers(ENV)
    made = runs(monkeypatch, finished(1, "", "ImportError: no rclpy"))  # an error of its own: not tried again
    with pytest.raises(DomainProbeError, match=r"exit 1: ImportError: no rclpy\)"):
        strangers(ENV)
    assert made == [1]


@pytest.mark.ros
def test_the_real_probe_prints_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    from cosim_validation.live.session.discovery_scope import DiscoveryScope

    env = DiscoveryScope(232).env()
    done = domain_probe._run_probe(env, 0.2, "232")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
