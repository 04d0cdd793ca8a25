"""A session and a campaign over the same cases give each case the same outcome, verdicts and KPIs."""

from __future__ import annotations

import math
from pathlib import Path

from cosim_validation.runs.campaign.results_db import ResultsDB

#: verdict margins and KPI values of a session and a campaign may differ by this much (floating-point order)
TOLERANCE = 1e-9


def stored_results(run: Path) -> tuple[dict, dict, dict]:  # type: ignore[type-arg]
    """A run's cases (outcome, message, controller), verdicts (status, margin) and KPI values, by key."""
    with ResultsDB.open(run / "results.sqlite") as db:
        cases = {c.test_id: (c.outcome, c.message, c.controller) for c in db.cases()}
        verdicts = {(v.test_id, v.property, v.robot): (v.status, v.margin) for v in db.verdicts()}
        kpis = {(k.test_id, k.name, k.robot, k.stage): k.value for k in db.kpis()}
    return cases, verdicts, kpis


def _close(a: float | None, b: float | None) -> bool:
    a, b = (math.nan if v is None else float(v) for v in (a, b))
    return (math.isnan(a) and math.isnan(b)) or a == b or abs(a - b) <= TOLERANCE


def assert_same_results(live: Path, batch: Path) -> dict:  # type: ignore[type-arg]
    """Assert that runs ``live`` and ``batch`` stored the same cases, verdicts of every robot and KPIs; the cases."""
    (live_cases, live_verdicts, live_kpis), (batch_cases, batch_verdicts, batch_kpis) = (
        stored_results(run) for run in (live, batch)
    )
    assert live_cases == batch_cases
    assert live_verdicts.keys() == batch_verdicts.keys()
    assert {robot for _, _, robot in live_verdicts} == {"expected", "virtual", "physical"}
    for key, (status, margin) in live_verdicts.items():
        assert status == batch_verdicts[key][0], key
        assert _close(margin, batch_verdicts[key][1]), (key, margin, batch_verdicts[key][1])
    assert live_kpis.keys() == batch_kpis.keys()
    for key, value in live_kpis.items():
        assert _close(value, batch_kpis[key]), (key, value, batch_kpis[key])
    return live_cases
