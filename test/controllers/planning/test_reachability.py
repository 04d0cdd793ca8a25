"""IK reach on a grid suite of the left lung: at least 99 % of targets within 0.1 mm in the expected plan."""

from __future__ import annotations

from collections import Counter

import numpy as np

from cosim_validation.common.config import load_config
from cosim_validation.common.record import Stage
from cosim_validation.controllers import InsertionSetup
from cosim_validation.controllers.planning import PlanningError
from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config
from test.controllers.planning.setup_fixtures import CONFIG_PATH


def test_straight_reaches_99_percent_of_a_grid_suite(insertion_setup: InsertionSetup) -> None:
    """The coverage generator's grid suite (20 mm cubes, k = 1, sources from testgen.source_region)."""
    root = load_config(CONFIG_PATH)
    request = TestgenRequest("grid", 0.02, 1, seed=0)
    suite, _ = generate_suite(insertion_setup.scene, load_testgen_config(root["testgen"]), request)
    controller = insertion_setup.controller("straight")
    kin = insertion_setup.robot.kinematics
    reached, refused = 0, Counter[str]()
    errors = []
    for case in suite:
        try:
            plan = controller.plan_case(case.source_m, case.target_m)
        except PlanningError as exc:
            refused[exc.reason or "NO REASON"] += 1
            continue
        tip = kin.tip_pose(plan.q[plan.stage_indices(Stage.INJECTION)[-1]]).pos_m
        errors.append(float(np.linalg.norm(tip - case.target_m)))
        reached += errors[-1] <= 1e-4
    assert len(suite) > 500
    rate = reached / len(suite)
    assert rate >= 0.99, f"reached {reached} of {len(suite)}; refused: {dict(refused)}"
    assert max(errors) <= 1e-4
    assert "NO REASON" not in refused
