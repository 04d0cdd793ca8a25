"""``cosim hazards run``: campaigns fault-free and under scenarios, the detection tables, resume, bad input."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.config import load_config
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.hazards.fault_window import schedule, windows_of_events
from cosim_validation.hazards.hazard_library import load_library
from cosim_validation.robots.model import RobotConfig
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.testgen import Suite
from test.robots.virtual.plans import CONFIG_PATH

pytestmark = pytest.mark.slow

CASES = 3
LIBRARY = Path(__file__).resolve().parents[2] / "config" / "hazards.yaml"


@pytest.fixture(scope="module")
def small_suite(suites: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first three cases of the random suite near the heart."""
    full = Suite.read(suites[1])
    rows = list(range(CASES))
    keep = {k: v for k, v in full.metadata.items() if k not in ("format", "frame_id", "unit", "suite_id")}
    suite = Suite.build(
        full.source_m[rows], full.target_m[rows], full.cube_index[rows], full.target_depth_m[rows], keep
    )
    path = tmp_path_factory.mktemp("hazard_suite") / "three.parquet"
    suite.write(path)
    return path


def _table(capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:  # type: ignore[type-arg]
    return {row["scenario"]: row for row in json.loads(capsys.readouterr().out)["scenarios"]}


def test_a_hazard_run_measures_detection_and_resumes(
    small_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "hazards"
    command = ["hazards", "run", "--suite", str(small_suite), "--scenarios", "sudden_jump,tracker_dropout"]
    assert main([*command, "--workers", "1", "--out", str(out), "--json"]) == 0
    table = _table(capsys)
    assert list(table) == ["fault_free", "sudden_jump", "tracker_dropout"]
    assert table["fault_free"]["cases"] == CASES
    assert table["fault_free"]["false_alarms"] == 0  # thresholds derived from these very cases (in-sample)
    assert table["fault_free"]["second_false_alarms"] == 0
    jump = table["sudden_jump"]
    assert jump["windows"] >= CASES
    assert jump["detected"] == jump["windows"] == jump["within_cycle"]
    assert jump["latency_max_s"] <= 0.1 + 1e-9
    dropout = table["tracker_dropout"]
    assert (dropout["detected"], dropout["second_detected"]) == (0, dropout["windows"])
    with closing(sqlite3.connect(out / "hazards.sqlite")) as db:
        assert db.execute("SELECT COUNT(*) FROM scenarios").fetchone()[0] == 2
        source = db.execute("SELECT source FROM thresholds WHERE key = 'threshold_m'").fetchone()[0]
        assert "fault_free" in source
        windows = db.execute("SELECT start_s, end_s FROM windows WHERE scenario = 'sudden_jump' ORDER BY start_s")
        assert windows.fetchall()[0] == pytest.approx((8.0, 8.3))
    _check_stored_windows(out / "runs" / "sudden_jump" / "results.sqlite")

    assert main([*command, "--out", str(out)]) == 1  # a second call must say --resume
    assert "add --resume" in capsys.readouterr().err
    assert main([*command, "--workers", "1", "--out", str(out), "--resume", "--json"]) == 0
    assert _table(capsys) == table  # nothing new ran, the same tables
    reanalyse = ["hazards", "run", "--reanalyse", "--out", str(out), "--threshold-mm", "3", "--json"]
    assert main([*reanalyse, *command[2:]]) == 0
    assert _table(capsys)["sudden_jump"]["detected"] == jump["windows"]
    # the same scenarios, sudden_jump's trigger after the end of every case: the stored runs were made with the
    # other library, and their detection would be labelled with this one's scenarios
    late = tmp_path / "late.yaml"
    late.write_text(
        LIBRARY.read_text().replace("{kind: periodic, at_s: 8.0, period_s: 8.0}", "{kind: time, at_s: 500}")
    )
    before = (out / "hazards.sqlite").read_bytes()
    assert main([*reanalyse, *command[2:], "--library", str(late)]) == 1
    err = capsys.readouterr().out + capsys.readouterr().err
    assert "late.yaml: edited since the run of 'sudden_jump' was made" in err
    assert (out / "hazards.sqlite").read_bytes() == before  # the tables of the runs as made stay

    assert main(["report", str(out / "runs" / "sudden_jump"), "--json"]) == 0  # the report's hazard section
    capsys.readouterr()
    section = json.loads((out / "runs" / "sudden_jump" / "summary.json").read_text())["report"]["hazards"]
    assert section["available"]
    assert section["scenarios"]["sudden_jump"]["detected"] == jump["windows"]
    assert section["thresholds"]["threshold_m"] == pytest.approx(0.003)
    html = (out / "runs" / "sudden_jump" / "report.html").read_text()
    assert 'id="hazards-figure-4"' in html
    assert 'id="hazards-figure-5"' in html


def _threshold_m(run: Path) -> float:
    with closing(sqlite3.connect(run / "hazards.sqlite")) as db:
        return float(db.execute("SELECT value FROM thresholds WHERE key = 'threshold_m'").fetchone()[0])


def test_a_twin_with_learned_errors_injected_lowers_the_thresholds(
    small_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--filter virtual=errors:model=M`` in every campaign of the run: the twin errs like the emulated arm, so the
    fault-free deviation between them, and the thresholds derived from it, are smaller than with the plain twin,
    and a sudden jump is still caught in every window. A calibration made with other filters is refused: its
    thresholds hold for another twin."""
    model = Path(__file__).resolve().parents[1] / "error_injection" / "data" / "er3_emulated.npz"
    twin = f"virtual=errors:model={model}"
    base = ["hazards", "run", "--suite", str(small_suite), "--workers", "1", "--json"]
    assert main([*base, "--scenarios", "none", "--out", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    injected = tmp_path / "injected"
    assert main([*base, "--scenarios", "sudden_jump", "--filter", twin, "--out", str(injected)]) == 0
    jump = _table(capsys)["sudden_jump"]
    assert jump["detected"] == jump["windows"] >= CASES
    for name, filters in (("fault_free", [twin]), ("sudden_jump", [twin, f"physical=hazards:sudden_jump@{LIBRARY}"])):
        with ResultsDB.open(injected / "runs" / name / "results.sqlite") as db:
            assert db.meta()["filters"] == [f.replace(str(LIBRARY), "config/hazards.yaml") for f in filters]
    plain_m, injected_m = _threshold_m(tmp_path / "plain"), _threshold_m(injected)
    assert injected_m < 0.9 * plain_m, (injected_m, plain_m)
    # a reanalysis judges the stored runs with their own filters only (it took others without a word)
    reanalyse = [*base, "--scenarios", "sudden_jump", "--reanalyse", "--out", str(injected)]
    assert main(reanalyse) == 1
    assert f"were made with {twin}, not no filter" in capsys.readouterr().out
    assert main([*reanalyse, "--filter", twin]) == 0
    assert _table(capsys)["sudden_jump"] == jump
    # thresholds derived with the plain twin are refused for a run whose twin has errors injected, and the reverse
    for calibration, filters in (
        (tmp_path / "plain" / "runs" / "fault_free", ["--filter", twin]),
        (injected / "runs" / "fault_free", []),
    ):
        argv = [*base, "--scenarios", "none", "--calibration", str(calibration), *filters, "--out", str(tmp_path / "x")]
        assert main(argv) == 1
        assert "thresholds hold for the robots they were derived from" in capsys.readouterr().out  # --json
        assert not (tmp_path / "x").exists()
    # the same model under another name is the same twin (the filters' texts differ, the model files do not)
    copy = tmp_path / "copy.npz"
    copy.write_bytes(model.read_bytes())
    calibration = ["--calibration", str(injected / "runs" / "fault_free"), "--filter", f"virtual=errors:model={copy}"]
    assert main([*base, "--scenarios", "none", *calibration, "--out", str(tmp_path / "y")]) == 0
    capsys.readouterr()
    # another model behind the path the runs were made with is another twin (the path alone took it)
    other = ErrorModel.from_bytes(model.read_bytes(), str(model))
    model_bytes = dataclasses.replace(other, meta={**other.meta, "dataset": "another"}).to_bytes()
    copy.write_bytes(model_bytes)
    twin_copy = ["--filter", f"virtual=errors:model={copy}"]
    calibration = ["--calibration", str(tmp_path / "y" / "runs" / "fault_free"), *twin_copy]
    assert main([*base, "--scenarios", "none", *calibration, "--out", str(tmp_path / "z")]) == 1
    assert "its robots were seen through error models that were replaced since" in capsys.readouterr().out
    assert not (tmp_path / "z").exists()
    assert main([*base, "--scenarios", "none", *twin_copy, "--out", str(tmp_path / "y"), "--resume"]) == 1
    assert "another value of 'error_models': an error model of --filter holds other content" in capsys.readouterr().out


def _check_stored_windows(results: Path) -> None:
    """The windows stored as they happened are those the scenario and the case seed give, in every case."""
    kinematics = RobotConfig.from_config(load_config(CONFIG_PATH)["robot"]).kinematics
    scenario = load_library()["sudden_jump"]
    with ResultsDB.open(results) as db:
        events = db.events()
        assert events is not None
        assert {e.robot for e in events} == {"physical"}
        for test_id in db.finished_ids():
            physical = db.trajectory(test_id, "physical", kinematics)
            happened = [(e.t_s, e.kind) for e in events if e.test_id == test_id]
            stored = windows_of_events(happened, float(physical.t_s[-1]))
            assert stored  # every case lives past 8 s
            recomputed = schedule(scenario, physical.t_s[1:], int(physical.meta["seed"]))
            assert len(stored) == len(recomputed)  # the filter's clock sums periods: equal to 1e-9 s
            assert np.asarray(stored) == pytest.approx(np.asarray(recomputed), abs=1e-9)


def test_a_mitigated_run_stops_every_jumped_case_and_no_fault_free_one(
    small_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mitigated"
    command = ["hazards", "run", "--suite", str(small_suite), "--scenarios", "sudden_jump", "--mitigate"]
    # 12 mm: above these heart-side cases' fault-free deviation (11.7 mm), below a jump's (> 19 mm)
    assert main([*command, "--threshold-mm", "12", "--workers", "1", "--out", str(out), "--json"]) == 0
    table = _table(capsys)
    assert table["fault_free"]["false_alarms"] == 0
    jump = table["sudden_jump"]
    assert jump["windows"] >= 1
    assert jump["detected"] == jump["windows"]
    with closing(sqlite3.connect(out / "hazards.sqlite")) as db:
        source = db.execute("SELECT source FROM thresholds WHERE key = 'threshold_m'").fetchone()[0]
        jumped = db.execute("SELECT test_id FROM detection WHERE scenario = 'sudden_jump' AND windows > 0").fetchall()
    assert source == "set; mitigated: stop on alarm"
    messages = {}
    for name in ("fault_free", "sudden_jump"):
        with ResultsDB.open(out / "runs" / name / "results.sqlite") as results:
            messages[name] = {c.test_id: (c.outcome, c.message) for c in results.cases()}
            assembly = results.meta()["assembly"]
        assert (assembly["detector"], assembly["stop_on_alarm"]) == ("tip_mm=12.0", True)
    assert not any("e_TaskAborted" in m for _, m in messages["fault_free"].values())  # the detector stopped none
    for (test_id,) in jumped:  # the detector stopped every case a jump struck (events.alarm = e_TaskAborted)
        outcome, message = messages["sudden_jump"][test_id]
        assert outcome == "aborted"
        assert "e_TaskAborted" in message

    # a resume keeps the mitigation it was made with: other thresholds, or none, are one error line
    resume = [*command[:-1], "--workers", "1", "--out", str(out), "--resume"]
    for argv, values in (
        ([*resume, "--mitigate", "--threshold-mm", "10"], "(stored 'tip_mm=12.0', now 'tip_mm=10.0')"),
        (resume, "(stored 'tip_mm=12.0', now None)"),
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("error:") == 1
        assert f"fault_free/results.sqlite: cannot resume, it was made with another value of 'detector' {values}" in err
    with ResultsDB.open(out / "runs" / "sudden_jump" / "results.sqlite") as results:
        assert {c.test_id: (c.outcome, c.message) for c in results.cases()} == messages["sudden_jump"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--mitigate"], "--mitigate: the detector in the loop needs its thresholds first"),
        (["--scenarios", "no_such"], "unknown scenario 'no_such'; scenarios: temporarily_unavailable"),
        (["--threshold-mm", "-1"], "--threshold-mm: expected a number > 0"),
        (["--filter", "physical=hazards:sudden_jump"], "adds each scenario's hazards filter itself"),
        (["--filter", "virtual=errors:model=no_such.npz"], "no_such.npz"),
        (["--filter", "virtual=offset:joint2=0.001"] * 2, "filter virtual=offset:joint2=0.001 is given twice"),
    ],
)
def test_bad_hazard_runs_are_one_error_line(
    argv: list[str], message: str, small_suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["hazards", "run", "--suite", str(small_suite), "--out", str(tmp_path / "x"), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err
    assert err.startswith("error:")
    assert not (tmp_path / "x").exists()
