"""Issue 15, items 8-10: a campaign's run directory survives a damaged database, a second writer, a killed
parent and killed workers. Real processes, real SIGKILL, real SQLite pages overwritten."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome, run_campaign
from cosim_validation.runs.campaign.db_salvage import integrity_problems
from cosim_validation.runs.campaign.results_db import ResultsDB
from test.runs.campaign.run_fixtures import CONFIG, copy_run, request_for
from test.runs.campaign.run_rows import assert_same_rows, stored_rows
from test.subprocesses import alive

PAGE = 4096


def _copy(reference: CampaignOutcome, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    copy_run(reference.out_dir, run)
    return run


def _overwrite_page(path: Path, page: int) -> None:
    """Overwrite one page (1-based, SQLite's numbering) with bytes no page holds."""
    with path.open("r+b") as f:
        f.seek((page - 1) * PAGE)
        f.write(bytes(range(256)) * (PAGE // 256))


def _page(path: Path, where: str) -> int:
    """The file's last page (the issue's case), or the last leaf page holding rows of table ``where``."""
    if where == "last":
        return path.stat().st_size // PAGE
    with sqlite3.connect(path) as db:  # dbstat: SQLite's page map (compiled into Python's SQLite)
        (page,) = db.execute("SELECT MAX(pageno) FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (where,)).fetchone()
    return int(page)


@pytest.mark.parametrize("where", ["last", "verdicts", "cases"])
def test_damaged_database_is_refused_by_report_and_salvaged_by_resume(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str], where: str
) -> None:
    run = _copy(reference, tmp_path)
    db_path = run / "results.sqlite"
    _overwrite_page(db_path, _page(db_path, where))
    # the report: one error line naming the file and the damage (a traceback before)
    assert main(["report", str(run)]) == 1
    err = capfd.readouterr().err
    assert err.count("error:") == 1
    assert "Traceback" not in err
    assert f"{db_path}: the database is damaged (quick_check:" in err
    # the resume: what is whole is kept, the rest runs again, and the run equals the uninterrupted one
    outcome = run_campaign(request_for(suites, run, resume=True), progress_stream=None)
    (note,) = [n for n in outcome.notes if "was damaged" in n]
    assert note.startswith(f"{db_path} was damaged (")
    if where != "last":  # a page of rows: its cases run again (the last page may hold an index only)
        assert outcome.ran >= 1, outcome.notes
    assert outcome.skipped + outcome.ran == outcome.total
    with sqlite3.connect(db_path) as db:
        assert integrity_problems(db) == []
    assert list(run.glob("results.sqlite.damaged-*")), "the damaged file is kept"
    assert_same_rows(stored_rows(run), stored_rows(reference.out_dir))


def test_resume_with_an_edited_suite_is_refused(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 15, item 6: a suite edited with its metadata kept was resumed as "0 cases run, 2 already stored"."""
    import pyarrow.parquet as pq

    run = _copy(reference, tmp_path)
    table = pq.read_table(suites[0])
    column = table.column("target_x_m").to_numpy().copy()
    column[0] += 0.001  # one target moved by 1 mm
    edited = tmp_path / "edited.parquet"
    index = table.column_names.index("target_x_m")
    pq.write_table(table.set_column(index, "target_x_m", [column]), edited)  # schema metadata kept
    argv = ["campaign", "--config", str(CONFIG), "--suite", str(edited), "--suite", str(suites[1])]
    argv += ["--backends", "virtual,physical", "--workers", "1", "--out", str(run), "--resume"]
    assert main(argv) == 1
    err = capfd.readouterr().err
    assert err.count("error:") == 1
    assert f"error: {edited}: the cases do not match the suite's id" in err
    assert_same_rows(stored_rows(run), stored_rows(reference.out_dir))  # nothing was added or changed


def test_resume_with_another_detector_is_refused(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Issue 19: a detector in the loop changes the cases (an alarm can stop one), so a run made without one is
    not resumed with one: one error line naming both values, and nothing is added."""
    run = _copy(reference, tmp_path)
    argv = ["campaign", "--config", str(CONFIG), "--suite", str(suites[0]), "--suite", str(suites[1])]
    argv += ["--backends", "virtual,physical", "--workers", "1", "--out", str(run), "--resume"]
    assert main([*argv, "--detector", "tip_mm=3"]) == 1
    err = capfd.readouterr().err
    assert err.count("error:") == 1
    assert (
        "results.sqlite: cannot resume, it was made with another value of 'detector' (stored None, now 'tip_mm=3')"
        in err
    )
    assert_same_rows(stored_rows(run), stored_rows(reference.out_dir))


def test_resume_refuses_inputs_edited_since_the_run(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """Issue 22, item 4: a run is resumed only with the inputs it was made with. Its property file edited in
    place (a 1 nm tip bound that would violate tip_follows_plan) is refused, naming the run, the file and both
    hashes, and nothing is run; put back, the resume runs the missing case with the run's copies and gives exactly
    the row of the first run."""
    import yaml

    from cosim_validation.runs.campaign.db_salvage import CASE_TABLES

    properties = tmp_path / "properties.yaml"
    properties.write_text((CONFIG.parent / "properties.yaml").read_text())
    config = yaml.safe_load(CONFIG.read_text())
    config["campaign"]["properties"] = str(properties)
    case_config = tmp_path / "case.yaml"
    case_config.write_text(yaml.safe_dump(config, sort_keys=False))
    suite, run, first = tmp_path / "suite.parquet", tmp_path / "run", tmp_path / "first"
    argv = ["testgen", "--config", str(case_config), "--method", "random", "--granularity-mm", "90", "--count", "2"]
    assert main([*argv, "--region", "heart_side_7pct", "-o", str(suite)]) == 0
    campaign = ["campaign", "--config", str(case_config), "--suite", str(suite), "--workers", "1", "--out", str(run)]
    assert main(campaign) == 0
    shutil.copytree(run, first)
    with sqlite3.connect(run / "results.sqlite") as db:
        (dropped,) = db.execute("SELECT test_id FROM cases ORDER BY test_id DESC LIMIT 1").fetchone()
        for table in CASE_TABLES:
            db.execute(f"DELETE FROM {table} WHERE test_id = ?", (dropped,))
    shipped = properties.read_text()
    strict = yaml.safe_load(shipped)
    strict["constants"]["tip_deviation_bound_m"] = 1e-9
    properties.write_text(yaml.safe_dump(strict, sort_keys=False))
    capfd.readouterr()
    assert main([*campaign, "--resume"]) == 1
    err = capfd.readouterr().err
    assert err.count("error:") == 1
    # the edited file is named, not only "the configuration or a file it names"
    assert (
        "results.sqlite: cannot resume, it was made with another value of 'config': properties.yaml (the property "
        "file) edited since the run started (stored '" in err
    ), err
    properties.write_text(shipped)
    assert main([*campaign, "--resume"]) == 0
    assert "1 cases run" in capfd.readouterr().out
    assert_same_rows(stored_rows(run), stored_rows(first))


def test_resume_refuses_an_edited_urdf_or_hazard_library(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """The robot's URDF and a hazards filter's library change what a case does, as the configuration does: a resume
    with either edited is refused naming it (it ran the rest of the cases on the edited arm or hazard, one run made
    of two set-ups); put back, the resume runs."""
    import yaml

    urdf = tmp_path / "arm.urdf"
    urdf.write_text((CONFIG.parents[1] / "urdf" / "xmate_er3_pro.urdf").read_text())
    library = tmp_path / "hz.yaml"
    library.write_text((CONFIG.parent / "hazards.yaml").read_text())
    config = yaml.safe_load(CONFIG.read_text())
    config["robot"]["urdf"] = str(urdf)
    config["campaign"]["properties"] = str(CONFIG.parent / "properties.yaml")
    case_config = tmp_path / "case.yaml"
    case_config.write_text(yaml.safe_dump(config, sort_keys=False))
    suite, run = tmp_path / "suite.parquet", tmp_path / "run"
    argv = ["testgen", "--config", str(case_config), "--method", "random", "--granularity-mm", "90", "--count", "1"]
    assert main([*argv, "--region", "heart_side_7pct", "-o", str(suite)]) == 0
    campaign = ["campaign", "--config", str(case_config), "--suite", str(suite), "--workers", "1", "--out", str(run)]
    campaign += ["--backends", "virtual", "--filter", f"virtual=hazards:sudden_jump@{library}"]
    assert main(campaign) == 0
    for edited, words in (
        (urdf, "arm.urdf (the robot's URDF)"),
        (library, "hz.yaml (the hazard library of the virtual"),
    ):
        shipped = edited.read_text()
        edited.write_text(
            shipped.replace("0.05", "0.5", 1) if edited == library else shipped.replace("0.3426", "0.3026")
        )
        assert edited.read_text() != shipped
        capfd.readouterr()
        assert main([*campaign, "--resume"]) == 1
        err = capfd.readouterr().err
        assert err.count("error:") == 1, err
        assert f"cannot resume, it was made with another value of 'input_files': {words}" in err, err
        edited.write_text(shipped)
    assert main([*campaign, "--resume"]) == 0


def _supervised_campaign(folder: Path, scenario: Path, run: Path) -> list[str]:
    """``cosim campaign`` arguments for one random case by the heart on the virtual robot, supervised with
    ``scenario``, into ``run`` (the suite is made in ``folder``)."""
    suite = folder / "suite.parquet"
    argv = ["testgen", "--config", str(CONFIG), "--method", "random", "--granularity-mm", "90", "--count", "1"]
    assert main([*argv, "--region", "heart_side_7pct", "-o", str(suite)]) == 0
    campaign = ["campaign", "--config", str(CONFIG), "--suite", str(suite), "--workers", "1", "--out", str(run)]
    return [*campaign, "--backends", "virtual", "--supervisor", "--supervisor-scenario", str(scenario)]


def test_a_world_no_worker_can_build_leaves_no_run_directory(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """An input whose fault only a worker finds (a scenario naming itself as its teleoperation script): one error
    naming the user's file, not the run's copy of it, and nothing left behind, so the same command can be run
    again (its inputs/ were left, and then neither a new run nor --resume would take the directory)."""
    scenario = tmp_path / "f.yaml"
    scenario.write_text("scenario: {teleoperation: f.yaml, actions: []}\n")
    run = tmp_path / "run"
    campaign = _supervised_campaign(tmp_path, scenario, run)
    for _ in range(2):
        capfd.readouterr()
        assert main(campaign) == 1
        err = capfd.readouterr().err
        assert err.count("error:") == 1, err
        assert "f.yaml: teleoperation: missing required key" in err, err
        assert "inputs" not in err, err
        assert not run.exists()
    scenario.write_text("scenario: {teleoperation: /dev/null, actions: []}\n")  # it was "no such file"
    capfd.readouterr()
    assert main(campaign) == 1
    err = capfd.readouterr().err
    assert "/dev/null: a character device, expected a regular file (the run's teleoperation)" in err, err
    assert not run.exists()


def test_a_scenario_action_for_a_case_the_run_lacks_is_named(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    """A mistyped case id in a scenario's action: the run goes on (the file may serve other suites), with a warning
    naming the file, the action and the id; it was ignored without a word, and the scripted abort never fired."""
    scenario = tmp_path / "s.yaml"
    scenario.write_text("scenario: {actions: [{cases: [nosuch-case], when: {t_s: 2.0}, request: abort}]}\n")
    campaign = _supervised_campaign(tmp_path, scenario, tmp_path / "run")
    capfd.readouterr()
    assert main(campaign) == 0
    err = capfd.readouterr().err
    warning = "s.yaml: scenario.actions[0].cases names 'nosuch-case', which no suite of this run has: it never fires"
    assert f"warning: {scenario}: {warning.removeprefix('s.yaml: ')}" in err, err


def _campaign(suites: tuple[Path, Path], out: Path, workers: int, resume: bool = False) -> subprocess.Popen[str]:
    argv = [sys.executable, "-m", "cosim_validation.cli.main", "campaign", "--config", str(CONFIG)]
    argv += ["--suite", str(suites[0]), "--suite", str(suites[1]), "--backends", "virtual,physical"]
    argv += ["--workers", str(workers), "--out", str(out)] + (["--resume"] if resume else [])
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _stored(out: Path) -> int:
    path = out / "results.sqlite"
    if not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10) as db:
        try:
            return int(db.execute("SELECT COUNT(*) FROM cases").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def _wait_until(condition: object, process: subprocess.Popen[str], what: str, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():  # type: ignore[operator]
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s} s"
        time.sleep(0.1)


@pytest.mark.slow
def test_a_second_writer_is_refused_naming_the_running_process(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Before: the second --resume re-ran cases and died with sqlite3.IntegrityError (a traceback)."""
    out = tmp_path / "run"
    first = _campaign(suites, out, workers=1)
    try:
        _wait_until(lambda: _stored(out) >= 1, first, "the first campaign stores a case")
        argv = ["campaign", "--config", str(CONFIG), "--suite", str(suites[0]), "--suite", str(suites[1])]
        argv += ["--backends", "virtual,physical", "--workers", "1", "--out", str(out), "--resume"]
        assert main(argv) == 1
        err = capfd.readouterr().err
        assert err.count("error:") == 1
        assert f"{out}: process {first.pid} (" in err
        assert "is writing this run directory; wait for it to end" in err
        assert main([*argv, "--json"]) == 1
        assert f"process {first.pid}" in capfd.readouterr().out
        _, stderr = first.communicate(timeout=300)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
    assert first.returncode == 0, stderr
    assert_same_rows(stored_rows(out), stored_rows(reference.out_dir))
    # the lock died with its holder: a resume after it is welcome
    assert run_campaign(request_for(suites, out, resume=True), progress_stream=None).ran == 0


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc (Linux)")
def test_workers_and_resource_tracker_exit_when_the_parent_is_killed(suites: tuple[Path, Path], tmp_path: Path) -> None:
    """Before: SIGKILL of the parent left two ~600 MB workers and the resource tracker running for minutes."""
    out = tmp_path / "run"
    parent = _campaign(suites, out, workers=2)
    try:
        _wait_until(lambda: _stored(out) >= 1, parent, "the campaign stores a case")
        children = _descendants(parent.pid)
        assert len(children) >= 3, f"expected two workers and the resource tracker, found {children}"
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 15.0
        while any(alive(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in children if alive(pid)], "orphans outlived their parent by 15 s"
    finally:  # the campaign ran in its own process group: whatever survived goes now
        with contextlib.suppress(ProcessLookupError):
            os.killpg(parent.pid, signal.SIGKILL)


# ---------------------------------------------------------------------------------------------------- worker deaths
def _worker_pids(out: Path) -> set[int]:
    """The pids of the worker processes that have stored a case (``timings.worker`` is ``host:pid``)."""
    if not (out / "results.sqlite").exists():
        return set()
    with sqlite3.connect(f"file:{out / 'results.sqlite'}?mode=ro", uri=True, timeout=10) as db:
        try:
            return {int(w.rsplit(":", 1)[1]) for (w,) in db.execute("SELECT DISTINCT worker FROM timings")}
        except sqlite3.OperationalError:
            return set()


def _rows_by_id(run: Path) -> dict[str, tuple[object, ...]]:
    """Each case's row without its place in the campaign, and its verdicts and KPIs (the reference holds more)."""
    rows = stored_rows(run)
    return {
        c.test_id: (
            replace(c, case_index=0),
            [v for v in rows["verdicts"] if v.test_id == c.test_id],
            [k for k in rows["kpis"] if k.test_id == c.test_id],
        )
        for c in rows["cases"]
    }


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process tree from /proc (Linux)")
def test_a_killed_worker_costs_at_most_its_own_case(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path
) -> None:
    """Before: SIGKILL of one of two workers ended the campaign in BrokenProcessPool at 2 of 12 cases, no summary."""
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "cosim_validation.cli.main", "campaign", "--config", str(CONFIG)]
    argv += ["--suite", str(suites[1]), "--backends", "virtual,physical", "--workers", "2", "--out", str(out)]
    campaign = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait_until(lambda: len(_worker_pids(out)) == 2, campaign, "both workers store a case")
        assert _stored(out) < 12, "the campaign ended before a worker could be killed"
        victim = min(_worker_pids(out))
        assert victim in _descendants(campaign.pid)
        os.kill(victim, signal.SIGKILL)
        stdout, stderr = campaign.communicate(timeout=600)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(campaign.pid, signal.SIGKILL)
    assert campaign.returncode == 0, stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["cases"]["stored"] == 12
    (note,) = [n for n in summary["notes"] if "its worker process killed by signal 9 (SIGKILL)" in n]
    assert note.endswith("it ran again in a fresh worker")
    assert note in stdout
    ran = _rows_by_id(out)
    expected = _rows_by_id(reference.out_dir)
    assert ran == {test_id: expected[test_id] for test_id in ran}, "every case, the killed one too, as uninterrupted"


@pytest.mark.slow
def test_a_case_whose_worker_always_dies_is_stored_failed_after_one_retry(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cosim_validation.runs.campaign.campaign_runner import KILL_WORKER_ENV
    from cosim_validation.testgen import Suite
    from test.runs.campaign.test_executor import deadline

    doomed = Suite.read(suites[1]).test_ids[4]
    monkeypatch.setenv(KILL_WORKER_ENV, doomed)
    out = tmp_path / "run"
    with deadline(900):
        outcome = run_campaign(request_for([suites[1]], out, workers=2), progress_stream=None)
    assert (outcome.ran, outcome.interrupted) == (12, False)
    message = "worker process killed by signal 9 (SIGKILL) twice"
    assert outcome.summary["failures"] == [{"test_id": doomed, "message": message}]
    assert json.loads((out / "summary.json").read_text())["failures"] == outcome.summary["failures"]
    ran = _rows_by_id(out)
    assert ran.pop(doomed)[0].outcome == "failed"
    expected = _rows_by_id(reference.out_dir)
    assert ran == {test_id: expected[test_id] for test_id in ran}

    # --resume runs the case whose worker died again, and keeps a failure that is the case's own
    genuine = Suite.read(suites[1]).test_ids[0]
    with sqlite3.connect(out / "results.sqlite") as db:
        db.execute("UPDATE cases SET outcome = 'failed', message = 'planning failed' WHERE test_id = ?", (genuine,))
    kept = _rows_by_id(out)[genuine]
    monkeypatch.delenv(KILL_WORKER_ENV)
    with deadline(900):
        resumed = run_campaign(request_for([suites[1]], out, workers=1, resume=True), progress_stream=None)
    assert (resumed.ran, resumed.skipped) == (1, 11)
    assert any(doomed in note and message in note for note in resumed.notes), resumed.notes
    after = _rows_by_id(out)
    assert after[doomed] == expected[doomed]  # as in an uninterrupted run
    assert after[genuine] == kept  # still failed, untouched
    with ResultsDB.open(out / "results.sqlite") as db:
        assert db.worker_deaths() == {}


# ---------------------------------------------------------------------------------------------------- a full disk
def _fill_when_stored(out: Path, filler: Path, cases: int, stop: threading.Event) -> None:
    """Once ``cases`` cases are stored in ``out``, write ``filler`` until the disk is full."""
    while not stop.is_set() and _stored(out) < cases:
        time.sleep(0.05)
    with contextlib.suppress(OSError), filler.open("wb") as f:
        while not stop.is_set():
            f.write(b"\0" * 65536)
            f.flush()


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mounts a small tmpfs (needs root)")
def test_a_full_disk_keeps_the_stored_cases_and_says_how_to_go_on(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A disk that fills up during a campaign: one error line naming results.sqlite, telling to free space and
    --resume; the cases stored before stay, and the resume after freeing space completes the run exactly."""
    from test.runs.campaign.test_executor import deadline

    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    stop = threading.Event()
    try:
        out, filler = disk / "run", disk / "filler"
        thread = threading.Thread(target=_fill_when_stored, args=(out, filler, 2, stop), daemon=True)
        thread.start()
        argv = ["campaign", "--config", str(CONFIG), "--suite", str(suites[1]), "--backends", "virtual,physical"]
        argv += ["--workers", "1", "--out", str(out)]
        with deadline(600):
            assert main(argv) == 1
        err = capfd.readouterr().err
        assert "Traceback" not in err
        (line,) = [line for line in err.splitlines() if line.startswith("error:")]
        assert line.startswith(f"error: {out / 'results.sqlite'}: storing case "), line
        assert ": no space left on the device (database or disk is full); free space, then continue with: " in line
        assert line.endswith(f"--out {out} --resume"), line
        stored = _stored(out)
        assert 2 <= stored < 12
        stop.set()
        thread.join(timeout=30)
        filler.unlink()
        with deadline(600):
            assert main([*argv, "--resume"]) == 0
        assert f"{12 - stored} cases run, {stored} already stored" in capfd.readouterr().out
        ran, expected = _rows_by_id(out), _rows_by_id(reference.out_dir)
        assert ran == {test_id: expected[test_id] for test_id in ran}
        assert len(ran) == 12
    finally:
        stop.set()
        subprocess.run(["umount", "-l", str(disk)], check=False, capture_output=True)
