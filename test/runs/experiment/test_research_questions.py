"""An experiment runs end to end into its output directory, and a resumed one keeps every call's wall time,
also of a call that was killed before it could write it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from cosim_validation.cli.experiment import answer_text
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from cosim_validation.runs.experiment.call_log import earlier_calls, summed_wall_s
from cosim_validation.runs.experiment.experiment_specs import experiment_spec
from cosim_validation.runs.experiment.research_questions import RunOptions, read_results, run_experiment
from test.runs.campaign.run_fixtures import CONFIG

# RQ2's definition at one coarse granularity, one target per cube: 8 cases on the virtual robot
TINY = replace(experiment_spec("rq2", False, (90.0,)), per_cube=1)


@pytest.mark.slow
def test_experiment_then_resume_sums_the_calls(tmp_path: Path) -> None:
    options = RunOptions(CONFIG, tmp_path, workers=1)
    first = run_experiment(TINY, options, progress=None)
    assert not first.interrupted
    results = read_results(tmp_path)
    grid, random = results["suites"]
    assert (grid["file"], random["file"]) == ("grid-90mm.parquet", "random-90mm.parquet")
    assert random["cases"] == grid["cases"] > 0  # as many random targets as grid targets (seed 000)
    assert results["campaign"]["cases_run"] == 2 * grid["cases"]
    [table] = results["answer"]["tables"]
    assert [row["granularity_mm"] for row in table["rows"]] == [90]
    assert Path(results["report"]).is_file()
    assert [c["ended"] for c in results["calls"]] == [True]
    assert results["wall_s"]["total"] == pytest.approx(results["calls"][0]["wall_s"]["total"])

    second = run_experiment(TINY, replace(options, resume=True), progress=None)
    resumed = read_results(tmp_path)
    assert not second.interrupted
    assert [c["cases_run"] for c in resumed["calls"]] == [2 * grid["cases"], 0]  # nothing run twice
    assert resumed["wall_s"]["total"] == pytest.approx(sum(c["wall_s"]["total"] for c in resumed["calls"]))
    assert resumed["answer"]["tables"] == results["answer"]["tables"]
    text = answer_text("rq2", resumed)  # what `cosim experiment` prints
    assert text.startswith(f"rq2: wall time {resumed['wall_s']['total']:.0f} s summed over 2 calls (--resume)")
    assert "heart_side_7pct:" in text
    assert "granularity_mm" in text
    assert f"report: {resumed['report']}" in text


def _finished_at(results_path: Path) -> list[str]:
    with sqlite3.connect(results_path) as db:
        return [row[0] for row in db.execute("SELECT finished_at FROM timings ORDER BY finished_at")]


def test_a_killed_call_is_measured_to_its_last_stored_case(reference: CampaignOutcome, tmp_path: Path) -> None:
    results_path = tmp_path / "results.sqlite"
    shutil.copyfile(reference.out_dir / "results.sqlite", results_path)
    stamps = _finished_at(results_path)
    started_at = stamps[5]  # the killed call stored the cases from the 6th on
    calls = [
        {"started_at": "2000-01-01T00:00:00.000Z", "ended": True, "cases_run": 5, "wall_s": {"campaign": 2.0}},
        {"started_at": started_at, "ended": False},
    ]
    (tmp_path / "experiment.json").write_text(json.dumps({"calls": calls}))
    ended, killed = earlier_calls(tmp_path, resume=True, results_path=results_path)
    assert ended == calls[0]
    assert killed["cases_run"] == len(stamps) - 5
    assert killed["wall_s_from"] == "last stored case"
    assert killed["wall_s"]["campaign"] > 0
    assert summed_wall_s([ended, killed])["campaign"] == pytest.approx(2.0 + killed["wall_s"]["campaign"])
    assert earlier_calls(tmp_path, resume=False, results_path=results_path) == []


def test_an_experiment_file_without_calls_counts_as_one_call(tmp_path: Path) -> None:
    (tmp_path / "experiment.json").write_text(json.dumps({"wall_s": {"campaign": 3.5, "total": 4.0}}))
    [call] = earlier_calls(tmp_path, resume=True, results_path=tmp_path / "absent.sqlite")
    assert call["wall_s"] == {"campaign": 3.5, "total": 4.0}
