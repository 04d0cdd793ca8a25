"""Monitor results (:class:`Verdict`, :class:`Kpi`) as rows of the results database, and back."""

from __future__ import annotations

import math

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.monitor.properties import Kpi, Status, Verdict
from cosim_validation.runs.campaign.results_db import KpiRow, VerdictRow


def verdict_row(test_id: str, verdict: Verdict) -> VerdictRow:
    """The database row of one verdict (NaN margins and times become NULL when stored).

    Args:
        test_id: The case's test id, the row's key.
        verdict: The monitor's verdict on one property for one robot.
    """
    return VerdictRow(
        test_id=test_id,
        robot=verdict.robot.label,
        property=verdict.property,
        status=verdict.status.label,
        margin=verdict.margin,
        unit=verdict.unit,
        first_violation_time_s=None if math.isnan(verdict.first_violation_time_s) else verdict.first_violation_time_s,
        first_violation_stage=verdict.first_violation_stage.label,
        reason=verdict.reason,
    )


def kpi_row(test_id: str, kpi: Kpi) -> KpiRow:
    """The database row of one KPI; the whole-case value has stage ``case``.

    Args:
        test_id: The case's test id, the row's key.
        kpi: The monitor's KPI for one robot (and one stage, or the whole case).
    """
    stage = "case" if kpi.stage is Stage.NONE else kpi.stage.label
    return KpiRow(test_id=test_id, robot=kpi.robot.label, name=kpi.name, stage=stage, value=kpi.value, unit=kpi.unit)


def verdict_from_row(row: VerdictRow) -> Verdict:
    """The :class:`Verdict` of a stored row (NULL margin or time become NaN).

    Args:
        row: A row of the ``verdicts`` table.
    """
    return Verdict(
        property=row.property,
        robot=RobotRole.parse(row.robot),
        status=Status[row.status.upper()],
        margin=math.nan if row.margin is None else float(row.margin),
        unit=row.unit,
        first_violation_time_s=math.nan if row.first_violation_time_s is None else float(row.first_violation_time_s),
        first_violation_stage=Stage.parse(row.first_violation_stage),
        reason=row.reason,
    )
