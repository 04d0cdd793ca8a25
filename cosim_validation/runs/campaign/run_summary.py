"""What a run directory holds, in a few numbers: outcomes, verdicts per property and robot, KPIs, timing."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from cosim_validation.runs.campaign.json_file import read_json, write_json
from cosim_validation.runs.campaign.results_db import ResultsDB


def summarize(db: ResultsDB) -> dict[str, Any]:
    """The summary of a results database (campaign or session).

    Every number is an SQL aggregate, so the summary of a 200,000-case run takes seconds and little
    memory (no row is loaded as a Python object).

    Args:
        db: The run's results database.

    Returns:
        JSON-ready mapping: ``run`` (meta), ``cases`` (by outcome), ``properties`` (per property and robot:
        holds / violated / unknown over the completed cases, and ``stopped``: the verdicts of cases stopped before
        their end, counted apart), ``safety`` (the safety property's violations per robot), ``kpis``
        (whole-case KPIs per robot: n, mean, max, unit), ``timing`` (wall time per case), and ``failures`` and
        ``aborted`` (the first 10 cases of each outcome, with their messages).
    """
    meta = db.meta()
    outcomes = dict(db.query("SELECT outcome, COUNT(*) FROM cases GROUP BY outcome ORDER BY outcome"))
    stored = sum(outcomes.values())
    expected_total = sum(int(s.get("cases", 0)) for s in meta.get("suites", []))
    verdicts: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    # the verdicts of completed cases by status; those of cases stopped before their end (aborted, failed) apart
    for prop, robot, status, count in db.query(
        "SELECT v.property, v.robot, CASE WHEN c.outcome = 'completed' THEN v.status ELSE 'stopped' END, COUNT(*) "
        "FROM verdicts v JOIN cases c ON c.test_id = v.test_id GROUP BY 1, 2, 3"
    ):
        verdicts[(prop, robot)][status] = int(count)
    properties: list[dict[str, Any]] = [
        {"property": p, "robot": r, **{s: counts.get(s, 0) for s in ("holds", "violated", "unknown", "stopped")}}
        for (p, r), counts in sorted(verdicts.items())
    ]
    safety_name = str(meta.get("safety_property", ""))
    completed = outcomes.get("completed", 0)
    safety = {
        r["robot"]: {"violated": r["violated"], "rate": r["violated"] / completed if completed else 0.0}
        for r in properties
        if r["property"] == safety_name
    }
    failures = db.query("SELECT test_id, message FROM cases WHERE outcome = 'failed' ORDER BY case_index LIMIT 10")
    aborted = db.query("SELECT test_id, message FROM cases WHERE outcome = 'aborted' ORDER BY case_index LIMIT 10")
    [(wall_total, wall_mean, workers)] = db.query(
        "SELECT SUM(wall_s), AVG(wall_s), COUNT(DISTINCT worker) FROM timings"
    )
    return {
        "run": {
            k: meta[k]
            for k in ("kind", "config_path", "controller", "backends", "safety_property", "anatomy_repairs")
            if k in meta
        }
        | {
            "suites": [
                {k: s.get(k) for k in ("suite_id", "generator", "granularity_m", "cases")}
                for s in meta.get("suites", [])
            ]
        },
        "cases": {"stored": stored, "expected": expected_total or stored, **outcomes},
        "failures": [{"test_id": t, "message": m} for t, m in failures],
        "aborted": [{"test_id": t, "message": m} for t, m in aborted],  # the first 10, with their reasons
        "properties": properties,
        "safety": {"property": safety_name, "by_robot": safety},
        "kpis": _kpis(db),
        "timing": {
            "case_wall_s_total": float(wall_total or 0.0),
            "case_wall_s_mean": None if wall_mean is None else float(wall_mean),
            "workers": int(workers),
        },
    }


def _kpis(db: ResultsDB) -> list[dict[str, Any]]:
    """Whole-case KPIs per (name, robot, unit): count, mean and maximum of the known values (NULL is NaN)."""
    rows = db.query(
        "SELECT name, robot, unit, COUNT(value), AVG(value), MAX(value) FROM kpis "
        "WHERE stage = 'case' AND value IS NOT NULL GROUP BY name, robot, unit ORDER BY name, robot, unit"
    )
    return [
        {"kpi": n, "robot": r, "unit": u, "n": int(c), "mean": float(mean), "max": float(top)}
        for n, r, u, c, mean, top in rows
    ]


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    """Write ``summary`` as strict JSON (NaN becomes null).

    Args:
        path: The ``summary.json`` file, replaced atomically.
        summary: The summary, as :func:`summarize` gives it.
    """
    write_json(path, summary)


def read_summary(path: Path, remedy: str = "") -> dict[str, Any]:
    """Read a ``summary.json`` (``remedy``: what to do if it is damaged).

    Args:
        path: The ``summary.json`` file.
        remedy: What the user should do if the file is damaged, for the error's message.

    Raises:
        StoreError: It cannot be read or is no JSON object (naming the file).
    """
    return read_json(path, remedy)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**12


def _seconds(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0.0 <= value < 1e12


#: What a campaign writes in ``last_call`` (the summary's one part no database holds), with what each key holds.
LAST_CALL_KEYS: dict[str, tuple[str, Any]] = {
    "executor": ("'local' or 'ray'", lambda v: v in ("local", "ray")),
    "workers": ("a whole number >= 1", lambda v: _count(v) and v >= 1),
    "cases_run": ("a whole number >= 0", _count),
    "cases_skipped": ("a whole number >= 0", _count),
    "interrupted": ("true or false", lambda v: isinstance(v, bool)),
    "wall_s": ("a number of seconds >= 0", _seconds),
    "cases_per_s": ("a number >= 0", _seconds),
}


def last_call_problem(value: Any) -> str | None:
    """What is wrong with a summary's ``last_call`` as read back, or None when it is what a campaign writes.

    Args:
        value: The ``last_call`` value of a ``summary.json`` (edited by hand, it may hold anything).
    """
    if not isinstance(value, dict):
        return f"last_call: expected an object, got {type(value).__name__}"
    unknown, missing = sorted(set(value) - set(LAST_CALL_KEYS)), sorted(set(LAST_CALL_KEYS) - set(value))
    if unknown or missing:
        odd = f"unknown: {', '.join(unknown)}" if unknown else f"missing: {', '.join(missing)}"
        return f"last_call: expected the keys {', '.join(LAST_CALL_KEYS)}; {odd}"
    for key, (what, ok) in LAST_CALL_KEYS.items():
        if not ok(value[key]):
            return f"last_call.{key}: expected {what}, got {str(value[key])[:40]!r}"
    return None
