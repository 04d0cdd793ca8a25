"""``cosim export`` (issue 15, item 13: no command wrote the records ``cosim check`` reads): the stored
trajectories of a real campaign, written as .npz records, checked again with ``cosim check``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from cosim_validation.runs.campaign.results_db import ResultsDB
from test.runs.campaign.run_fixtures import copy_run


def test_export_then_check_gives_the_stored_verdicts(
    reference: CampaignOutcome, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "records"
    assert main(["export", str(reference.out_dir), "-o", str(out), "--json"]) == 0
    written = json.loads(capsys.readouterr().out)["records"]
    with ResultsDB.open(reference.out_dir / "results.sqlite") as db:
        stored = db.trajectory_robots()
        cases = {c.test_id: c for c in db.cases()}
        verdicts = db.verdicts()
    assert {(w["test_id"], w["robot"]) for w in written} == {(t, r) for t, robots in stored.items() for r in robots}
    test_id = next(t for t, c in cases.items() if c.outcome == "completed")
    virtual = TrajectoryRecord.load(out / test_id / "virtual.npz")
    case = cases[test_id]
    assert virtual.meta["target_m"] == [case.target_x_m, case.target_y_m, case.target_z_m]
    # the exported records checked again: the verdicts the campaign stored for that case and robot
    files = [str(out / test_id / f"{robot}.npz") for robot in ("expected", "virtual")]
    assert main(["check", *files, "--json"]) in (0, 2)
    report = {r["robot"]: r for r in json.loads(capsys.readouterr().out)}
    checked = {(v["property"], v["status"]) for v in report["virtual"]["verdicts"]}
    stored_virtual = {(v.property, v.status) for v in verdicts if v.test_id == test_id and v.robot == "virtual"}
    assert stored_virtual <= checked


def test_export_of_one_case_and_robot_and_its_refusals(
    reference: CampaignOutcome, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ResultsDB.open(reference.out_dir / "results.sqlite") as db:
        test_id = next(iter(db.trajectory_robots()))
    out = tmp_path / "one"
    assert main(["export", str(reference.out_dir), "-o", str(out), "--case", test_id, "--robot", "physical"]) == 0
    assert capsys.readouterr().out.startswith(f"wrote 1 trajectory records of 1 cases into {out}")
    assert [p.relative_to(out) for p in out.rglob("*.npz")] == [Path(test_id) / "physical.npz"]
    # nothing overwritten, unknown cases and robots named, one error line each
    for argv, message in (
        (["--case", test_id, "--robot", "physical"], "physical.npz: already exists; refusing to overwrite it"),
        (["--case", "nope-0000000"], "--case 'nope-0000000': no trajectories of that case"),
        (["--robot", "ghost"], "unknown robot 'ghost'; expected one of: expected, virtual, physical"),
    ):
        assert main(["export", str(reference.out_dir), "-o", str(out), *argv]) == 1
        err = capsys.readouterr().err
        assert err.count("error:") == 1
        assert message in err
    assert len(list(out.rglob("*.npz"))) == 1


def test_an_export_that_meets_a_damaged_record_leaves_nothing(
    reference: CampaignOutcome, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """All or nothing: the records written before the damaged one are removed again, and the folders made for them."""
    import sqlite3

    run = tmp_path / "run"
    copy_run(reference.out_dir, run)
    with ResultsDB.open(run / "results.sqlite") as results:  # the last record in the export's order
        stored = results.trajectory_robots()
        last_id = [c.test_id for c in results.cases() if c.test_id in stored][-1]
    damage = "UPDATE trajectories SET record = x'deadbeef' WHERE test_id = ? AND robot = ?"
    with sqlite3.connect(run / "results.sqlite") as db:
        db.execute(damage, (last_id, stored[last_id][-1]))
    out = tmp_path / "records"
    assert main(["export", str(run), "-o", str(out)]) == 1
    assert "not a trajectory record" in capsys.readouterr().err
    assert not out.exists()  # nor any of the records before the damaged one
    kept = tmp_path / "kept"
    (kept / "mine").mkdir(parents=True)  # a folder of the user's that was there before stays
    assert main(["export", str(run), "-o", str(kept)]) == 1
    assert [p.relative_to(kept) for p in kept.rglob("*")] == [Path("mine")]


def test_two_exports_into_one_folder_at_once_write_each_file_once(
    reference: CampaignOutcome, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another export writes a record after this one checked that none exists and before it writes that record: this
    one refuses it, keeps the other's file and removes its own (both said "wrote" and one file overwrote the other).
    The other export is played by reading each stored record: its file is written just then."""
    with ResultsDB.open(reference.out_dir / "results.sqlite") as db:
        test_id = next(iter(db.trajectory_robots()))
    out = tmp_path / "shared"
    theirs = out / test_id / "virtual.npz"
    original = ResultsDB.trajectory

    def read_while_the_other_writes(self: ResultsDB, case: str, robot: str, *args: object) -> TrajectoryRecord:
        record = original(self, case, robot, *args)  # type: ignore[arg-type]
        if robot == "virtual" and not theirs.exists():
            theirs.parent.mkdir(parents=True, exist_ok=True)
            theirs.write_bytes(b"the other export's record")
        return record

    monkeypatch.setattr(ResultsDB, "trajectory", read_while_the_other_writes)
    argv = ["export", str(reference.out_dir), "-o", str(out), "--case", test_id]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("error:") == 1
    assert "virtual.npz: already exists; refusing to overwrite it" in err
    assert theirs.read_bytes() == b"the other export's record"
    assert [p.relative_to(out) for p in out.rglob("*.npz")] == [Path(test_id) / "virtual.npz"]
