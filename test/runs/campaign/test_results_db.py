"""The results database stores whole cases atomically, reads them back, and guards resumes."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.runs.campaign.results_db import CaseResult, CaseRow, KpiRow, ResultsDB, VerdictRow
from test.common.record.test_trajectory_record import assert_same, make_record

META = {"suite": "abc123", "config": "cfg9", "controller": "straight"}


def make_result(i: int, robot_record: bool = True) -> CaseResult:
    tid = f"case-{i}"
    case = CaseRow(
        tid, i, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 1, 2, 3, 0.02, "grid", 0.004, "straight", "completed", "", 61.5
    )
    verdicts = (
        VerdictRow(tid, "virtual", "needle_avoids_heart", "violated", -0.002, "m", 31.2, "injection", ""),
        VerdictRow(tid, "virtual", "targeting_error", "unknown", math.nan, "m", None, "none", "no tracker"),
    )
    kpis = (
        KpiRow(tid, "virtual", "targeting_error", "case", 0.0004, "m"),
        KpiRow(tid, "virtual", "duration", "injection", 6.1, "s"),
    )
    records = (dataclasses.replace(make_record(seed=i), test_id=tid),) if robot_record else ()
    return CaseResult(case, verdicts, kpis, records, wall_s=0.25, worker="w1")


def test_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with ResultsDB.create(path, META) as db:
        for i in range(3):
            db.add(make_result(i))
    with ResultsDB.open(path) as db:
        assert db.meta()["suite"] == "abc123"
        assert [c.test_id for c in db.cases()] == ["case-0", "case-1", "case-2"]
        assert db.cases()[1] == make_result(1).case
        rows = [v for v in db.verdicts() if v.test_id == "case-2"]
        assert rows[0].margin == -0.002
        assert rows[1].margin is None  # NaN is stored as NULL
        assert len(db.kpis()) == 6
        assert_same(db.trajectory("case-1", "virtual"), make_record(seed=1))
        assert [r.test_id for r in db.trajectories("virtual")] == ["case-0", "case-1", "case-2"]
        assert db.timings()["case-0"] == (0.25, "w1")


def test_a_failing_case_leaves_no_partial_rows(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    with ResultsDB.create(path, META) as db:
        db.add(make_result(0))
        broken = make_result(1)
        duplicate_verdict = (*broken.verdicts, broken.verdicts[0])
        with pytest.raises(Exception, match="UNIQUE"):
            db.add(CaseResult(broken.case, duplicate_verdict, broken.kpis, broken.trajectories))
        assert db.finished_ids() == {"case-0"}
        assert {v.test_id for v in db.verdicts()} == {"case-0"}


def test_resume_rules(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite"
    ResultsDB.create(path, META).close()
    with pytest.raises(InputError, match="already exists; use --resume"):
        ResultsDB.create(path, META)
    with pytest.raises(InputError, match=r"made with another value of 'suite': another suite \(suite ids are hashes "):
        ResultsDB.create(path, {**META, "suite": "other"}, resume=True)
    with ResultsDB.create(path, META, resume=True) as db:
        assert db.finished_ids() == set()


def test_a_refused_resume_names_the_edited_files_of_the_configuration(tmp_path: Path) -> None:
    """Each file of the configuration's digest is digested on its own too: a refusal names the edited ones; a run
    made before that (no ``config_files``) or with other files (another supervisor) gets the general words."""
    files = {"config": ["case.yaml", "c1"], "properties": ["props.yaml", "p1"], "supervisor_machine": ["m.yaml", "m1"]}
    path = tmp_path / "results.sqlite"
    ResultsDB.create(path, {**META, "config_files": files}).close()
    edited = {**files, "properties": ["props.yaml", "p2"], "supervisor_machine": ["m.yaml", "m2"]}
    words = r"props\.yaml \(the property file\), m\.yaml \(the supervisor's machine\) edited since the run started"
    with pytest.raises(InputError, match=rf"another value of 'config': {words} \(stored 'cfg9', now 'cfg8'\)"):
        ResultsDB.create(path, {**META, "config": "cfg8", "config_files": edited}, resume=True)
    # another configuration file given, not an edited one: said so (it said "diff.yaml ... edited")
    other = {**files, "config": ["diff.yaml", "c2"]}
    words = r"diff\.yaml \(the configuration\) is not the case\.yaml the run started with \(stored"
    with pytest.raises(InputError, match=rf"another value of 'config': {words}"):
        ResultsDB.create(path, {**META, "config": "cfg8", "config_files": other}, resume=True)
    general = "the configuration, or a file it names"
    with pytest.raises(InputError, match=rf"another value of 'config': {general}"):
        ResultsDB.create(path, {**META, "config": "cfg8", "config_files": {"config": ["case.yaml", "c2"]}}, resume=True)
    older = tmp_path / "older.sqlite"
    ResultsDB.create(older, META).close()
    with pytest.raises(InputError, match=rf"another value of 'config': {general}"):
        ResultsDB.create(older, {**META, "config": "cfg8", "config_files": edited}, resume=True)


def test_an_error_model_named_by_another_path_to_the_same_content_resumes(tmp_path: Path) -> None:
    """``model=./m.npz`` and ``model=m.npz``: one file, one twin (models are compared by content); another model's
    content, or another filter beside it, is refused."""
    same = ["physical=errors:sha256=aa"]
    path = tmp_path / "results.sqlite"
    meta = {**META, "filters": ["physical=errors:model=./m.npz", "virtual=offset:joint2=0.001"], "error_models": same}
    ResultsDB.create(path, meta).close()
    moved = {**meta, "filters": ["physical=errors:model=m.npz", "virtual=offset:joint2=0.001"]}
    ResultsDB.create(path, moved, resume=True).close()
    with pytest.raises(InputError, match="another value of 'error_models'"):
        ResultsDB.create(path, {**moved, "error_models": ["physical=errors:sha256=bb"]}, resume=True)
    with pytest.raises(InputError, match="another value of 'filters'"):
        ResultsDB.create(path, {**moved, "filters": ["physical=errors:model=m.npz"]}, resume=True)
    gone = {**moved, "error_models": ["physical=errors:model=m.npz"]}  # the file was not there: its path alone
    ResultsDB.create(tmp_path / "gone.sqlite", gone).close()
    with pytest.raises(InputError, match="another value of 'filters'"):
        ResultsDB.create(tmp_path / "gone.sqlite", {**gone, "filters": meta["filters"]}, resume=True)


def test_open_rejects_missing_and_foreign_files(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no results database"):
        ResultsDB.open(tmp_path / "none.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not sqlite at all" * 100)
    with pytest.raises(InputError, match=r"junk\.sqlite"):
        ResultsDB.open(junk)


def test_a_case_cannot_store_another_cases_trajectory(tmp_path: Path) -> None:
    """Stored, it was exported under the row's case; read back, the store refuses it (a damaged store)."""
    path = tmp_path / "results.sqlite"
    with ResultsDB.create(path, META) as db:
        other = make_result(0)
        foreign = CaseResult(other.case, other.verdicts, other.kpis, (make_record(seed=1),))  # case-1's record
        with pytest.raises(InputError, match="case 'case-0' cannot store the trajectory of case 'case-1'"):
            db.add(foreign)
        with pytest.raises(InputError, match="cannot store the trajectory of case 'case-1'"):
            db.add_trajectories("case-0", [make_record(seed=1)])
        assert db.finished_ids() == set()
