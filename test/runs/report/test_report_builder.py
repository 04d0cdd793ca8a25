"""The report of a real campaign holds every table and figure of seed 000 that the run can show, readable offline."""

from __future__ import annotations

import base64
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.exceptions import InputError
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from cosim_validation.runs.report import SECTION_IDS, ReportOutcome, build_report
from cosim_validation.runs.run_inputs import kept_path
from test.runs.campaign.run_fixtures import copy_run

FIGURES = ("figure-6-img", "figure-7-img", "figure-8-img", "figure-9-img", "figure-10-img", "figure-11-img")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def report(reference: CampaignOutcome, tmp_path_factory: pytest.TempPathFactory) -> ReportOutcome:
    run = tmp_path_factory.mktemp("report") / "run"
    copy_run(reference.out_dir, run)
    return build_report(run)


@pytest.fixture(scope="module")
def html(report: ReportOutcome) -> str:
    return report.html_path.read_text(encoding="utf-8")


def test_every_section_is_there_and_available(report: ReportOutcome, html: str) -> None:
    for section in SECTION_IDS:
        assert f'<section id="{section}">' in html
        assert report.summary["report"][section]["available"], report.summary["report"][section]
    assert "Not available" not in html


def test_every_figure_is_an_inline_png(html: str) -> None:
    for figure in FIGURES:
        found = re.search(f'<figure id="{figure}"><img alt="[^"]*" src="data:image/png;base64,([^"]+)"', html)
        assert found, figure
        assert base64.b64decode(found.group(1))[:8] == PNG_MAGIC


def test_readable_offline(html: str) -> None:
    """No script, stylesheet, image or font is fetched: every URL in the page is a data URI or an anchor."""
    assert "<script" not in html
    for url in re.findall(r'(?:src|href)="([^"]+)"', html):
        assert url.startswith(("data:", "#")), url


def test_tables_hold_the_runs_numbers(reference: CampaignOutcome, report: ReportOutcome, html: str) -> None:
    for table in ("run-settings", "outcomes", "verdicts", "kpis", "figure-6-table", "table-4"):
        assert f'<table id="{table}"' in html or f'<table class="meta" id="{table}"' in html, table
    coverage = report.summary["report"]["tables-2-3"]["tables"]
    assert [t["region"] for t in coverage] == ["heart_side_7pct"]
    (row,) = coverage[0]["rows"]  # one granularity: 90 mm, grid and random side by side
    assert row["granularity_mm"] == pytest.approx(90.0)
    assert (row["grid_cases"], row["random_cases"]) == (8, 12)
    stored = sqlite3.connect(reference.out_dir / "results.sqlite")
    violated = stored.execute(
        "SELECT COUNT(*) FROM verdicts v JOIN cases c USING (test_id) WHERE v.property = "
        "'needle_outside_forbidden_regions' AND v.robot = 'virtual' AND v.status = 'violated' AND c.generator = 'grid'"
    ).fetchone()[0]
    assert row["grid_violations"] == violated
    assert row["grid_rate"] == pytest.approx(100.0 * violated / row["grid_completed"])
    table_4 = {d["robot"]: d for d in report.summary["report"]["figure-11-table-4"]["table_4"]}
    assert set(table_4) == {"virtual", "physical"}
    assert table_4["physical"]["tip_mm"]["mean"] > table_4["virtual"]["tip_mm"]["mean"]  # the real arm errs more


def test_summary_json_keeps_the_campaign_call(report: ReportOutcome) -> None:
    written = json.loads(report.summary_path.read_text())
    assert written["last_call"]["cases_run"] == 20
    assert set(SECTION_IDS) <= set(written["report"])


