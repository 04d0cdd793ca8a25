"""``report.html`` and ``summary.json`` of a run directory (campaign or digital-twin session)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.runs.campaign.run_summary import last_call_problem, read_summary, summarize, write_summary
from cosim_validation.runs.campaign.stores import StoreDamagedError, write_text
from cosim_validation.runs.report import hazard_section, sections
from cosim_validation.runs.report.html_page import Section, page, paragraph
from cosim_validation.runs.report.run_data import RunData, load_run
from cosim_validation.runs.run_inputs import run_input_path

#: Every section of a report, in order (their ids are the anchors in report.html and the keys of summary.json).
SECTION_IDS: tuple[str, ...] = (
    "run",
    "properties",
    "tables-2-3",
    "figure-6",
    "figures-7-8",
    "figure-9",
    "figure-10",
    "figure-11-table-4",
)


@dataclass(frozen=True)
class ReportOutcome:
    """Where the report went and what it says.

    Attributes:
        html_path: ``report.html``.
        summary_path: ``summary.json`` (the run summary plus every section's numbers).
        summary: Its content.
        wall_s: Time taken [s].
    """

    html_path: Path
    summary_path: Path
    summary: dict[str, Any]
    wall_s: float


def build_report(run_dir: str | Path, max_cubes: int = 200, max_cases: int = 500) -> ReportOutcome:
    """Write ``report.html`` and ``summary.json`` into ``run_dir``.

    Args:
        run_dir: A directory holding ``results.sqlite``.
        max_cubes: Figure 6 measures at most this many cubes per granularity.
        max_cases: Table 4 pools at most this many cases.

    Raises:
        InputError: Not a run directory.
    """
    started = time.perf_counter()
    summary_path, html_path = Path(run_dir) / "summary.json", Path(run_dir) / "report.html"
    for path in (html_path, summary_path):  # both written, or neither
        if path.exists() and not path.is_file():
            raise InputError(f"{path}: not a file; remove it and run `cosim report` again (it is written here)")
    run = load_run(run_dir)
    try:
        _refuse_unknown_properties(run)
        last_call = _last_call(summary_path)  # a damaged summary.json is refused before anything is written
        parts: list[Section] = [
            sections.overview(run),
            sections.properties(run),
            sections.coverage(run),
            sections.frechet_cubes(run, max_cubes),
            sections.targets_by_verdict(run),
            sections.depth(run),
            sections.tip_deviation(run),
            sections.virtual_vs_physical(run, max_cases),
        ]
        if hazard_section.hazard_tables(run.run_dir) is not None:  # a run of a hazard campaign
            parts.append(hazard_section.hazards(run))
        notes = Section("notes", "Notes")
        for note in dict.fromkeys(run.notes):
            notes.parts.append(paragraph(note, missing=True))
        intro = paragraph(
            f"{run.kind.capitalize()} {run.run_dir.resolve().name}: {len(run.cases)} cases. Distances in mm, "
            "angles in degrees. Figures and tables follow [Actuators 2025] (Tables 2-4, Figures 6-11) on this run's "
            "data."
        )
        title = f"cosim_validation report: {run.run_dir.resolve().name}"
        html = page(title, intro, [*parts, notes] if notes.parts else parts)
        summary = summarize(run.db)
        summary["report"] = {s.section_id: {"title": s.title, "available": s.available, **s.data} for s in parts} | {
            "notes": list(dict.fromkeys(run.notes))
        }
    finally:
        run.close()
    write_text(html_path, html)
    write_summary(summary_path, last_call | summary)
    return ReportOutcome(html_path, summary_path, last_call | summary, time.perf_counter() - started)


def _refuse_unknown_properties(run: RunData) -> None:
    """Refuse a verdict of a property the run's own property set (its kept copy) does not have.

    Such a row was counted in the report's property table as if judged. Behaviour machines' verdicts
    (``machine:<name>``) are not checked; nor is a run without a copy of its properties.

    Raises:
        StoreDamagedError: Names the file, the case and the property, and the property set.
    """
    from cosim_validation.monitor.properties.property_set import PropertySet

    copy, _ = run_input_path(run.run_dir, "properties", None, lambda _message: None)
    if copy is None:
        return
    try:
        names = {spec.name for spec in PropertySet.load(copy).properties}
    except CosimError:
        return  # a copy that does not load tells nothing about the names (a replay of the run names its error)
    judged = run.verdicts["property"].astype(str)
    unknown = run.verdicts[~judged.isin(names) & ~judged.str.startswith("machine:")]
    if len(unknown):
        row = unknown.iloc[0]
        raise StoreDamagedError(
            run.run_dir / "results.sqlite",
            f"table verdicts, case {str(row['test_id'])!r}: property holds {str(row['property'])!r}, expected a "
            f"property of the run's property set ({copy}) (the file was changed outside cosim: restore it, or "
            "delete that case's rows and run `cosim campaign ... --resume`)",
        )


def _last_call(summary_path: Path) -> dict[str, Any]:
    """What the campaign recorded about its last call (wall time, workers), kept when the summary is rewritten."""
    if not summary_path.is_file():
        return {}
    remedy = "delete it and run `cosim report` again: it is rewritten from results.sqlite (less the last call's timing)"
    kept = {k: v for k, v in read_summary(summary_path, remedy).items() if k == "last_call"}
    problem = last_call_problem(kept["last_call"]) if kept else None
    if problem is not None:  # copied as read, a hand-edited value was passed on as the campaign's own
        raise StoreDamagedError(summary_path, problem, remedy)
    return kept
