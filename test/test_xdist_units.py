"""`make test`'s scheduling (test/xdist_units.py) when a test hangs: one failure, the rest of the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test.xdist_units import work_unit

REPO = Path(__file__).resolve().parents[1]

_HANGS = """
import time
from pathlib import Path

def test_before():
    pass

def test_hangs():
    with (Path(__file__).parent.parent / "starts.txt").open("a") as starts:
        starts.write("started\\n")
    time.sleep(120)

def test_after():
    pass
"""


def test_units_are_folders_or_the_files_of_the_live_folders() -> None:
    assert work_unit("test/monitor/metrics/test_frechet.py::test_x[a]") == "monitor/metrics"
    assert work_unit("test/live/session/test_crtk_session.py::test_y") == "live/session/test_crtk_session.py"
    assert work_unit("test/test_docs.py::test_z") == "root"
    assert work_unit("slow/test_a.py::test_b") == "slow"


def test_a_test_past_its_time_limit_fails_once_and_its_unit_goes_on(tmp_path: Path) -> None:
    """The hung test ends its process and is reported; it is not handed to the next process to hang again (it was,
    once per restart, each time costing the whole limit), and the tests after it in its folder still run."""
    (tmp_path / "slow").mkdir()
    (tmp_path / "slow" / "test_a.py").write_text(_HANGS)
    (tmp_path / "quick").mkdir()
    (tmp_path / "quick" / "test_b.py").write_text("def test_one():\n    pass\n\ndef test_two():\n    pass\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    argv = [sys.executable, "-m", "pytest", "-c", "pytest.ini", "-p", "test.xdist_units", "-p", "no:cacheprovider"]
    argv += ["-p", "no:dash", "-n", "2", "--dist", "loadgroup", "-o", "faulthandler_timeout=3"]
    argv += ["-o", "faulthandler_exit_on_timeout=true"]
    argv += ["--max-worker-restart", "2", "-rf", "slow", "quick"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output[-3000:]
    assert "FAILED slow/test_a.py::test_hangs" in output, output[-3000:]
    assert "1 failed, 4 passed" in output, output[-3000:]
    assert (tmp_path / "starts.txt").read_text() == "started\n"  # run once


def test_live_units_and_others_go_out_in_turn_each_costliest_first() -> None:
    """A live unit's waits overlap another process's computing: live and other units in turn, in proportion to how
    many of each there are, each kind costliest first, ties in the collection's order."""
    from test.xdist_units import unit_order

    cost = {"common": 50, "live/ros/test_a.py": 2, "robustness": 900, "live/session/test_b.py": 60, "anatomy": 50}
    live = {"live/ros/test_a.py", "live/session/test_b.py"}
    assert unit_order(cost, live) == ["robustness", "live/session/test_b.py", "common", "live/ros/test_a.py", "anatomy"]
    cost |= {"root": 30, "supervisor": 20}  # five others to two live ones: the two kinds still end together
    assert unit_order(cost, live) == [
        "robustness",
        "common",
        "live/session/test_b.py",
        "anatomy",
        "root",
        "live/ros/test_a.py",
        "supervisor",
    ]
