"""Where the output of an external node under test goes: a new file in the run's logs folder for every start,
never one that exists (a resumed campaign, a process id used again); a temporary file, with a warning, when the
folder cannot be written."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from cosim_validation.controllers.plugin_api import RunLogs
from cosim_validation.live.external.sut_process import NodeProcess

SAYS = [sys.executable, "-c", "print('hello from the node', flush=True); raise SystemExit(4)"]


def _ended(process: NodeProcess) -> str:
    deadline = time.monotonic() + 30.0
    while process.running() and time.monotonic() < deadline:
        time.sleep(0.02)
    return process.exit_problem()


def test_a_start_never_overwrites_a_log_that_is_there(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    earlier = logs / f"node-under-test-{os.getpid()}-1.log"
    earlier.write_text("an earlier run's output\n")
    process = NodeProcess(SAYS, str(tmp_path), dict(os.environ), RunLogs(logs))
    process.start()
    problem = _ended(process)
    mine = f"node-under-test-{os.getpid()}-2.log"
    assert (
        problem
        == f"the node under test exited with code 4; its last output: hello from the node (its output: logs/{mine})"
    )
    assert earlier.read_text() == "an earlier run's output\n"
    process.stop()
    assert (logs / mine).read_text() == "hello from the node\n"  # kept after the stop


def test_a_logs_folder_that_cannot_be_made_gives_a_warning_and_a_temporary_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "logs"
    blocked.write_text("a file where the folder would be")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setattr("tempfile.tempdir", None)  # read TMPDIR again
    process = NodeProcess(SAYS, str(tmp_path), dict(os.environ), RunLogs(blocked))
    process.start()
    problem = _ended(process)
    assert problem == "the node under test exited with code 4; its last output: hello from the node"
    assert capsys.readouterr().err.startswith(f"warning: cannot write the node under test's log into {blocked}")
    assert len(list(scratch.glob("cosim-node-under-test-*.log"))) == 1
    process.stop()
    assert list(scratch.glob("cosim-node-under-test-*.log")) == []  # a temporary log is removed at stop
