"""Issue 15, item 7: SIGKILL of the recorder after a completed case. Before: the session failed, results.sqlite
kept that case's verdicts but no trajectory, the bag stayed unfinished (``cosim replay``: "File end magic is
invalid") and the output still said ``wrote .../session.mcap``. Now the launcher recovers the bag, stores the
finished cases' trajectories from it and names only the files it wrote."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.live.ros.bag import read_messages
from cosim_validation.runs.campaign.results_db import ResultsDB
from test.live.session.test_session_interrupt import start_session

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_recorder_killed_after_a_case(
    tmp_path: Path, repo_root: Path, node_env: dict[str, str], capfd: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    session = start_session(run_dir, repo_root, node_env, 6, start_new_session=True)
    try:
        assert session.stdout is not None
        lines = []
        for line in session.stdout:
            lines.append(line)
            if line.startswith("[1/"):
                break
        else:
            pytest.fail("the session ended before its first case:\n" + "".join(lines))
        time.sleep(1.0)  # the recorder has the first case's last messages (it writes each one as it comes)
        recorder = int((run_dir / ".ready" / "recorder").read_text())
        os.kill(recorder, signal.SIGKILL)
        rest, _ = session.communicate(timeout=180)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(session.pid, signal.SIGKILL)
    output = "".join(lines) + rest
    assert session.returncode == 1, output  # a required node died: the session failed
    assert "Traceback" not in output
    assert "the recorder did not finish the bag: recovered " in output
    assert (run_dir / "session.mcap").is_file()
    assert not (run_dir / "session.mcap.part").exists()
    wrote = [line for line in output.splitlines() if line.startswith("wrote ")]
    assert wrote == [f"wrote {run_dir}: session.mcap, results.sqlite, summary.json"]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "failed"
    assert summary["bag_recovered"]["messages"] > 100
    with ResultsDB.open(run_dir / "results.sqlite") as db:
        completed = [c.test_id for c in db.cases() if c.outcome == "completed"]
        with_trajectories = db.trajectory_robots()
    assert completed, output
    for test_id in completed:  # every finished case's trajectories, from the recovered bag
        assert set(with_trajectories.get(test_id, [])) == {"expected", "virtual", "physical"}, test_id
    reports = {m.message.test_id for m in read_messages(run_dir / "session.mcap", ["/cosim/case_reports"])}
    # the case announced before the kill has its report in the bag; a case that finished while the recorder was
    # being killed can have had its report published after it (CI under load: case 2's samples were recorded, its
    # report was not); its trajectories above and the replay below still hold it
    first = lines[-1].split()[1]
    assert first in completed
    assert first in reports
    # and cosim replay reads it (before: "File end magic is invalid")
    assert main(["replay", str(run_dir / "session.mcap"), "--json"]) in (0, 1)
    replayed = json.loads(capfd.readouterr().out)
    assert {c["test_id"] for c in replayed["cases"]} >= set(completed)
