"""What a run directory holds, in a few numbers: outcomes, verdicts per property and robot, KPIs, timing."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.campaign.json_file import read_json, write_json
from cosim_validation.campaign.results_db import ResultsDB


def summarize(db: ResultsDB) -> dict[str, Any]:
    """The summary of a results database (campaign or session).

    Returns:
        JSON-ready mapping: ``run`` (meta), ``cases`` (by outcome), ``properties`` (per property and robot:
        holds / violated / unknown), ``safety`` (the safety property's violations per robot), ``kpis``
        (whole-case KPIs per robot: n, mean, max, unit), ``timing`` (wall time per case).
    """
    meta = db.meta()
    cases = db.cases()
    outcomes = Counter(c.outcome for c in cases)
    expected_total = sum(int(s.get("cases", 0)) for s in meta.get("suites", []))
    verdicts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for v in db.verdicts():
        verdicts[(v.property, v.robot)][v.status] += 1
    properties: list[dict[str, Any]] = [
        {"property": p, "robot": r, **{s: counts[s] for s in ("holds", "violated", "unknown")}}
        for (p, r), counts in sorted(verdicts.items())
    ]
    safety_name = str(meta.get("safety_property", ""))
    completed = outcomes.get("completed", 0)
    safety = {
        r["robot"]: {"violated": r["violated"], "rate": r["violated"] / completed if completed else 0.0}
        for r in properties
        if r["property"] == safety_name
    }
    timings = db.timings()
    wall = np.array([w for w, _ in timings.values()]) if timings else np.zeros(0)
    return {
        "run": {k: meta[k] for k in ("kind", "config_path", "controller", "backends", "safety_property") if k in meta}
        | {
            "suites": [
                {k: s.get(k) for k in ("suite_id", "generator", "granularity_m", "cases")}
                for s in meta.get("suites", [])
            ]
        },
        "cases": {"stored": len(cases), "expected": expected_total or len(cases), **dict(sorted(outcomes.items()))},
        "failures": [{"test_id": c.test_id, "message": c.message} for c in cases if c.outcome == "failed"][:10],
        "properties": properties,
        "safety": {"property": safety_name, "by_robot": safety},
        "kpis": _kpis(db),
        "timing": {
            "case_wall_s_total": float(wall.sum()),
            "case_wall_s_mean": float(wall.mean()) if wall.size else None,
            "workers": len({w for _, w in timings.values()}),
        },
    }


def _kpis(db: ResultsDB) -> list[dict[str, Any]]:
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for k in db.kpis():
        if k.stage == "case" and k.value is not None:
            values[(k.name, k.robot, k.unit)].append(float(k.value))
    return [
        {"kpi": n, "robot": r, "unit": u, "n": len(v), "mean": float(np.mean(v)), "max": float(np.max(v))}
        for (n, r, u), v in sorted(values.items())
    ]


def write_summary(path: Path, summary: dict[str, Any]) -> None:
    """Write ``summary`` as strict JSON (NaN becomes null)."""
    write_json(path, summary)


def read_summary(path: Path) -> dict[str, Any]:
    """Read a ``summary.json``."""
    return read_json(path)
