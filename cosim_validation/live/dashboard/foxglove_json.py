"""The bridge's JSON channels: schemas (JSON Schema, as Foxglove reads them) and the messages."""

from __future__ import annotations

import math
from typing import Any

from cosim_validation.live.dashboard.case_view import CaseView
from cosim_validation.live.dashboard.deviation_stream import DeviationPoint

NS_PER_S = 1_000_000_000

DEVIATION_SCHEMA: dict[str, Any] = {
    "title": "cosim.TipDeviation",
    "type": "object",
    "properties": {
        "test_id": {"type": "string"},
        "robot": {"type": "string"},
        "stage": {"type": "string"},
        "stamp": {"type": "object", "properties": {"sec": {"type": "integer"}, "nsec": {"type": "integer"}}},
        "deviation_mm": {"type": "number", "description": "actual tip to expected tip of the same stamp [mm]"},
    },
}

VERDICT_ROW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "property": {"type": "string"},
        "robot": {"type": "string"},
        "verdict": {"type": "string"},
        "margin": {"type": "string"},
        "first_violation_time_s": {"type": ["number", "null"]},
        "first_violation_stage": {"type": "string"},
        "final": {"type": "boolean"},
    },
}

VERDICTS_SCHEMA: dict[str, Any] = {
    "title": "cosim.CaseVerdicts",
    "type": "object",
    "properties": {
        "test_id": {"type": "string"},
        "outcome": {"type": "string"},
        "rows": {"type": "array", "items": VERDICT_ROW_SCHEMA},
    },
}


def deviation_json(point: DeviationPoint) -> dict[str, Any]:
    """A :data:`DEVIATION_SCHEMA` message.

    Args:
        point: The deviation of one robot's tip at one stamp (its ``deviation_m`` in [m] is sent as ``deviation_mm``).
    """
    return {
        "test_id": point.test_id,
        "robot": point.robot.label,
        "stage": point.stage.label,
        "stamp": {"sec": point.t_ns // NS_PER_S, "nsec": point.t_ns % NS_PER_S},
        "deviation_mm": point.deviation_m * 1000.0,
    }


def verdicts_json(case: CaseView) -> dict[str, Any]:
    """A :data:`VERDICTS_SCHEMA` message: the case's verdicts, violated first.

    Args:
        case: The case whose verdicts are sent.
    """
    from cosim_validation.live.dashboard.view_text import margin_text

    rows = [
        {
            "property": v.property,
            "robot": v.robot.label,
            "verdict": {0: "unknown", 1: "holds", 2: "violated"}.get(v.status, str(v.status)),
            "margin": margin_text(v.margin, v.unit),
            "first_violation_time_s": None if math.isnan(v.first_violation_time_s) else v.first_violation_time_s,
            "first_violation_stage": v.first_violation_stage.label if v.status == 2 else "",
            "final": v.final,
        }
        for v in case.verdict_rows()
    ]
    return {"test_id": case.test_id, "outcome": case.outcome, "rows": rows}
