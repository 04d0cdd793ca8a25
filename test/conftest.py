"""Shared fixtures: paths of the repository and of the optional real anatomy meshes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test.live.ros.ros_harness import exclusive_domain, ros_env

REPO = Path(__file__).resolve().parents[1]

# a reference campaign run shared by the campaign and report tests (computed once per session)
pytest_plugins = ["test.runs.campaign.run_fixtures"]


# directories whose files share no directory-wide fixture: each file is its own unit of work, so their live
# sessions (30-100 s each) are spread over both processes rather than queued on one
_PER_FILE = frozenset({"live/session", "live/ros", "cli"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """xdist groups: `make test` runs the suite on two processes (``-n 2 --dist loadgroup``). A test directory is
    one group (its own folder, not its sub-folders), so its session-scoped fixtures (a reference campaign, a built
    case study) are computed once, by
    the process that runs the whole directory; the directories of _PER_FILE are one group per file."""
    for item in items:
        relative = item.path.relative_to(REPO / "test")
        folder = "/".join(relative.parts[:-1])
        group = str(relative) if folder in _PER_FILE else folder or "root"
        item.add_marker(pytest.mark.xdist_group(group))


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