def test_a_run_without_suites_or_physical_robot_says_what_is_missing(report: ReportOutcome, tmp_path: Path) -> None:
    run = tmp_path / "session"
    shutil.copytree(report.html_path.parent, run)
    with sqlite3.connect(run / "results.sqlite") as db:  # a session: no suites, no physical robot
        db.execute("DELETE FROM meta WHERE key IN ('suites', 'kind', 'config_path')")
        db.execute("DELETE FROM trajectories WHERE robot = 'physical'")
    (run / "inputs.json").unlink()  # and made before runs kept copies of their inputs
    outcome = build_report(run)
    sections = outcome.summary["report"]
    assert not sections["tables-2-3"]["available"]
    assert "no grid or random suites" in sections["tables-2-3"]["reason"]
    assert {d["robot"] for d in sections["figure-11-table-4"]["table_4"]} == {"virtual"}
    assert "Not available in this run: no grid or random suites" in outcome.html_path.read_text()
    notes = sections["notes"]
    assert any(
        "no copy of the run's config; assuming" in n and n.endswith("needle_insertion.yaml as it is now") for n in notes
    )


def test_the_report_reads_the_runs_copy_of_its_configuration(reference: CampaignOutcome, tmp_path: Path) -> None:
    """Editing the configuration a run was made with, after the run, does not change its report."""
    from cosim_validation.runs.report.run_data import load_run

    run = tmp_path / "run"
    copy_run(reference.out_dir, run)
    manifest = json.loads((run / "inputs.json").read_text())
    original = kept_path(reference.out_dir, manifest["config"]["original"])  # relative to the run directory
    edited = tmp_path / "edited.yaml"  # the file the run names, edited since: a longer needle
    edited.write_text(original.read_text().replace("needle_length_m: 0.3 ", "needle_length_m: 0.35 "))
    assert edited.read_text() != original.read_text()
    manifest["config"]["original"] = str(edited)
    (run / "inputs.json").write_text(json.dumps(manifest))
    with sqlite3.connect(run / "results.sqlite") as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'config_path'", (json.dumps(str(edited)),))
    data = load_run(run)
    try:
        assert data.kinematics is not None
        assert data.kinematics.needle_length_m == 0.3  # the copy's
        assert data.config_path == run / manifest["config"]["copy"]
        assert data.notes == []
        (run / manifest["config"]["copy"]).write_text(edited.read_text())  # the copy itself tampered with
        tampered = load_run(run)
        assert tampered.kinematics is not None
        assert any("changed since the run was made" in n for n in tampered.notes)
        tampered.close()
    finally:
        data.close()


def test_a_safety_property_without_verdicts_is_named_not_the_suites(report: ReportOutcome, tmp_path: Path) -> None:
    """Issue 15, item 3: a run whose safety property has no verdicts said "no grid or random suites" (false)."""
    run = tmp_path / "renamed"
    shutil.copytree(report.html_path.parent, run)
    with sqlite3.connect(run / "results.sqlite") as db:  # stored by a version that accepted any name
        db.execute("UPDATE meta SET value = ? WHERE key = 'safety_property'", (json.dumps("no_such_property"),))
    section = build_report(run).summary["report"]["tables-2-3"]
    assert not section["available"]
    assert "no grid or random suites" not in section["reason"]
    assert section["reason"].startswith("the run's safety property 'no_such_property' has no verdict on any robot")


def _a_file(folder: Path) -> Path:
    (folder / "file").write_text("")
    return folder / "file"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", r"missing: not a run directory \(no such directory\)"),
        (lambda p: p, r"not a run directory \(no results\.sqlite"),
        (_a_file, r"file: not a run directory \(a file, expected a directory\)"),
    ],
)
def test_not_a_run_directory(tmp_path: Path, make: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        build_report(make(tmp_path))  # type: ignore[operator]


def test_cli(report: ReportOutcome, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path)]) == 1
    assert capsys.readouterr().err.startswith("error: ")
    assert main(["report", "--json", str(report.html_path.parent)]) == 0
    assert json.loads(capsys.readouterr().out)["report"] == str(report.html_path)


def test_a_summary_that_is_a_folder_leaves_the_report_as_it_was(report: ReportOutcome, tmp_path: Path) -> None:
    """Both files are written or neither: report.html was rewritten before summary.json, a folder, failed."""
    run = tmp_path / "run"
    shutil.copytree(report.html_path.parent, run)
    (run / "summary.json").unlink()
    (run / "summary.json").mkdir()
    (run / "report.html").write_bytes(b"the report as it was\n")
    with pytest.raises(InputError, match=r"summary\.json: not a file"):
        build_report(run)
    assert (run / "report.html").read_bytes() == b"the report as it was\n"
