"""The monitor's offline verdicts and KPIs on every robot of one case, as database rows."""

from __future__ import annotations

from collections.abc import Sequence

from cosim_validation.campaign.result_rows import kpi_row, verdict_row
from cosim_validation.campaign.results_db import KpiRow, VerdictRow
from cosim_validation.properties import MonitorContext, PropertySet
from cosim_validation.properties.machines import run_machine, shipped
from cosim_validation.properties.offline import evaluate_run
from cosim_validation.record import RobotRole, TrajectoryRecord


def monitor_case(
    properties: PropertySet, records: Sequence[TrajectoryRecord], context: MonitorContext, test_id: str
) -> tuple[tuple[VerdictRow, ...], tuple[KpiRow, ...]]:
    """Every property, KPI and behaviour machine of ``properties`` on every robot's record.

    Args:
        properties: The property set (its KPIs and machines included).
        records: The expected record (the plan) first if present, then one per executed robot.
        context: The case's monitor context (obstacles, target).
        test_id: Id of the case, for the rows.

    Returns:
        Verdict rows (machines named ``machine:<name>``) and KPI rows, robot by robot in record order.
    """
    expected = next((r for r in records if r.robot is RobotRole.EXPECTED), None)
    verdicts: list[VerdictRow] = []
    kpis: list[KpiRow] = []
    target = context.target_m
    for record in records:
        result = evaluate_run(properties, record, context, expected)
        verdicts += [verdict_row(test_id, v) for v in result.verdicts]
        verdicts += [
            verdict_row(test_id, run_machine(shipped(m), record, target).to_verdict()) for m in properties.machines
        ]
        kpis += [kpi_row(test_id, k) for k in result.kpis]
    return tuple(verdicts), tuple(kpis)
