"""The ``moveit`` controller against the emulated move_group, a separate process in the test's own ROS domain:
a campaign of 12 cases near the heart, the heart in the planning scene refusing the insertions that cross it, and
the bad inputs (no move_group, a planning failure, a Cartesian path followed to 0.6) each a stored refusal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from cosim_validation.common.config import load_config
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.common.record import Stage
from cosim_validation.controllers import InsertionSetup
from cosim_validation.controllers.planning import PlanningError
from cosim_validation.controllers.plugin_controllers import release
from cosim_validation.runs.campaign.campaign_runner import CampaignRequest, run_campaign
from cosim_validation.runs.campaign.results_db import ResultsDB
from test.runs.campaign.run_fixtures import CONFIG

pytestmark = pytest.mark.usefixtures("ros_domain")


def write_config(folder: Path, **moveit: Any) -> Path:
    """The shipped case study with ``controllers.default: moveit`` and ``controllers.moveit`` = ``moveit``."""
    folder.mkdir(parents=True, exist_ok=True)
    tree = yaml.safe_load(CONFIG.read_text())
    tree["controllers"]["default"] = "moveit"
    tree["controllers"]["moveit"] = {"service_timeout_s": 60.0, "call_timeout_s": 120.0} | moveit
    tree["robot"]["urdf"] = str((CONFIG.parent / tree["robot"]["urdf"]).resolve())
    (folder / "properties.yaml").write_text((CONFIG.parent / "properties.yaml").read_text())
    path = folder / "case.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


def campaign(config: Path, suite: Path, out: Path) -> list[Any]:
    """Run the suite on the virtual robot in this process; the stored case rows."""
    run_campaign(CampaignRequest(config, (suite,), out, backends=("virtual",), workers=1), progress_stream=None)
    with ResultsDB.open(out / "results.sqlite") as db:
        return list(db.cases())


def test_a_campaign_planned_by_move_group(move_group: Path, suites: tuple[Path, Path], tmp_path: Path) -> None:
    """Every case of the random suite near the heart is stored: planned by move_group and executed, or refused
    because the heart stops the Cartesian path; no executed plan puts the needle into the heart."""
    rows = campaign(write_config(tmp_path), suites[1], tmp_path / "run")
    assert len(rows) == 12
    assert {r.controller for r in rows} == {"moveit"}
    completed = [r for r in rows if r.outcome == "completed"]
    refused = [r for r in rows if r.outcome == "refused"]
    assert completed, [r.message for r in rows]
    assert len(completed) + len(refused) == 12, [(r.outcome, r.message) for r in rows]
    for row in refused:
        assert row.message.startswith("cartesian_fraction: compute_cartesian_path followed only a fraction"), row
    setup = InsertionSetup.from_config(load_config(CONFIG))
    straight = setup.controller("straight")
    moveit = InsertionSetup.from_config(load_config(tmp_path / "case.yaml")).controller()
    crossing = []
    try:
        for row in rows:
            source = np.array([row.source_x_m, row.source_y_m, row.source_z_m])
            target = np.array([row.target_x_m, row.target_y_m, row.target_z_m])
            through_heart = setup.planner.needle_clearance(straight.plan_case(source, target).q).min() == 0.0
            crossing.append(through_heart)
            if through_heart:  # every case whose insertion line crosses the heart is refused (a planned one may not)
                assert row.outcome == "refused", row
            if row.outcome == "completed":  # planned again: out of the heart, the tip at the target
                plan = moveit.plan_case(source, target)
                assert setup.planner.needle_clearance(plan.q).min() > 0.0
                injected = plan.q[plan.stage_indices(Stage.INJECTION)[-1]]
                np.testing.assert_allclose(setup.robot.kinematics.tip_pose(injected).pos_m, target, atol=1e-4)
    finally:
        release(moveit)  # its node leaves the test's domain with the test
    assert any(crossing)


def test_no_move_group_is_one_error_before_the_run(suites: tuple[Path, Path], tmp_path: Path) -> None:
    """Without move_group the case study does not load: one error naming the key and the service the controller
    waited for, before the run directory exists (not a refusal in every case)."""
    from cosim_validation.common.exceptions import ConfigError

    config = write_config(tmp_path, service_timeout_s=1.0)
    with pytest.raises(ConfigError) as error:
        campaign(config, suites[0], tmp_path / "run")
    assert str(error.value).startswith(
        f"{config}: controllers.moveit: move_group is not there: service /plan_kinematic_path not available within 1 s"
    ), str(error.value)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("move_group", [{"plan_error": "PLANNING_FAILED"}], indirect=True)
def test_a_planning_failure_is_a_refusal_naming_the_code(move_group: Path, tmp_path: Path) -> None:
    controller = InsertionSetup.from_config(load_config(write_config(tmp_path))).controller()
    setup = InsertionSetup.from_config(load_config(CONFIG))
    try:
        with pytest.raises(PlanningError) as refused:
            controller.plan_case(setup.planning.default_source_m, np.array([0.44, 0.02, 0.03]))
    finally:
        release(controller)  # its node leaves the test's domain with the test
    assert refused.value.reason == "planning_failed"
    assert str(refused.value) == "move_group could not plan the initialization: PLANNING_FAILED"


@pytest.mark.parametrize("move_group", [{"cartesian_fraction": 0.6}], indirect=True)
def test_a_partial_cartesian_path_is_a_refusal_naming_the_fraction(
    move_group: Path, suites: tuple[Path, Path], tmp_path: Path
) -> None:
    rows = campaign(write_config(tmp_path), suites[0], tmp_path / "run")
    assert len(rows) == 8
    for row in rows:
        assert row.outcome == "refused"
        assert "compute_cartesian_path followed only a fraction 0.6 of the approach" in row.message, row.message


def test_bad_settings_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"controllers\.moveit\.max_step_m"):
        InsertionSetup.from_config(load_config(write_config(tmp_path, max_step_m=-0.001)))
    with pytest.raises(
        ConfigError, match=r"controllers\.moveit\.pipeline: unknown key; expected one of: call_timeout_s"
    ):
        InsertionSetup.from_config(load_config(write_config(tmp_path, pipeline="ompl")))
