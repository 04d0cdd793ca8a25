"""A path given only as waypoints (MoveIt's) is timed within the joint limits and stays on the path."""

from __future__ import annotations

import numpy as np

from cosim_validation.common.config import load_config
from cosim_validation.common.record import Stage
from cosim_validation.controllers import InsertionSetup
from cosim_validation.controllers.planning.joint_motion import limit_ratios
from cosim_validation.controllers.planning.path_timing import time_joint_path, time_tip_path
from test.runs.campaign.run_fixtures import CONFIG


def test_a_joint_path_is_timed_within_the_limits_and_stops_at_its_corner() -> None:
    setup = InsertionSetup.from_config(load_config(CONFIG))
    limits, dt = setup.planner.joint_limits, setup.planning.dt_s
    home = setup.robot.home_q
    corner = home + 0.3
    dense = np.linspace(home, corner, 20)  # a dense straight piece, then a turn of 90 deg in joint space
    turn = corner + np.outer(np.linspace(0.0, 1.0, 10)[1:], np.r_[0.4, -0.4, 0, 0, 0, 0, 0])
    path = np.vstack((dense, dense[-1:], turn))  # a repeated state too
    q = time_joint_path(path, limits, dt)
    np.testing.assert_array_equal(q[0], home)
    np.testing.assert_array_equal(q[-1], path[-1])
    velocity, acceleration = limit_ratios(q, limits, dt)
    assert velocity <= 1.0
    assert acceleration <= 1.0 + 1e-9
    at_corner = np.flatnonzero(np.all(np.isclose(q, corner, atol=1e-12), axis=1))
    assert at_corner.size >= 1  # it passes the corner exactly (rest to rest on each side)
    k = at_corner[0]
    np.testing.assert_allclose(q[k - 1], q[k], atol=0.02)  # ... slowly: at rest there
    first_leg = q[: k + 1] - home  # the first leg stays on the straight joint segment
    direction = (corner - home) / np.linalg.norm(corner - home)
    off = first_leg - np.outer(first_leg @ direction, direction)
    assert np.abs(off).max() < 1e-9


def test_a_cartesian_path_is_timed_by_its_tip_limits() -> None:
    setup = InsertionSetup.from_config(load_config(CONFIG))
    plan = setup.controller("straight").plan_case(setup.planning.default_source_m, np.array([0.44, 0.02, 0.03]))
    injection = plan.q[plan.stage_indices(Stage.INJECTION)]
    path = injection[::4]  # only a path: every 4th state, no times
    tips = setup.robot.kinematics.tip_poses(path)[0]
    q = time_tip_path(path, tips, setup.planning.injection, setup.planner.joint_limits, setup.planning.dt_s)
    np.testing.assert_array_equal(q[0], path[0])
    np.testing.assert_array_equal(q[-1], path[-1])
    speed = np.linalg.norm(np.diff(setup.robot.kinematics.tip_poses(q)[0], axis=0), axis=1) / setup.planning.dt_s
    assert speed.max() <= setup.planning.injection.velocity_m_s * 1.001
    assert abs(len(q) - len(injection)) <= 2  # the built-in planner's injection takes as long
