"""Compile the numba kernels once, before anything runs in parallel: the main job, small.

Every hot kernel is compiled by numba on first use and kept in ``NUMBA_CACHE_DIR`` (``.cache/numba``). On a fresh
checkout nothing is compiled yet, so every process that needs a kernel before another one has written it compiles it
again: the campaign's workers, a session's seven nodes, the test suite's workers. ``make setup`` runs this script
once, beside the interface builds: a grid suite of the case study, a four-case campaign on both robots, its report,
and a check of one stored record; what they compile (forward and inverse kinematics, planning, the properties, the
metrics, test generation) is then loaded from the cache by every later process.

Usage: ``python scripts/warm_caches.py`` (with the environment of ``scripts/env.sh``).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from cosim_validation.cli.main import main as cosim


def run(*args: str) -> None:
    """Run one ``cosim`` command in this process; exit with its status if it fails.

    Args:
        *args: The command line after ``cosim``.
    """
    status = cosim(list(args))
    if status not in (0, 2):  # 2: a property was violated, which is a result, not a failure
        print(f"error: cosim {' '.join(args)} exited with {status}", file=sys.stderr)
        raise SystemExit(1)


def warm(work: Path) -> None:
    """The main job, small, in ``work``.

    Args:
        work: An empty folder for the suite, the run and the records.
    """
    run("testgen", "--method", "grid", "--granularity-mm", "20", "--per-cube", "1", "--out", str(work / "grid.parquet"))
    suite = str(work / "suite.parquet")
    run("testgen", "--method", "random", "--granularity-mm", "20", "--count", "4", "--out", suite)
    run("campaign", "--suite", suite, "--backends", "virtual,physical", "--workers", "1", "--out", str(work / "run"))
    run("report", str(work / "run"))
    run("export", str(work / "run"), "--out", str(work / "records"))
    records = sorted((work / "records").glob("*/virtual.npz"))
    if records:
        run("check", str(records[0]))


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="cosim-warm-") as folder:
        warm(Path(folder))
