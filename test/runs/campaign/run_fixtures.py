"""Fixtures of the campaign and report tests (a pytest plugin, see test/conftest.py): two small real suites
and one uninterrupted reference run, computed once per session.

The suites come from the project's generators on the shipped configuration: a grid suite (k = 2 per cube)
and a random suite on the 7 % of the left lung next to the heart, at 90 mm, 20 cases in all, so that the
straight controller both violates and respects the heart and cubes hold two cases (Figure 6). The
reference run executes them on the virtual and the emulated physical robot with one worker. Imports are
inside the functions: this plugin loads with every test session.
"""

from __future__ import annotations

import fcntl
import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest

from cosim_validation.common.config import package_root

if TYPE_CHECKING:
    from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome, CampaignRequest

T = TypeVar("T")
CONFIG = package_root() / "config" / "needle_insertion.yaml"
BACKENDS = ("virtual", "physical")


def make_suites(folder: Path) -> tuple[Path, Path]:
    """A grid (k = 2) and a random (12 cases) suite near the heart at 90 mm, written into ``folder``."""
    from cosim_validation.anatomy import load_anatomy
    from cosim_validation.common.config import load_config
    from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config

    config = load_config(CONFIG)
    scene = load_anatomy(config["anatomy"])
    testgen = load_testgen_config(config["testgen"])
    paths = []
    for request in (
        TestgenRequest("grid", 0.09, 2, region="heart_side_7pct", seed=2),
        TestgenRequest("random", 0.09, 2, count=12, region="heart_side_7pct", seed=2),
    ):
        suite, _ = generate_suite(scene, testgen, request)
        path = folder / f"{request.method}.parquet"
        suite.write(path)
        paths.append(path)
    return paths[0], paths[1]


def computed_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], T]) -> T:
    """``make(folder)`` for this test run: under pytest-xdist the first process to ask computes it in a folder all
    processes of the run share (under a file lock) and the others load its pickled result; in one process, once.

    The campaign fixtures below are asked for by tests in many folders, which ``make test`` spreads over both
    processes: each process ran the reference campaign itself before (about a minute of CPU each).
    """
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return make(tmp_path_factory.mktemp(name))
    shared = tmp_path_factory.getbasetemp().parent / f"computed-once-{name}"  # the run's root, above each worker's
    shared.mkdir(exist_ok=True)
    with (shared / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if make raises
        done = shared / "result.pickle"
        if done.exists():
            loaded: T = pickle.loads(done.read_bytes())
            return loaded
        result = make(shared / "data")
        done.write_bytes(pickle.dumps(result))
        return result


def copy_run(run_dir: Path, to: Path) -> Path:
    """A copy of the shared run ``run_dir`` at ``to`` (returned), without SQLite's ``-wal`` and ``-shm`` files.

    Other test processes read the shared run at the same time: a reader's connection makes those two files and
    removes them when it closes, so a plain copy of the folder could list them and then not find them (seen once
    in a full run: shutil.Error, No such file or directory). The finished run's database holds every row without
    them; readers never write to it.
    """
    shutil.copytree(run_dir, to, ignore=shutil.ignore_patterns("*.sqlite-wal", "*.sqlite-shm"))
    return to


@pytest.fixture(scope="session")
def suites(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The grid and random suite files (read only: shared by the test processes)."""

    def make(folder: Path) -> tuple[Path, Path]:
        folder.mkdir(parents=True, exist_ok=True)
        return make_suites(folder)

    return computed_once(tmp_path_factory, "suites", make)


def request_for(suites: tuple[Path, ...], out: Path, **options: Any) -> CampaignRequest:
    """A campaign over ``suites`` on both robots with one worker (``options`` override)."""
    from cosim_validation.runs.campaign.campaign_runner import CampaignRequest

    settings: dict[str, Any] = {"backends": BACKENDS, "workers": 1} | options
    return CampaignRequest(config_path=CONFIG, suite_paths=tuple(suites), out_dir=out, **settings)


@pytest.fixture(scope="session")
def reference(suites: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> CampaignOutcome:
    """The uninterrupted run, one worker (read only: shared by the test processes)."""
    from cosim_validation.runs.campaign.campaign_runner import run_campaign

    def make(folder: Path) -> CampaignOutcome:
        return run_campaign(request_for(suites, folder / "run"), progress_stream=None)

    return computed_once(tmp_path_factory, "reference", make)
