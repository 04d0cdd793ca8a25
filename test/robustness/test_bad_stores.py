"""Damaged and locked stores of a run: one ``error:`` line naming the file and what to do, never a traceback.

``cosim hazards table`` on damaged hazard tables, ``cosim report`` on a garbage ``summary.json`` or text where the
results hold numbers, ``cosim campaign --resume`` while another process holds a lock on ``results.sqlite``.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cosim_validation.hazards.detector import DetectorSettings
from cosim_validation.runs.campaign.hazard_tables import CaseDetection, summarize, write_tables
from cosim_validation.runs.campaign.results_db import ResultsDB
from test.robustness.harness import Case, Workspace, run_case
from test.runs.campaign.run_fixtures import CONFIG, copy_run

PAGE = 4096


# ---------------------------------------------------------------------------------------------------- hazard tables
def _hazard_tables(path: Path) -> None:
    """Real detection tables of a fault-free run of 400 cases (several pages), as ``cosim hazards run`` writes."""
    cases = [
        CaseDetection("fault_free", f"case-{i:04d}", "completed", 10.0, 0, 0, i % 3, 0, 1e-4 * i, 1e-3, "")
        for i in range(400)
    ]
    write_tables(path, [], DetectorSettings(0.003), "set", cases, [], 0.001)


def _hazards(folder: Path, damage: str) -> Path:
    out = folder / "hazard-run"
    out.mkdir()
    path = out / "hazards.sqlite"
    if damage == "text":
        path.write_text("these are not the hazard tables\n")
        return out
    if damage == "results_database":
        sqlite3.connect(path).executescript("CREATE TABLE meta (key TEXT, value TEXT);").close()
        return out
    _hazard_tables(path)
    with sqlite3.connect(path) as db:
        if damage == "period_text":
            db.execute("UPDATE thresholds SET value = 'one millisecond' WHERE key = 'period_s'")
        elif damage == "detection_text":  # summed as 0 by SQLite: the table printed, with wrong numbers
            db.execute("UPDATE detection SET duration_s = 'x' WHERE test_id = 'case-0007'")
        elif damage == "windows_count_text":
            db.execute("UPDATE detection SET windows = 'many'")
        elif damage == "page":
            (page,) = db.execute("SELECT MAX(pageno) FROM dbstat WHERE name = 'detection'").fetchone()
    db.close()
    if damage == "page":
        with path.open("r+b") as f:
            f.seek((page - 1) * PAGE)
            f.write(bytes(range(256)) * (PAGE // 256))
    return out


HAZARDS = {
    "text": "cannot open as SQLite or damaged (file is not a database)",
    "results_database": "not the expected database (no such table: thresholds)",
    "period_text": "no number period_s in table thresholds",
    "detection_text": "table detection: duration_s holds 'x', expected a number",
    "windows_count_text": "table detection: windows holds 'many', expected a number",
    "page": "the database is damaged (quick_check:",
}


@pytest.mark.parametrize("damage", sorted(HAZARDS))
def test_damaged_hazard_tables(damage: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    out = _hazards(tmp_path, damage)
    remedy = f"`cosim hazards run --reanalyse --out {out}`"
    case = Case(["hazards", "table", "--out", str(out)], (f"{out}/hazards.sqlite: ", HAZARDS[damage], remedy))
    run_case(case, as_json=False, capfd=capfd)
    run_case(case, as_json=True, capfd=capfd)


def test_sound_hazard_tables_still_read(tmp_path: Path) -> None:
    """The guard refuses damage only: the tables the damage cases start from read as before."""
    _hazard_tables(tmp_path / "hazards.sqlite")
    (row,) = summarize(tmp_path / "hazards.sqlite")
    assert (row.scenario, row.cases, row.false_alarms) == ("fault_free", 400, sum(i % 3 for i in range(400)))


def test_rewritten_hazard_tables_replace_a_damaged_file(tmp_path: Path) -> None:
    """What the error tells the user to do works: --reanalyse writes the tables anew over a file that is no database."""
    path = tmp_path / "hazards.sqlite"
    path.write_text("these are not the hazard tables\n")
    _hazard_tables(path)
    assert summarize(path)[0].cases == 400
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hazards.sqlite"], "no partial file left"


# ---------------------------------------------------------------------------------------------------- report
def _run_copy(folder: Path, ws: Workspace) -> Path:
    run = folder / "run"
    copy_run(ws.run_dir, run)
    (run / "report.html").unlink(missing_ok=True)
    return run


def _summary(content: bytes) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        (run / "summary.json").write_bytes(content)

    return damage


def _last_call(**values: object) -> Callable[[Path], None]:
    """The campaign's ``last_call`` of the summary edited (``None`` removes a key): it was copied into the new one."""

    def damage(run: Path) -> None:
        summary = json.loads((run / "summary.json").read_text())
        assert "last_call" in summary
        for key, value in values.items():
            if value is None:
                del summary["last_call"][key]
            elif key == "*":
                summary["last_call"] = value
            else:
                summary["last_call"][key] = value
        (run / "summary.json").write_text(json.dumps(summary))

    return damage


