"""Issue 15, item 2: a KPI over missing samples is unknown, with the reason, never a number over a gap.

The records are real: the expected plan and the virtual and physical runs of a case of the reference campaign
(test/runs/campaign/run_fixtures.py), with ten tracker samples set to NaN as in the issue.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim_validation.common.config import load_config, resolve_resource
from cosim_validation.common.record import Stage, TrajectoryRecord
from cosim_validation.monitor.properties import Kpi, MonitorContext, PropertySet, Status, Verdict
from cosim_validation.monitor.properties.offline.evaluation import evaluate_run
from cosim_validation.robots.model import RobotConfig
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from cosim_validation.runs.campaign.results_db import ResultsDB
from test.monitor.properties.traces import edited

GAP_KPIS = ("actual_deviation_frechet", "actual_deviation_p2t_max")


def _records(reference: CampaignOutcome, robot: str) -> tuple[TrajectoryRecord, TrajectoryRecord]:
    """A completed case's ``robot`` record and its plan; the case's target in the plan's meta."""
    config = load_config(resolve_resource("config/needle_insertion.yaml"))
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    with ResultsDB.open(reference.out_dir / "results.sqlite") as db:
        case = next(c for c in db.cases() if c.outcome == "completed")
        plan = db.trajectory(case.test_id, "expected", kinematics)
        target = [case.target_x_m, case.target_y_m, case.target_z_m]
        return db.trajectory(case.test_id, robot, kinematics), edited(plan, meta={"target_m": target})


def _evaluate(record: TrajectoryRecord, plan: TrajectoryRecord) -> tuple[dict[str, Kpi], dict[str, Verdict]]:
    properties = PropertySet.load(resolve_resource("config/properties.yaml"))
    target = np.asarray(plan.meta["target_m"])
    context = MonitorContext(record.joint_names, record.needle_length_m, target_m=target)
    result = evaluate_run(properties, record, context, plan)
    kpis = {k.name: k for k in result.kpis if k.stage is Stage.NONE}
    return kpis, {v.property: v for v in result.verdicts}


@pytest.mark.parametrize("robot", ["virtual", "physical"])
def test_tracker_gap_makes_the_actual_tip_kpis_unknown(reference: CampaignOutcome, robot: str) -> None:
    record, plan = _records(reference, robot)
    whole, whole_verdicts = _evaluate(record, plan)
    for name in GAP_KPIS:
        assert math.isfinite(whole[name].value), name  # without the gap: a number

    actual = np.array(record.actual_tip_pos_m)
    actual[50:60] = np.nan
    kpis, verdicts = _evaluate(edited(record, actual_tip_pos_m=actual), plan)
    # a property violated at a known sample stays violated; one that held cannot hold over the gap
    before = whole_verdicts["actual_tip_follows_plan"].status
    assert verdicts["actual_tip_follows_plan"].status is (Status.UNKNOWN if before is Status.HOLDS else before)
    for name in GAP_KPIS:
        assert math.isnan(kpis[name].value), f"{name} = {kpis[name].value} over a gap"
        assert kpis[name].reason == f"10 of {record.n_samples} actual_tip samples are NaN (no data there)"
    # the forward-kinematics tip has no gap: its KPIs keep their values
    assert kpis["deviation_frechet"].value == whole["deviation_frechet"].value


def test_targeting_error_needs_the_last_injection_sample(reference: CampaignOutcome) -> None:
    record, plan = _records(reference, "physical")
    last = int(record.stage_indices(Stage.INJECTION)[-1])
    actual = np.array(record.actual_tip_pos_m)
    actual[last] = np.nan
    kpis, _ = _evaluate(edited(record, actual_tip_pos_m=actual), plan)
    assert math.isnan(kpis["actual_targeting_error"].value)
    assert kpis["actual_targeting_error"].reason == "the last injection sample has no actual_tip data (NaN)"


def _prefix(record: TrajectoryRecord, n: int) -> TrajectoryRecord:
    """The first ``n`` samples of ``record`` (a case stopped there)."""
    return record.head(n)


def test_a_run_stopped_during_the_injection_has_no_targeting_error(reference: CampaignOutcome) -> None:
    """An aborted case (the state validator stopped it by the heart): the needle never reached its end point."""
    record, plan = _records(reference, "physical")
    cut = int(np.flatnonzero(plan.stage == int(Stage.INJECTION))[5]) + 1
    kpis, verdicts = _evaluate(_prefix(record, cut), _prefix(plan, cut))
    for name in ("targeting_error", "actual_targeting_error"):
        assert math.isnan(kpis[name].value)
        assert "ends during the injection" in kpis[name].reason
    assert verdicts["targeting_error_bound"].status is Status.UNKNOWN
    whole, _ = _evaluate(record, plan)
    assert not math.isnan(whole["targeting_error"].value)  # the complete run has one
