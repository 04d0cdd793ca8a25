"""Campaigns store every case once, give the same rows with any executor or worker count, survive a Ctrl-C
and a SIGKILL, and reject bad requests with clear errors."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.exceptions import CosimError
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome, run_campaign
from cosim_validation.testgen import Suite
from test.runs.campaign.run_fixtures import CONFIG, copy_run, request_for
from test.runs.campaign.run_rows import assert_same_rows, rows_of, stored_rows

TOTAL = 20  # cases in the two test suites


def test_reference_stores_every_case(reference: CampaignOutcome) -> None:
    assert (reference.total, reference.ran, reference.skipped, reference.interrupted) == (TOTAL, TOTAL, 0, False)
    summary = json.loads((reference.out_dir / "summary.json").read_text())
    assert summary["cases"]["stored"] == TOTAL
    assert summary["last_call"]["cases_run"] == TOTAL
    rows = stored_rows(reference.out_dir)
    completed = [c.test_id for c in rows["cases"] if c.outcome == "completed"]
    assert completed, "no case of the test suites ran to the end"
    for test_id in completed:  # the plan and both robots are stored for every completed case
        assert {r for t, r in rows["records"] if t == test_id} == {"expected", "virtual", "physical"}
    heart = [v.status for v in rows["verdicts"] if v.property == summary["safety"]["property"] and v.robot == "virtual"]
    assert "violated" in heart  # the straight controller hits the heart in some cases
    assert "holds" in heart  # and misses it in others
    self_collision = {v.status for v in rows["verdicts"] if v.property == "no_self_collision"}
    assert self_collision <= {"holds", "violated"}, "the world gives the monitor the arm's self-collision model"


@pytest.mark.slow
def test_ray_equals_serial(reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path) -> None:
    """The grid suite's cases on Ray's two workers store the rows of the serial reference run (one suite: Ray's
    start costs as much as the cases, and the other suite adds cases, not another path)."""
    remote = run_campaign(request_for(suites[:1], tmp_path / "run", workers=2, executor="ray"), progress_stream=None)
    ids = set(Suite.read(suites[0]).test_ids)
    assert remote.ran == len(ids) > 0
    assert_same_rows(stored_rows(remote.out_dir), rows_of(stored_rows(reference.out_dir), ids))


def _campaign_process(suites: tuple[Path, Path], out: Path, workers: int, resume: bool) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "cosim_validation.cli.main", "campaign", "--config", str(CONFIG)]
    argv += ["--suite", str(suites[0]), "--suite", str(suites[1]), "--backends", "virtual,physical"]
    argv += ["--workers", str(workers), "--out", str(out)] + (["--resume"] if resume else [])
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _stored(out: Path) -> int:
    path = out / "results.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM cases").fetchone()[0])
        except sqlite3.OperationalError:  # the schema is being created
            return 0


def _wait_for(process: subprocess.Popen[str], out: Path, cases: int, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while _stored(out) < cases:
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, f"fewer than {cases} cases stored after {timeout_s} s"
        time.sleep(0.2)


@pytest.mark.slow
def test_interrupted_killed_and_resumed_equals_uninterrupted(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path
) -> None:
    """Also the process-pool test: the cases stored before the Ctrl-C were run by two worker processes."""
    out = tmp_path / "run"
    # Ctrl-C while two workers run: exit 130, the cases stored so far intact, the resume command printed
    first = _campaign_process(suites, out, workers=2, resume=False)
    _wait_for(first, out, 2)
    first.send_signal(signal.SIGINT)
    _, stderr = first.communicate(timeout=120)
    assert first.returncode == 130, stderr
    assert "interrupted:" in stderr
    assert "--workers 2 --out" in stderr
    assert stderr.rstrip().endswith("--resume")
    after_interrupt = _stored(out)
    assert 2 <= after_interrupt < TOTAL
    # resumed, then killed hard in the middle of a case
    second = _campaign_process(suites, out, workers=1, resume=True)
    _wait_for(second, out, after_interrupt + 2)
    second.kill()
    second.wait(timeout=30)
    after_kill = _stored(out)
    assert after_interrupt + 2 <= after_kill < TOTAL, "the kill came too late to test anything"
    # resumed to the end: exactly the rows of the uninterrupted run
    last = run_campaign(request_for(suites, out, resume=True), progress_stream=None)
    assert (last.skipped, last.ran) == (after_kill, TOTAL - after_kill)
    assert_same_rows(stored_rows(out), stored_rows(reference.out_dir))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"suites": (Path("no/such/suite.parquet"),)}, r"no/such/suite\.parquet: suite file not found"),
        ({"backends": ("virtual", "gazebo")}, r"unknown backend 'gazebo'; expected some of: virtual, physical"),
        ({"backends": ("mujoco", "pybullet")}, r"two backends for the virtual robot \('mujoco', 'pybullet'\)"),
        ({"workers": 0}, r"--workers: expected an integer from 1 to 4096 \(a process each\), got 0"),
        ({"executor": "dask"}, r"--executor: expected one of local, ray, got 'dask'"),
        ({"address": "10.0.0.1:6379"}, r"--address applies to --executor ray only"),
        ({"resume": True}, r"nothing to resume"),
    ],
)
def test_bad_requests(suites: tuple[Path, Path], tmp_path: Path, change: dict[str, object], message: str) -> None:
    given = change.pop("suites", suites)
    with pytest.raises(CosimError, match=message):
        run_campaign(request_for(given, tmp_path / "run", **change), progress_stream=None)  # type: ignore[arg-type]


def test_resume_of_another_run_is_refused(reference: CampaignOutcome, suites: tuple[Path, Path]) -> None:
    with pytest.raises(CosimError, match="cannot resume, it was made with another value of 'suite'"):
        run_campaign(request_for(suites[:1], reference.out_dir, resume=True), progress_stream=None)
    with pytest.raises(CosimError, match="cannot resume, it was made with another value of 'backends'"):
        run_campaign(request_for(suites, reference.out_dir, resume=True, backends=("virtual",)), progress_stream=None)
    with pytest.raises(CosimError, match="already exists; use --resume"):
        run_campaign(request_for(suites, reference.out_dir), progress_stream=None)


def test_cli_errors_are_one_line(suites: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["campaign", "--suite", str(suites[0]), "--backends", "virtual,warp", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("error: --backends: unknown backend 'warp'")
    assert err.count("\n") == 1


def test_cli_resume_of_finished_run_reports_json(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    copy_run(reference.out_dir, run)
    args = ["campaign", "--json", "--config", str(CONFIG), "--backends", "virtual,physical", "--resume"]
    args += [f"--suite={p}" for p in suites]
    code = main([*args, "--out", str(run)])
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert (summary["last_call"]["cases_skipped"], summary["last_call"]["cases_run"]) == (TOTAL, 0)