def _text_in(table: str, column: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        with sqlite3.connect(run / "results.sqlite") as db:
            (test_id,) = db.execute(f"SELECT test_id FROM {table} ORDER BY rowid DESC LIMIT 1").fetchone()
            db.execute(f"UPDATE {table} SET {column} = 'n/a' WHERE test_id = ?", (test_id,))

    return damage


def _infinite_kpi(run: Path) -> None:
    with sqlite3.connect(run / "results.sqlite") as db:
        db.execute("UPDATE kpis SET value = 9e999 WHERE rowid = (SELECT max(rowid) FROM kpis)")  # SQLite reads +inf


def _sql(statement: str) -> Callable[[Path], None]:
    def damage(run: Path) -> None:
        with sqlite3.connect(run / "results.sqlite") as db:
            db.execute(statement)

    return damage


#: a KPI row of a case the cases table does not hold (the report ended in KeyError, a resume counted the case)
_ORPHAN = (
    "INSERT INTO kpis SELECT 'ghost-0000', robot, name, stage, value, unit FROM kpis "
    "WHERE test_id = (SELECT min(test_id) FROM kpis)"
)

REPORTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "summary_garbage": (_summary(b"{garbage"), "invalid JSON at line 1, column 2: Expecting property name"),
    "summary_list": (_summary(b"[1, 2]\n"), "expected a JSON object, got list"),
    "summary_binary": (_summary(b"\xff\xfe{\x00"), "not UTF-8 text (byte 0)"),
    "summary_last_call_garbage": (_last_call(**{"*": "garbage"}), "last_call: expected an object, got str"),
    "summary_last_call_workers": (_last_call(workers=-3), "last_call.workers: expected a whole number >= 1, got '-3'"),
    "summary_last_call_wall": (_last_call(wall_s="soon"), "last_call.wall_s: expected a number of seconds >= 0"),
    "summary_last_call_extra": (_last_call(secret="x" * 10**5), "last_call: expected the keys executor, workers"),
    "summary_last_call_missing": (_last_call(executor=None), "missing: executor"),
    "kpis_text": (_text_in("kpis", "value"), "kpis, case '"),
    "margin_text": (_text_in("verdicts", "margin"), ": margin holds 'n/a', expected a number"),
    "wall_text": (_text_in("timings", "wall_s"), ": wall_s holds 'n/a', expected a number"),
    # a status the report does not count: it summed to no verdict at all, exit 0
    "status_text": (_text_in("verdicts", "status"), ": status holds 'n/a', expected holds, violated or unknown"),
    # an outcome the report does not count (the case counted under a heading of its own), an infinite KPI (its
    # means became inf): both taken, exit 0
    "outcome_text": (_text_in("cases", "outcome"), ": outcome holds 'n/a', expected one of completed, refused,"),
    "kpi_infinite": (_infinite_kpi, ": value holds inf, expected a KPI within 10000"),
    # times no run measures, rows of no case
    "wall_negative": (_sql("UPDATE timings SET wall_s = -100"), "wall_s holds -100.0, expected a time >= 0"),
    "kpi_orphan": (_sql(_ORPHAN), "table kpis, case 'ghost-0000': no such case in table cases"),
    # a completed case without its verdicts: a resume counted it as stored, the report's counts left it out, exit 0
    "verdicts_deleted": (
        _sql("DELETE FROM verdicts WHERE test_id = (SELECT min(test_id) FROM cases WHERE outcome = 'completed')"),
        "is stored as completed but table verdicts holds no row of it",
    ),
    "kpis_deleted": (
        _sql("DELETE FROM kpis WHERE test_id = (SELECT max(test_id) FROM cases WHERE outcome = 'completed')"),
        "is stored as completed but table kpis holds no row of it",
    ),
    # a stage no case has (a pandas TypeError in the report), a target that is no point (NULL: the figure's axis limits
    # ended in a ValueError; 1e300 m was drawn)
    "kpi_stage_unknown": (
        _sql("UPDATE kpis SET stage = 'lunch' WHERE stage = 'case'"),
        ": stage holds 'lunch', expected one of case, initialization",
    ),
    "target_null": (
        _sql("UPDATE cases SET target_x_m = NULL"),
        ": target_x_m holds None, expected a coordinate within 10 m",
    ),
    "source_far": (
        _sql("UPDATE cases SET source_z_m = 1e300"),
        ": source_z_m holds 1e+300, expected a coordinate within",
    ),
    # a robot no run has: the report counted it, the export wrote martian.npz
    "robot_unknown": (
        _sql("UPDATE kpis SET robot = 'martian' WHERE rowid = (SELECT min(rowid) FROM kpis)"),
        ": robot holds 'martian', expected one of expected, virtual, physical",
    ),
    # a unit no KPI or margin has, and a KPI no measurement gives: they were reported as measured
    "kpi_unit_unknown": (
        _sql("UPDATE kpis SET unit = 'furlong' WHERE rowid = (SELECT min(rowid) FROM kpis)"),
        ": unit holds 'furlong', expected one of m, rad, s",
    ),
    "margin_unit_unknown": (
        _sql("UPDATE verdicts SET unit = 'furlong' WHERE rowid = (SELECT min(rowid) FROM verdicts)"),
        ": unit holds 'furlong', expected one of m, rad, s, 1",
    ),
    # a status its margin contradicts, a KPI no record can give, a case before the first: counted as they said
    "holds_with_negative_margin": (
        _sql("UPDATE verdicts SET margin = -0.5 WHERE rowid = (SELECT min(rowid) FROM verdicts WHERE status='holds')"),
        ": margin holds -0.5, expected a margin > 0 for a verdict that holds",
    ),
    "kpi_huge": (
        _sql("UPDATE kpis SET value = 1e308 WHERE rowid = (SELECT min(rowid) FROM kpis)"),
        ": value holds 1e+308, expected a KPI within 10000",
    ),
    "case_index_negative": (
        _sql("UPDATE cases SET case_index = -5 WHERE rowid = (SELECT min(rowid) FROM cases)"),
        ": case_index holds -5, expected a position in the run >= 0",
    ),
    # two cases at one position: the report counted both (a copied row under another id)
    "case_index_twice": (
        _sql(
            "UPDATE cases SET case_index = (SELECT min(case_index) FROM cases) "
            "WHERE rowid = (SELECT max(rowid) FROM cases)"
        ),
        ": case_index holds 0, expected a position in the run no other case holds",
    ),
    # a verdict of a property the run's property set does not have: the report's property table counted it
    "property_unknown": (
        _sql("UPDATE verdicts SET property = 'made_up' WHERE rowid = (SELECT min(rowid) FROM verdicts)"),
        ": property holds 'made_up', expected a property of the run's property set",
    ),
    "kpi_negative": (
        _sql("UPDATE kpis SET value = -0.5 WHERE rowid = (SELECT min(rowid) FROM kpis)"),
        ": value holds -0.5, expected a KPI >= 0",
    ),
}


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_report_of_a_damaged_store(
    name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    damage, message = REPORTS[name]
    run = _run_copy(tmp_path, workspace)
    damage(run)
    store = "summary.json" if name.startswith("summary") else "results.sqlite"
    before = _content(run / store)
    advice = "run `cosim report` again" if store == "summary.json" else "--resume"
    case = Case(["report", str(run)], (f"{run / store}: ", message, advice), (run / "report.html",))
    run_case(case, as_json=name.endswith("text"), capfd=capfd)
    assert _content(run / store) == before, "the damaged input was not overwritten"


@pytest.mark.parametrize("key", ["controller", "suites", "schema"])
def test_report_of_a_damaged_meta_value_names_the_key(
    key: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    """A meta value that is not JSON: one error naming the key (it said "no run meta in it")."""
    run = _run_copy(tmp_path, workspace)
    with sqlite3.connect(run / "results.sqlite") as db:
        db.execute("UPDATE meta SET value = '{{' WHERE key = ?", (key,))
    case = Case(["report", str(run)], (f"{run / 'results.sqlite'}: ", f"table meta: {key} holds '{{{{'", "restore"))
    run_case(case, as_json=key == "schema", capfd=capfd)


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [("backends", "42", "a list"), ("anatomy_repairs", "null", "a list"), ("kind", '"foo"', "campaign or session")],
)
def test_report_of_a_meta_value_of_the_wrong_type(
    key: str, value: str, expected: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    """JSON of the wrong type: a TypeError in the report (it joined the number 42), or a kind no run has."""
    run = _run_copy(tmp_path, workspace)
    with sqlite3.connect(run / "results.sqlite") as db:
        db.execute("UPDATE meta SET value = ? WHERE key = ?", (value, key))
    says = (f"{run / 'results.sqlite'}: ", f"table meta: {key} holds {value!r}, expected {expected}", "restore")
    run_case(Case(["report", str(run)], says, (run / "report.html",)), as_json=False, capfd=capfd)


@pytest.mark.parametrize(
    ("copy", "says"),
    [
        (None, "properties.copy holds None, expected a text"),
        ("../../../x.yaml", "expected a file in the run's inputs/"),
    ],
    ids=["copy_null", "copy_outside"],
)
def test_a_damaged_input_manifest_is_one_error(
    copy: str | None, says: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]
) -> None:
    """A copy of None was a TypeError traceback on --resume; a copy outside the run was read from there."""
    run = _run_copy(tmp_path, workspace)
    manifest = json.loads((run / "inputs.json").read_text())
    manifest["properties"]["copy"] = copy
    (run / "inputs.json").write_text(json.dumps(manifest))
    run_case(Case(["report", str(run)], (f"{run / 'inputs.json'}: ", says)), as_json=False, capfd=capfd)


def _content(path: Path) -> object:
    """A JSON file's bytes; a database's rows (its pages move when a reader closes it: SQLite's WAL checkpoint)."""
    if path.suffix != ".sqlite":
        return path.read_bytes()
    db = sqlite3.connect(path)
    try:
        return list(db.iterdump())
    finally:
        db.close()


@pytest.mark.parametrize("name", ["verdicts_deleted", "robot_unknown", "kpi_negative"])
def test_a_resume_refuses_what_a_report_refuses(
    name: str, tmp_path: Path, workspace: Workspace, suites: tuple[Path, Path], capfd: pytest.CaptureFixture[str]
) -> None:
    """A store the report refuses was resumed ('0 cases run, 20 already stored') and its summary written from it,
    with the tampered rows counted or dropped (the sixth hostile trial: a verdict status 'maybe')."""
    damage, message = REPORTS[name]
    run = _run_copy(tmp_path, workspace)
    damage(run)
    before = _content(run / "results.sqlite")
    argv = ["campaign", "--config", str(CONFIG), "--suite", str(suites[0]), "--suite", str(suites[1])]
    argv += ["--backends", "virtual,physical", "--workers", "1", "--out", str(run), "--resume"]
    run_case(Case(argv, (f"{run / 'results.sqlite'}: ", message)), as_json=False, capfd=capfd)
    assert _content(run / "results.sqlite") == before, "the refused store was not changed"


# ---------------------------------------------------------------------------------------------------- locks
def test_resume_while_another_process_locks_the_database(
    tmp_path: Path, workspace: Workspace, suites: tuple[Path, Path], capfd: pytest.CaptureFixture[str]
) -> None:
    """Before: a traceback (sqlite3.OperationalError: database is locked) after 30 s."""
    run = _run_copy(tmp_path, workspace)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(run / "results.sqlite")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        argv = ["campaign", "--config", str(CONFIG), "--suite", str(suites[0]), "--suite", str(suites[1])]
        argv += ["--backends", "virtual,physical", "--workers", "1", "--out", str(run), "--resume"]
        names = (f"{run / 'results.sqlite'}: ", "locked by another process", "close the program that holds it")
        for as_json in (False, True):
            run_case(Case(argv, names), as_json, capfd)  # reported, not waited out
    finally:
        holder.kill()
        holder.wait(timeout=30)
    with ResultsDB.open(run / "results.sqlite") as db:
        assert len(db.finished_ids()) == 20, "the run is untouched"


#: A process that holds the write lock of a database until it is killed (a database browser mid-edit).
_HOLD = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(300)
"""
