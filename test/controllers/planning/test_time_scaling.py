"""Time scaling: jerk-limited profiles at the sample rate, straight joint moves within the limits."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.controllers.planning import (
    PlanningError,
    joint_line,
    joint_polyline,
    limit_ratios,
    profile_samples,
)
from cosim_validation.robots.model import CommandLimits

LIMITS = CommandLimits(np.full(3, 1.0), np.full(3, 4.0), np.full(3, 100.0))


@pytest.mark.parametrize(("length", "velocity", "dt"), [(0.1, 0.02, 0.1), (1.0, 0.5, 0.01), (2.5, 3.0, 0.1)])
def test_profile_reaches_the_end_within_the_speed(length: float, velocity: float, dt: float) -> None:
    s = profile_samples(length, velocity, 1.0, 10.0, dt)
    assert s[0] == 0.0
    assert s[-1] == length
    assert np.all(np.diff(s) >= 0)
    assert np.max(np.diff(s)) / dt <= velocity * (1 + 1e-6)
    assert len(s) - 1 >= length / velocity / dt - 1e-9  # not faster than the speed limit allows


def test_zero_length_still_takes_one_period() -> None:
    np.testing.assert_array_equal(profile_samples(0.0, 1.0, 1.0, 1.0, 0.1), [0.0, 0.0])


def test_joint_line_is_straight_and_within_limits() -> None:
    q0, q1 = np.zeros(3), np.array([1.0, -0.5, 0.25])
    q = joint_line(q0, q1, LIMITS, 0.1)
    np.testing.assert_array_equal(q[0], q0)
    np.testing.assert_array_equal(q[-1], q1)
    u = (q - q0) / (q1 - q0)
    np.testing.assert_allclose(u, np.repeat(u[:, :1], 3, axis=1), atol=1e-12)  # proportional: a straight line
    velocity, acceleration = limit_ratios(q, LIMITS, 0.1)
    assert velocity <= 1.0 + 1e-9
    assert acceleration <= 1.0 + 1e-9


def test_polyline_stops_at_each_waypoint() -> None:
    waypoints = np.array([[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.5, 0.5, 0.0]])
    q = joint_polyline(waypoints, LIMITS, 0.1)
    assert any(np.allclose(row, waypoints[1]) for row in q)
    # the path is exactly the polyline: first only joint 1 moves, then only joint 2
    assert np.all((q[:, 1] == 0.0) | np.isclose(q[:, 0], 0.5))


@pytest.mark.parametrize("speed", [1e-300, 5e-324])
def test_limits_ruckig_cannot_time_are_one_planning_error(speed: float) -> None:
    """Not a RuckigError (its message is its whole input, many lines) nor a code its binding cannot name."""
    with pytest.raises(PlanningError) as error:
        profile_samples(1.0, speed, 1.0, 1.0, 0.1)
    assert error.value.reason == "bad_input"
    assert "\n" not in str(error.value)
    assert str(error.value).startswith(f"the motion cannot be timed at speed {speed:.3g}, acceleration 1,")
