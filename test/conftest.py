"""Shared fixtures: paths of the repository and of the optional real anatomy meshes."""

from __future__ import annotations

import gc
import os
import resource
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test.live.ros.ros_harness import exclusive_domain, ros_env

REPO = Path(__file__).resolve().parents[1]

# before any DDS participant of the tests exists, in this process and the node processes it starts: a dead
# participant leaves the graph after 4 s instead of Fast DDS's default 20 s (test/live/ros/short_lease.xml)
os.environ.setdefault("FASTDDS_DEFAULT_PROFILES_FILE", str(REPO / "test" / "live" / "ros" / "short_lease.xml"))

# a reference campaign run shared by the campaign and report tests (computed once per session)
pytest_plugins = ["test.runs.campaign.run_fixtures", "test.xdist_units"]


# ---------------------------------------------------------------- CPU time per test
#: how many tests the CPU table at the end of a run lists (COSIM_CPU_ROWS=500 for a profile of the whole suite)
_CPU_TABLE_ROWS = int(os.environ.get("COSIM_CPU_ROWS", "15"))
_CPU_START = pytest.StashKey[float]()
_cpu_by_test: list[tuple[float, str]] = []


def _cpu_s() -> float:
    """CPU seconds (user and system) of this process and of its children that have ended, so far."""
    own, children = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Note the CPU time used before the test's set-up."""
    item.stash[_CPU_START] = _cpu_s()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """The teardown's report carries the CPU seconds of the whole test (set-up to teardown, its node processes and
    subprocesses included once they ended): pytest-xdist sends it to the main process with the report.

    Args:
        item: The test.
        call: The phase just run.
    """
    outcome = yield
    if call.when == "teardown" and _CPU_START in item.stash:
        outcome.get_result().user_properties.append(("cpu_s", _cpu_s() - item.stash[_CPU_START]))  # type: ignore[attr-defined]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect each test's CPU seconds where the run is reported (the main process under pytest-xdist).

    Args:
        report: A phase's report.
    """
    if report.when == "teardown":
        _cpu_by_test.extend((float(value), report.nodeid) for key, value in report.user_properties if key == "cpu_s")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The tests that cost most CPU, beside pytest's wall-clock durations: on 2 cores with three test processes the
    suite is CPU-bound, and a test's wall time includes the waits for the others.

    Args:
        terminalreporter: pytest's terminal reporter.
    """
    if not _cpu_by_test:
        return
    total = sum(cpu for cpu, _ in _cpu_by_test)
    shown = min(_CPU_TABLE_ROWS, len(_cpu_by_test))
    terminalreporter.write_sep("=", f"most CPU: {shown} of {len(_cpu_by_test)} tests, {total / 60:.1f} CPU-min in all")
    for cpu, nodeid in sorted(_cpu_by_test, reverse=True)[:_CPU_TABLE_ROWS]:
        terminalreporter.write_line(f"{cpu:8.2f}s cpu  {nodeid}")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root (the cosim_validation package folder)."""
    return REPO


@pytest.fixture(scope="session")
def shared_anatomy() -> Path | None:
    """The folder of real anatomical meshes (../shared/anatomy), or None where absent.

    Override with COSIM_SHARED_ANATOMY. Tests that use it also run on the embedded models, so a
    machine without the folder still tests the same code.
    """
    # next to the checkout, or next to one of its parents (git worktrees live deeper)
    candidates = [os.environ.get("COSIM_SHARED_ANATOMY", "")] + [str(p / "shared" / "anatomy") for p in REPO.parents]
    for candidate in candidates:
        if candidate and (Path(candidate) / "heart.stl").is_file():
            return Path(candidate)
    return None


# ---------------------------------------------------------------- real ROS 2 graphs (DDS in an exclusive domain)
@pytest.fixture
def ros_domain(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """An exclusive ROS_DOMAIN_ID with localhost discovery, set for this process and its children."""
    with exclusive_domain() as domain:
        monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
        monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        yield domain
    # an executor stopped with a callback's exception still unread (a node destroyed under a MultiThreadedExecutor)
    # leaves a future that prints "exception was never retrieved" to stderr when it is collected: collect it now,
    # inside this test, not during a later one that checks its own stderr line by line
    gc.collect()


@pytest.fixture
def rclpy_context(ros_domain: int) -> Iterator[Any]:
    """An initialized rclpy context in the test's domain, shut down afterwards."""
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context, domain_id=ros_domain)
    try:
        yield context
    finally:
        context.try_shutdown()


@pytest.fixture
def node_env(ros_domain: int) -> dict[str, str]:
    """Environment for node processes of this test."""
    assert os.environ["ROS_DOMAIN_ID"] == str(ros_domain)
    return ros_env(ros_domain)
