"""Controllers under test: ``straight`` enters the heart behind which a target lies, ``guarded`` never comes close."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.controllers import GuardedController, InsertionSetup, fibonacci_directions
from cosim_validation.controllers.planning import PlanningError

N_BEHIND = 8  # targets behind the heart planned per controller (spread over the set)


@pytest.fixture(scope="module")
def targets(behind_heart: np.ndarray) -> np.ndarray:
    assert len(behind_heart) >= N_BEHIND
    return behind_heart[np.linspace(0, len(behind_heart) - 1, N_BEHIND).astype(int)]


def test_straight_enters_the_heart(insertion_setup: InsertionSetup, targets: np.ndarray) -> None:
    controller = insertion_setup.controller("straight")
    source = insertion_setup.planning.default_source_m
    for target in targets:
        plan = controller.plan_case(source, target)
        # it follows the source-target line whatever lies on it
        np.testing.assert_allclose(plan.line.axis, (target - source) / np.linalg.norm(target - source), atol=1e-12)
        assert insertion_setup.planner.needle_clearance(plan.q).min() == 0.0


def test_guarded_keeps_the_clearance_or_refuses(insertion_setup: InsertionSetup, targets: np.ndarray) -> None:
    controller = insertion_setup.controller("guarded")
    clearance = insertion_setup.controllers.guarded.clearance_m
    source = insertion_setup.planning.default_source_m
    planned, refusals = 0, []
    for target in targets:
        try:
            plan = controller.plan_case(source, target)
        except PlanningError as exc:
            refusals.append(exc)
            continue
        planned += 1
        # exact distance of every planned needle position (no bounding-sphere shortcut)
        assert insertion_setup.planner.needle_clearance(plan.q).min() >= clearance
        assert np.linalg.norm(insertion_setup.robot.kinematics.tip_pose(plan.q[-1]).pos_m - source) < 1e-6
    assert planned >= N_BEHIND // 2  # the guarded controller reaches most of them another way
    assert all(exc.reason == "clearance" and "candidates" in str(exc) for exc in refusals)


def test_guarded_keeps_the_direct_line_when_it_is_clear(insertion_setup: InsertionSetup) -> None:
    source = insertion_setup.planning.default_source_m
    target = np.array([0.42, -0.05, 0.08])
    plan = insertion_setup.controller("guarded").plan_case(source, target)
    np.testing.assert_allclose(plan.line.axis, (target - source) / np.linalg.norm(target - source), atol=1e-12)


def test_guarded_refuses_a_target_next_to_the_heart(insertion_setup: InsertionSetup) -> None:
    """A lung target within the clearance of the heart cannot be reached by any needle that keeps it."""
    heart = insertion_setup.world.forbidden["heart"]
    lung = insertion_setup.world.targets["left_lung"]
    rng = np.random.default_rng(5)
    points = rng.uniform(*insertion_setup.scene.model("left_lung").bounds_m, size=(20000, 3))
    points = points[np.asarray(lung.contains(points))]
    near = points[np.asarray(heart.distance(points)) < 0.5 * insertion_setup.controllers.guarded.clearance_m]
    assert len(near) > 0
    with pytest.raises(PlanningError, match="refused: no insertion direction") as info:
        insertion_setup.controller("guarded").plan_case(insertion_setup.planning.default_source_m, near[0])
    assert info.value.reason == "clearance"
    assert "needle path within the clearance of a forbidden region" in str(info.value)


def test_candidates_start_with_the_direct_direction(insertion_setup: InsertionSetup) -> None:
    controller = insertion_setup.controller("guarded")
    assert isinstance(controller, GuardedController)
    source, target = np.array([0.45, 0.0, 0.1]), np.array([0.45, 0.0, -0.1])
    axes = controller.candidates(source, target)
    np.testing.assert_allclose(axes[0], [0.0, 0.0, -1.0])
    deviation = np.arccos(np.clip(axes[1:] @ axes[0], -1, 1))
    assert np.all(np.diff(deviation) >= 0)
    assert deviation.max() <= insertion_setup.controllers.guarded.max_deviation_rad


def test_fibonacci_directions_are_unit_and_spread() -> None:
    d = fibonacci_directions(500)
    np.testing.assert_allclose(np.linalg.norm(d, axis=1), 1.0)
    np.testing.assert_allclose(d.mean(axis=0), 0.0, atol=0.01)
    np.testing.assert_array_equal(d, fibonacci_directions(500))


def test_unknown_controller(insertion_setup: InsertionSetup) -> None:
    with pytest.raises(InputError, match="unknown controller 'wild'; expected one of: straight, guarded"):
        insertion_setup.controller("wild")
