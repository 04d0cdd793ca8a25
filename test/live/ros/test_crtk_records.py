"""A recorded run imported as a trajectory record for the monitor (issue 17 item 5): ``cosim export-crtk`` of a
campaign's case, ``cosim import-crtk ... -o X.npz``, then ``cosim check`` gives the case's own verdicts for the
properties that need no plan (obstacles, self-collision; with ``--expected`` the plan-following ones too) and
UNKNOWN, with the reason, for those that need the stages, the target or the ground-truth tip."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.config import load_config, package_root
from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.robots.model import RobotConfig
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from cosim_validation.runs.campaign.results_db import ResultsDB

CONFIG = package_root() / "config" / "needle_insertion.yaml"
RECORDED = package_root() / "config" / "recorded_properties.yaml"
#: Properties of config/properties.yaml a recording decides alone: the scene's and the robot's own.
PLAN_FREE = ("joints_clear_of_obstacles", "no_self_collision", "needle_outside_forbidden_regions")
#: ... and with the plan given (cosim check --expected).
WITH_PLAN = ("tip_follows_plan", "joints_follow_plan")


@pytest.fixture(scope="module")
def case(reference: CampaignOutcome, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A completed case of the reference campaign: its records as files, and the bag and CSV of its physical
    robot imported back as records."""
    folder = tmp_path_factory.mktemp("crtk_records")
    kinematics = RobotConfig.from_config(load_config(CONFIG)["robot"]).kinematics
    with ResultsDB.open(reference.out_dir / "results.sqlite") as db:
        test_id = next(c.test_id for c in db.cases() if c.outcome == "completed")
        records = {role: db.trajectory(test_id, role, kinematics) for role in ("physical", "expected")}
    paths = {role: folder / f"{role}.npz" for role in records}
    for role, record in records.items():
        record.save(paths[role])
    for suffix in ("mcap", "csv"):
        exported = folder / f"run.{suffix}"
        assert main(["export-crtk", str(reference.out_dir), test_id, "-o", str(exported)]) == 0
        paths[suffix] = folder / f"from_{suffix}.npz"
        assert main(["import-crtk", str(exported), "--config", str(CONFIG), "-o", str(paths[suffix])]) == 0
    return {"records": records, "paths": paths}


def _check(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, dict[str, Any]]:
    """``cosim check --json`` of the first record given: its verdicts by property."""
    capsys.readouterr()
    assert main(["check", *argv, "--config", str(CONFIG), "--json"]) in (0, 2)
    reports = json.loads(capsys.readouterr().out)
    return {v["property"]: v for v in reports[0]["verdicts"]}


@pytest.mark.parametrize("suffix", ["mcap", "csv"])
def test_the_imported_record_holds_the_recording_and_nothing_it_does_not_know(
    case: dict[str, Any], suffix: str
) -> None:
    original: TrajectoryRecord = case["records"]["physical"]
    got = TrajectoryRecord.load(case["paths"][suffix])
    assert got.robot is RobotRole.PHYSICAL
    assert got.test_id == "run"
    assert not got.has_stages
    assert np.all(got.stage == int(Stage.NONE))
    np.testing.assert_array_equal(got.q_setpoint, original.q_setpoint)
    np.testing.assert_array_equal(got.q_measured, original.q_measured)
    np.testing.assert_allclose(got.t_s, original.t_s - original.t_s[0], atol=1e-9, rtol=0)
    np.testing.assert_array_equal(got.tip_pos_m, original.tip_pos_m)  # the same forward kinematics
    np.testing.assert_array_equal(got.joint_pos_m, original.joint_pos_m)
    assert got.has_marker
    assert np.array_equal(np.isfinite(got.marker_error_m), np.isfinite(original.marker_error_m))
    seen = np.isfinite(original.marker_error_m)
    np.testing.assert_array_equal(got.marker_pos_m[seen], original.marker_pos_m[seen])
    np.testing.assert_array_equal(got.marker_error_m[seen], original.marker_error_m[seen])
    assert not got.has_actual_tip  # the tracker's frame is not base_link: no ground truth of the tip


def _num(value: float | None) -> float:
    """A JSON number (NaN travels as null)."""
    return math.nan if value is None else float(value)


def _same(got: dict[str, Any], want: dict[str, Any]) -> None:
    assert got["status"] == want["status"], (got, want)
    margin, margin_want = _num(got["margin"]), _num(want["margin"])
    both_nan = math.isnan(margin) and math.isnan(margin_want)
    assert both_nan or math.isclose(margin, margin_want, rel_tol=1e-9, abs_tol=1e-12), (got, want)
    first, first_want = _num(got["first_violation_time_s"]), _num(want["first_violation_time_s"])
    assert (math.isnan(first) and math.isnan(first_want)) or abs(first - first_want) < 1e-6


def test_cosim_check_decides_the_plan_free_properties_as_on_the_case_and_says_unknown_for_the_rest(
    case: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    paths = case["paths"]
    want = _check(capsys, str(paths["physical"]), str(paths["expected"]))
    got = _check(capsys, str(paths["mcap"]))
    assert set(got) == set(want)
    assert {v["status"] for v in want.values()} - {"unknown"}  # the case itself decides them all
    for name in PLAN_FREE:
        _same(got[name], want[name])
    for name in set(got) - set(PLAN_FREE):
        assert got[name]["status"] == "unknown", got[name]
        assert got[name]["reason"], got[name]
    reasons = {name: got[name]["reason"] for name in got}
    assert reasons["tip_follows_plan"] == "needs the expected trajectory (none given)"
    assert reasons["needle_orientation_constant_during_injection"].startswith("needs the case's stages")
    assert reasons["machine:stage_order"].startswith("needs the stages of a case")

    planned = _check(capsys, str(paths["csv"]), "--expected", str(paths["expected"]))
    for name in (*PLAN_FREE, *WITH_PLAN):
        _same(planned[name], want[name])
    assert planned["actual_tip_follows_plan"]["reason"] == "needs the actual tip pose (the trace has none)"
    assert planned["needle_orientation_constant_during_injection"]["status"] == "unknown"


def test_the_recorded_property_set_checks_how_the_joints_follow_their_setpoints(
    case: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    original: TrajectoryRecord = case["records"]["physical"]
    got = _check(capsys, str(case["paths"]["mcap"]), "--properties", str(RECORDED))
    assert set(got) == {*PLAN_FREE, "joints_follow_setpoint", *WITH_PLAN}
    bound = load_config(RECORDED)["constants"]["setpoint_tracking_bound"].to_float()
    gap = np.abs(original.q_measured - original.q_setpoint)
    verdict = got["joints_follow_setpoint"]
    assert math.isclose(_num(verdict["margin"]), bound - float(gap.max()), rel_tol=1e-9)
    assert verdict["status"] == ("holds" if gap.max() < bound else "violated")
    if gap.max() >= bound:
        first = int(np.argmax((gap >= bound).any(axis=1)))
        assert abs(_num(verdict["first_violation_time_s"]) - (original.t_s[first] - original.t_s[0])) < 1e-6
    assert got["tip_follows_plan"]["status"] == got["joints_follow_plan"]["status"] == "unknown"
