"""Seed 000's Tables 2 and 3: coverage and error-triggering of grid vs random generation, per granularity.

One table per region (the whole target model: Table 2; a sub-model: Table 3), one row per granularity.
Columns ([Actuators 2025], 5.2.2): discretized areas (non-empty cubes) and valid cases; granularity; for the
grid method the points generated to get the valid cases and the error-triggering cases (number and
share); for the random method the points generated, the coverage of the discretized areas, the most
cases in one area and the error-triggering cases. Coverage numbers come from the suites' metrics
(made by the generator); error-triggering counts from the stored verdicts of the safety property on
the primary robot. Shares are of the cases that ran to the end (refused cases are counted apart).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from cosim_validation.runs.report.run_data import RunData

COLUMNS: tuple[tuple[str, str], ...] = (
    ("cubes", "areas"),
    ("granularity_mm", "granularity [mm]"),
    ("grid_cases", "valid cases"),
    ("grid_points", "points generated"),
    ("grid_completed", "cases run"),
    ("grid_violations", "error-triggering"),
    ("grid_rate", "error-triggering [%]"),
    ("random_cases", "valid cases"),
    ("random_points", "points generated"),
    ("random_coverage", "coverage [%]"),
    ("random_max_per_cube", "max cases per area"),
    ("random_completed", "cases run"),
    ("random_violations", "error-triggering"),
    ("random_rate", "error-triggering [%]"),
)
#: The header row above :data:`COLUMNS`: (label, columns spanned).
COLUMN_GROUPS: tuple[tuple[str, int], ...] = (("discretization", 2), ("grid (ours)", 5), ("random (baseline)", 7))


@dataclass
class CoverageTable:
    """One table: a region, its rows (one per granularity, coarse to fine)."""

    region: str
    rows: list[dict[str, Any]] = field(default_factory=list)


def _suite_of(run: RunData) -> dict[str, dict[str, Any]]:
    """Suite metadata by the 8-character prefix of its test ids."""
    return {str(s["suite_id"])[:8]: s for s in run.suites}


def _region(suite: dict[str, Any]) -> str:
    region = suite.get("region") or {}
    return str(region.get("name") or "unknown region")


def _side(run: RunData, suite: dict[str, Any], violated: Any) -> dict[str, Any]:
    """The columns of one generator at one granularity."""
    prefix = str(suite["suite_id"])[:8]
    cases = run.cases[run.cases["test_id"].str.startswith(prefix)]
    completed = cases[cases["outcome"] == "completed"]
    hits = int(violated.loc[completed.index].sum())
    metrics = suite.get("metrics") or {}
    method = str(suite["generator"])
    side = {
        f"{method}_cases": len(cases),
        f"{method}_points": metrics.get("points_generated"),
        f"{method}_completed": len(completed),
        f"{method}_violations": hits,
        f"{method}_rate": 100.0 * hits / len(completed) if len(completed) else None,
    }
    if method == "random":
        coverage = metrics.get("coverage")
        side["random_coverage"] = None if coverage is None else 100.0 * float(coverage)
        side["random_max_per_cube"] = metrics.get("max_cases_per_cube")
    return side


def coverage_tables(run: RunData) -> list[CoverageTable]:
    """Tables 2/3 of a campaign (empty for a run without grid or random suites).

    Also empty when no robot has a verdict of the run's safety property.

    Args:
        run: The run; its suites' metadata give the coverage columns, the safety verdicts of its primary robot the
            error-triggering ones.
    """
    if run.primary_robot is None:
        return []
    violated = run.violated()
    grouped: dict[str, dict[float, dict[str, Any]]] = defaultdict(dict)
    for suite in run.suites:
        if suite.get("generator") not in ("grid", "random"):
            continue
        granularity = float(suite["granularity_m"])
        row = grouped[_region(suite)].setdefault(granularity, {"granularity_mm": granularity * 1e3})
        metrics = suite.get("metrics") or {}
        row.setdefault("cubes", metrics.get("nonempty_cubes"))
        row.update(_side(run, suite, violated))
    tables = []
    for region, rows in grouped.items():
        ordered = [rows[g] for g in sorted(rows, reverse=True)]
        tables.append(CoverageTable(region, [{key: r.get(key) for key, _ in COLUMNS} for r in ordered]))
    return tables
