"""Collision checks of joint configurations against the skin, and OMPL around a blocked joint move."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from cosim_validation.controllers import InsertionSetup
from cosim_validation.controllers.planning import OmplSettings, densify
from cosim_validation.controllers.planning.joint_space_planner import plan_joint_path


def test_needle_in_the_body_and_arm_in_the_body_are_found(insertion_setup: InsertionSetup) -> None:
    checker = insertion_setup.planner.checker
    ik = insertion_setup.planner.ik
    inside = ik.solve([0.45, 0.0, 0.10], [0.0, 0.0, -1.0])  # tip 9 cm under the skin, holder outside
    assert inside.converged
    assert checker.needle_problem(inside.q[None, :]) is not None
    assert checker.arm_problem(inside.q[None, :]) is None
    # the tip 3 cm deeper than the deepest allowed insertion: the mount is 3.7 cm above the skin, closer than the
    # holder radius 20 mm + clearance 10 mm + sampling slack 10 mm
    deep = ik.solve([0.45, 0.0, -0.075], [0.0, 0.0, -1.0])
    assert deep.converged
    assert checker.arm_problem(deep.q[None, :]) is not None
    assert checker.valid(insertion_setup.robot.home_q)


def test_densify_limits_the_joint_step() -> None:
    q = np.array([[0.0, 0.0], [1.0, -0.3], [1.0, -0.3]])
    dense = densify(q, 0.02)
    assert np.max(np.abs(np.diff(dense, axis=0))) <= 0.02 + 1e-12
    np.testing.assert_array_equal(dense[-1], q[-1])


def test_ompl_finds_a_path_around_a_blocked_region(insertion_setup: InsertionSetup) -> None:
    robot = insertion_setup.robot
    home = robot.home_q
    goal = home.copy()
    goal[0] += 1.0
    centre = 0.5 * (home + goal)

    def clear_of_ball(radius: float) -> Callable[[np.ndarray], bool]:
        # a ball in joint space around the middle of the straight move
        return lambda q: bool(np.linalg.norm(q - centre) >= radius)

    waypoints = plan_joint_path(
        home, goal, robot.q_lower, robot.q_upper, clear_of_ball(0.3), 0.02, OmplSettings(seed=3)
    )
    np.testing.assert_allclose(waypoints[0], home)
    np.testing.assert_allclose(waypoints[-1], goal)
    assert len(waypoints) > 2  # the straight move is blocked
    # between OMPL's checks (every 0.02 rad) a segment may cut the ball's surface by at most a sagitta
    assert all(clear_of_ball(0.29)(q) for q in densify(waypoints, 0.002))
