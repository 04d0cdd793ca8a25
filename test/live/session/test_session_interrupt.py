"""Ctrl-C on ``cosim session`` stops every node, the recorder last, and leaves no process behind."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from test.subprocesses import alive

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def start_session(run_dir: Path, repo_root: Path, node_env: dict[str, str], cases: int, **popen: Any) -> Any:
    """``cosim session --cases CASES --out RUN_DIR`` started, its output (stdout and stderr) a text pipe.

    Args:
        popen: More arguments of :class:`subprocess.Popen` (``preexec_fn``, ``start_new_session``).
    """
    command = [
        sys.executable,
        "-m",
        "cosim_validation.cli.main",
        "session",
        "--cases",
        str(cases),
        "--out",
        str(run_dir),
    ]
    return subprocess.Popen(
        command, cwd=repo_root, env=node_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **popen
    )


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_and_wait_for_first_case(
    run_dir: Path, repo_root: Path, node_env: dict[str, str], sigint_ignored: bool = False
) -> tuple[Any, list[int]]:
    """A 50-case session once its first case is done (every node up and busy), and the nodes' pids.

    ``sigint_ignored``: started as from a background job (``make test &``) or some CI runners, with SIGINT
    ignored, which a process inherits; the session and its nodes must take Ctrl-C back themselves.
    """
    session = start_session(run_dir, repo_root, node_env, 50, preexec_fn=_ignore_sigint if sigint_ignored else None)
    lines = []
    assert session.stdout is not None
    for line in session.stdout:
        lines.append(line)
        if line.startswith("[1/"):
            break
    else:
        pytest.fail("the session ended before its first case:\n" + "".join(lines))
    pids = [int(p.read_text()) for p in (run_dir / ".ready").iterdir() if not p.suffix]  # ready files: a pid each
    assert len(pids) == 7
    return session, pids


def _read_until(session: Any, prefix: str) -> list[str]:
    """Lines of the launcher's output up to and including the first that starts with ``prefix``."""
    assert session.stdout is not None
    lines = []
    for line in session.stdout:
        lines.append(line)
        if line.startswith(prefix):
            return lines
    pytest.fail(f"the launcher ended without printing {prefix!r}:\n" + "".join(lines))


@pytest.mark.parametrize("sigint_ignored", [False, True], ids=["sigint_default", "sigint_ignored_by_parent"])
def test_ctrl_c_stops_every_node(
    tmp_path: Path, repo_root: Path, node_env: dict[str, str], sigint_ignored: bool
) -> None:
    run_dir = tmp_path / "run"
    session, pids = _start_and_wait_for_first_case(run_dir, repo_root, node_env, sigint_ignored)
    session.send_signal(signal.SIGINT)
    # when the launcher says its nodes stopped, none is alive (it waited for each, escalating to SIGKILL)
    told = "".join(_read_until(session, "nodes stopped; completing"))
    assert not [pid for pid in pids if alive(pid)], told
    rest, _ = session.communicate(timeout=60)
    rest = told + rest
    assert session.returncode == 130, rest
    assert "session interrupted" in rest, rest
    # the last case's report, sent just before Ctrl-C, is in the bag: the recorder stops after the others
    assert "replayed the bag: verdicts equal to the live monitor's" in rest, rest
    assert not [pid for pid in pids if alive(pid)]
    # what was recorded until then stays readable
    from cosim_validation.live.ros.bag import topics_of
    from cosim_validation.runs.campaign.results_db import ResultsDB

    assert topics_of(run_dir / "session.mcap")["/cosim/expected"][1] > 0
    with ResultsDB.open(run_dir / "results.sqlite") as db:
        assert len(db.cases()) >= 1
        assert db.trajectory_robots()  # copied from the bag


def test_second_ctrl_c_skips_the_bag_check_and_keeps_the_summary(
    tmp_path: Path, repo_root: Path, node_env: dict[str, str]
) -> None:
    run_dir = tmp_path / "run"
    session, pids = _start_and_wait_for_first_case(run_dir, repo_root, node_env)
    session.send_signal(signal.SIGINT)
    _read_until(session, "nodes stopped; completing")
    session.send_signal(signal.SIGINT)
    rest, _ = session.communicate(timeout=60)
    assert session.returncode == 130, rest
    assert "bag check skipped: second Ctrl-C" in rest
    assert not [pid for pid in pids if alive(pid)]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert summary["bag_check"]["skipped"].startswith("second Ctrl-C")


def _children(pid: int) -> list[str]:
    """The command lines of ``pid``'s child processes."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:
        return []
    lines = []
    for child in children:
        try:
            lines.append(Path(f"/proc/{child}/cmdline").read_text().replace("\0", " "))
        except FileNotFoundError:
            continue
    return lines


def test_ctrl_c_while_the_domain_is_probed_and_the_suite_made_stops_every_node(
    tmp_path: Path, repo_root: Path, node_env: dict[str, str]
) -> None:
    """Ctrl-C at the start: the nodes loading behind their gates, the domain's probe waiting for discovery, the
    default suite being made in a thread of the launcher."""
    run_dir = tmp_path / "run"
    session = start_session(run_dir, repo_root, node_env, 1)
    while not any("graph_probe" in line for line in _children(session.pid)):
        assert session.poll() is None, session.communicate()[0]
        time.sleep(0.02)
    session.send_signal(signal.SIGINT)
    out, _ = session.communicate(timeout=120)
    assert session.returncode == 130, out
    assert out.strip().splitlines()[-1] == "error: interrupted", out
    assert "Traceback" not in out
    host_log = (run_dir / "logs" / "node_host.log").read_text()
    # the nodes the host had forked by then (none if it was still loading its modules: it is killed, and what it had
    # not forked never starts)
    pids = [int(line.rsplit(" ", 1)[1]) for line in host_log.splitlines() if " is process " in line]
    assert not [pid for pid in pids if alive(pid)], host_log
    assert not (run_dir / "summary.json").exists(), "no session ran"
