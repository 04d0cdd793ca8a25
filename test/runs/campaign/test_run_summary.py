"""The run summary (SQL aggregates) equals the same numbers counted row by row in Python."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
import pytest

from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.runs.campaign.run_summary import summarize


def test_summary_equals_the_rows_counted_in_python(reference: CampaignOutcome) -> None:
    with ResultsDB.open(reference.out_dir / "results.sqlite") as db:
        summary = summarize(db)
        cases, verdicts, kpis, timings = db.cases(), db.verdicts(), db.kpis(), db.timings()

    outcomes = Counter(c.outcome for c in cases)
    assert summary["cases"] == {"stored": len(cases), "expected": len(cases), **dict(sorted(outcomes.items()))}
    assert summary["failures"] == [{"test_id": c.test_id, "message": c.message} for c in cases if c.outcome == "failed"]

    # the completed cases' verdicts by status; a stopped case's verdicts counted apart
    outcome_of = {c.test_id: c.outcome for c in cases}
    counts: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for v in verdicts:
        counts[(v.property, v.robot)][v.status if outcome_of[v.test_id] == "completed" else "stopped"] += 1
    assert summary["properties"] == [
        {"property": p, "robot": r, **{k: c[k] for k in ("holds", "violated", "unknown", "stopped")}}
        for (p, r), c in sorted(counts.items())
    ]
    safety = summary["safety"]
    completed = outcomes["completed"]
    for robot, entry in safety["by_robot"].items():
        assert entry["violated"] == counts[(safety["property"], robot)]["violated"]
        assert entry["rate"] == pytest.approx(entry["violated"] / completed)

    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for k in kpis:
        if k.stage == "case" and k.value is not None:
            values[(k.name, k.robot, k.unit)].append(float(k.value))
    assert [(k["kpi"], k["robot"], k["unit"], k["n"]) for k in summary["kpis"]] == [
        (n, r, u, len(v)) for (n, r, u), v in sorted(values.items())
    ]
    for k in summary["kpis"]:
        v = values[(k["kpi"], k["robot"], k["unit"])]
        assert k["mean"] == pytest.approx(np.mean(v), rel=1e-12, abs=1e-300)
        assert k["max"] == max(v)

    walls = np.array([w for w, _ in timings.values()])
    assert summary["timing"]["case_wall_s_total"] == pytest.approx(walls.sum(), rel=1e-12)
    assert summary["timing"]["case_wall_s_mean"] == pytest.approx(walls.mean(), rel=1e-12)
    assert summary["timing"]["workers"] == len({w for _, w in timings.values()})
    assert len(summary["kpis"]) > 5  # the reference run has real rows
    assert len(summary["properties"]) > 5
