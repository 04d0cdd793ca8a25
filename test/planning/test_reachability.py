"""IK reach on a grid suite of the left lung: at least 99 % of targets within 0.1 mm in the expected plan."""

from __future__ import annotations

from collections import Counter

import numpy as np

from cosim_validation.controllers import InsertionSetup
from cosim_validation.planning import PlanningError
from cosim_validation.record import Stage


def test_straight_reaches_99_percent_of_the_lung_grid(insertion_setup: InsertionSetup, lung_grid: np.ndarray) -> None:
    controller = insertion_setup.controller("straight")
    kin = insertion_setup.robot.kinematics
    source = insertion_setup.planning.default_source_m
    reached, refused = 0, Counter[str]()
    errors = []
    for target in lung_grid:
        try:
            plan = controller.plan_case(source, target)
        except PlanningError as exc:
            refused[exc.reason or "NO REASON"] += 1
            continue
        tip = kin.tip_pose(plan.q_rad[plan.stage_indices(Stage.INJECTION)[-1]]).pos_m
        errors.append(float(np.linalg.norm(tip - target)))
        reached += errors[-1] <= 1e-4
    assert len(lung_grid) > 300
    rate = reached / len(lung_grid)
    assert rate >= 0.99, f"reached {reached} of {len(lung_grid)}; refused: {dict(refused)}"
    assert max(errors) <= 1e-4
    assert "NO REASON" not in refused
