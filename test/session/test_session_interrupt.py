"""Ctrl-C on ``cosim session`` stops every node within 5 s and leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie has exited already
        return f.read().split()[2] != "Z"


def test_ctrl_c_stops_every_node(tmp_path: Path, repo_root: Path, node_env: dict[str, str]) -> None:
    run_dir = tmp_path / "run"
    session = subprocess.Popen(
        [sys.executable, "-m", "cosim_validation.cli.main", "session", "--cases", "50", "--out", str(run_dir)],
        cwd=repo_root,
        env=node_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines = []
    assert session.stdout is not None
    for line in session.stdout:  # wait until the first case is done: every node is up and busy
        lines.append(line)
        if line.startswith("[1/"):
            break
    else:
        pytest.fail("the session ended before its first case:\n" + "".join(lines))
    pids = [int(p.read_text()) for p in (run_dir / ".ready").iterdir() if not p.suffix]  # ready files: a pid each
    assert len(pids) == 7
    sent = time.monotonic()
    session.send_signal(signal.SIGINT)
    rest, _ = session.communicate(timeout=30)
    stopped_s = time.monotonic() - sent
    assert session.returncode == 130, rest
    assert "session interrupted" in rest
    assert stopped_s < 5.0
    assert not [pid for pid in pids if _alive(pid)]
    # what was recorded until then stays readable
    from cosim_validation.campaign.results_db import ResultsDB
    from cosim_validation.ros.bag import topics_of

    assert topics_of(run_dir / "session.mcap")["/cosim/expected"][1] > 0
    with ResultsDB.open(run_dir / "results.sqlite") as db:
        assert len(db.cases()) >= 1
