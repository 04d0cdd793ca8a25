"""KPIs against hand-computed values, and their definitions' errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.monitor.properties import MonitorContext, PropertyError, PropertySet
from cosim_validation.monitor.properties.kpis.specs import KpiSpec
from cosim_validation.monitor.properties.offline.evaluation import evaluate_run
from test.monitor.properties.traces import JOINTS, make_record

# tip along x: approach 0 -> 1, injection 1 -> 3, extraction 3 -> 1 (offset 0.1 in y), reset 1 -> 0
X = np.array([0.0, 1.0, 2.0, 3.0, 2.0, 1.0, 0.0])
Y = np.array([0.0, 0.0, 0.0, 0.0, 0.1, 0.1, 0.0])
STAGE = np.array([2, 2, 3, 3, 4, 4, 5])
T = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7])


def run(kpis: tuple[KpiSpec, ...], **kwargs: object):  # type: ignore[no-untyped-def]
    tip = np.stack([X, Y, np.zeros(7)], axis=1)
    q = np.zeros((7, 7))
    q[:, 2] = [0.0, 0.0, 0.01, 0.0, 0.0, -0.03, 0.0]
    record = make_record(tip, STAGE, t_s=T, q=q)
    plan = make_record(np.stack([X, np.zeros(7), np.zeros(7)], axis=1), STAGE, t_s=T, robot=RobotRole.EXPECTED)
    context = MonitorContext(JOINTS, 0.1, target_m=kwargs.get("target", np.array([3.0, 0.0, 0.5])))  # type: ignore[arg-type]
    result = evaluate_run(PropertySet((), kpis), record, context, plan)
    return {(k.name, k.stage): k for k in result.kpis}


def test_hand_computed_kpis() -> None:
    kpis = run(
        (
            KpiSpec("targeting", "targeting_error"),
            KpiSpec("p2t", "deviation_p2t_max"),
            KpiSpec("frechet", "deviation_frechet"),
            KpiSpec("joints", "joint_deviation_max"),
            KpiSpec("align", "stage_frechet", stages=(Stage.INJECTION, Stage.EXTRACTION)),
            KpiSpec("duration", "duration"),
        )
    )
    assert kpis["targeting", Stage.NONE].value == pytest.approx(0.5)  # tip (3, 0, 0) at the last injection sample
    assert kpis["p2t", Stage.NONE].value == pytest.approx(0.1)
    assert kpis["frechet", Stage.NONE].value == pytest.approx(0.1)
    assert kpis["joints", Stage.NONE].value == pytest.approx(0.03)
    assert kpis["joints", Stage.NONE].unit == "rad"
    # injection motion 1 -> 2 -> 3 (from the last approach sample); extraction 3 -> 2' -> 1' reversed
    assert kpis["align", Stage.NONE].value == pytest.approx(0.1)
    assert kpis["duration", Stage.NONE].value == pytest.approx(0.7)
    assert kpis["duration", Stage.APPROACH].value == pytest.approx(0.2)
    assert kpis["duration", Stage.INJECTION].value == pytest.approx(0.2)
    assert kpis["duration", Stage.RESET].value == pytest.approx(0.0)  # one sample, the last
    assert math.isnan(kpis["duration", Stage.INITIALIZATION].value)
    assert kpis["duration", Stage.INITIALIZATION].reason == "the initialization stage never occurred"


def test_target_from_the_plan_and_missing_data() -> None:
    kpis = run((KpiSpec("targeting", "targeting_error"), KpiSpec("actual", "deviation_p2t_max", "actual_tip")))
    assert kpis["targeting", Stage.NONE].value == pytest.approx(0.5)
    assert math.isnan(kpis["actual", Stage.NONE].value)
    assert kpis["actual", Stage.NONE].reason == "no finite actual_tip sample"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("kpis:\n  a: {kind: nope}\n", r"kpis\.a\.kind: expected one of"),
        ("kpis:\n  a: {kind: duration, signal: elbow}\n", r"kpis\.a\.signal: expected one of"),
        ("kpis:\n  a: {kind: stage_frechet, stages: [injection]}\n", r"kpis\.a: stage_frechet needs two stages"),
        ("kpis:\n  a: {kind: stage_frechet, stages: [injection, nope]}\n", r"kpis\.a\.stages\[1\]: expected one of"),
        ("kpis:\n  a: {kind: duration, extra: 1}\n", r"kpis\.a\.extra: unknown key"),
    ],
)
def test_bad_kpi_definitions(text: str, message: str) -> None:
    with pytest.raises(Exception, match=message):
        PropertySet.parse("properties: {}\n" + text, "<t>")
    with pytest.raises(PropertyError, match="unknown KPI kind"):
        KpiSpec("a", "nope")
