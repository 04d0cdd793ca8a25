"""Validating and following a joint trajectory as ros2_controllers' joint trajectory controller does."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.exceptions import CosimError
from cosim_validation.live.external.trajectory_follow import (
    GOAL_TOLERANCE_VIOLATED,
    INVALID_GOAL,
    INVALID_JOINTS,
    OLD_HEADER_TIMESTAMP,
    PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL,
    ActiveTrajectory,
    Tolerances,
    TrajectoryRefusedError,
    accept,
)

NAMES = ("j1", "j2", "j3")
LOWER = np.array([-1.0, -2.0, 0.0])
UPPER = np.array([1.0, 2.0, 0.2])


def _refusal(**changes: object) -> TrajectoryRefusedError:
    args: dict[str, object] = {
        "msg_joint_names": list(NAMES),
        "times_s": [1.0, 2.0],
        "positions": [[0.1, 0.2, 0.05], [0.2, 0.4, 0.1]],
        "velocities": None,
    }
    args.update(changes)
    with pytest.raises(TrajectoryRefusedError) as caught:
        accept(NAMES, q_lower=LOWER, q_upper=UPPER, **args)  # type: ignore[arg-type]
    return caught.value


def test_a_valid_trajectory_is_reordered_to_the_controllers_joints() -> None:
    times, positions = accept(
        NAMES, ["j3", "j1", "j2"], [0.5, 1.5], [[0.05, 0.1, 0.2], [0.1, -0.3, 1.9]], None, LOWER, UPPER
    )
    np.testing.assert_array_equal(times, [0.5, 1.5])
    np.testing.assert_array_equal(positions, [[0.1, 0.2, 0.05], [-0.3, 1.9, 0.1]])


@pytest.mark.parametrize(
    ("names", "words"),
    [
        (["j1", "j2"], "missing ['j3']"),
        (["j1", "j2", "j4"], "unknown ['j4']"),
        (["j1", "j2", "j2"], "duplicate ['j2']"),
        ([], "names no joints"),
    ],
)
def test_wrong_joint_names_are_invalid_joints(names: list[str], words: str) -> None:
    error = _refusal(msg_joint_names=names)
    assert error.error_code == INVALID_JOINTS
    assert words in error.message


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"times_s": [], "positions": []}, "no points"),
        ({"times_s": [1.0, 1.0]}, "points 0 and 1 is not strictly increasing"),
        ({"times_s": [2.0, 1.0]}, "not strictly increasing"),
        ({"times_s": [-1.0, 1.0]}, "point 0 time_from_start is -1.0"),
        ({"times_s": [1.0]}, "1 times for 2 points"),
        ({"positions": [[0.1, 0.2, 0.05], [0.2, float("nan"), 0.1]]}, "point 1 positions[1] is nan"),
        ({"positions": [[0.1, 0.2, 0.05], [0.2, 0.4]]}, "point 1 has 2 positions, expected 3"),
        ({"positions": [[0.1, 0.2, 0.05], [0.2, 0.4, 0.3]]}, "point 1 joint j3 position 0.3 rad is outside"),
        ({"positions": [[-1.5, 0.2, 0.05], [0.2, 0.4, 0.1]]}, "point 0 joint j1 position -1.5 rad"),
        ({"velocities": [[0.1, 0.1, 0.1], [0.0, 0.2, 0.0]]}, "last point of joint j2 is 0.2, expected 0"),
        ({"velocities": [[0.1, 0.1, 0.1], []]}, "point 1 has 0 velocities, expected 3"),
    ],
)
def test_bad_trajectories_are_invalid_goals_naming_the_point(changes: dict[str, object], words: str) -> None:
    error = _refusal(**changes)
    assert error.error_code == INVALID_GOAL
    assert words in error.message


def test_a_stamped_trajectory_ending_in_the_past_is_refused() -> None:
    args = (NAMES, list(NAMES), [1.0], [[0.0, 0.0, 0.1]], None, LOWER, UPPER)
    with pytest.raises(TrajectoryRefusedError) as caught:
        accept(*args, header_stamp_s=5.0, now_s=6.5)
    assert caught.value.error_code == OLD_HEADER_TIMESTAMP
    accept(*args, header_stamp_s=5.0, now_s=6.0)  # ends exactly now: accepted
    accept(*args, header_stamp_s=0.0, now_s=100.0)  # stamp 0: starts when first sampled


def _ramp(tolerances: Tolerances | None = None, velocities: np.ndarray | None = None) -> ActiveTrajectory:
    """From 0 at t=10 s to (0.2, 0.4, 0.1) at t=11 s, then (0.4, 0.8, 0.1) at t=12 s."""
    positions = np.array([[0.2, 0.4, 0.1], [0.4, 0.8, 0.1]])
    return ActiveTrajectory(
        10.0,
        np.zeros(3),
        np.array([1.0, 2.0]),
        positions,
        tolerances or Tolerances.jtc_defaults(3),
        velocities=velocities,
        joint_names=NAMES,
    )


def test_linear_sampling_starts_from_the_start_state_and_holds_the_last_point() -> None:
    trajectory = _ramp()
    np.testing.assert_allclose(trajectory.sample(9.0), [0.0, 0.0, 0.0])
    np.testing.assert_allclose(trajectory.sample(10.5), [0.1, 0.2, 0.05])
    np.testing.assert_allclose(trajectory.sample(11.0), [0.2, 0.4, 0.1])
    np.testing.assert_allclose(trajectory.sample(11.25), [0.25, 0.5, 0.1])
    np.testing.assert_allclose(trajectory.sample(12.0), [0.4, 0.8, 0.1])
    np.testing.assert_allclose(trajectory.sample(50.0), [0.4, 0.8, 0.1])


def test_cubic_sampling_meets_the_points_with_their_velocities() -> None:
    velocities = np.array([[0.3, 0.6, 0.0], [0.0, 0.0, 0.0]])
    trajectory = _ramp(velocities=velocities)
    np.testing.assert_allclose(trajectory.sample(11.0), [0.2, 0.4, 0.1])
    dt = 1e-6
    slope = (trajectory.sample(11.0 + dt) - trajectory.sample(11.0 - dt)) / (2 * dt)
    np.testing.assert_allclose(slope, velocities[0], atol=1e-5)
    start_slope = (trajectory.sample(10.0 + dt) - trajectory.sample(10.0)) / dt
    np.testing.assert_allclose(start_slope, 0.0, atol=1e-4)  # from rest
    # a Hermite cubic, not the straight line between the points
    assert not np.allclose(trajectory.sample(11.5), [0.3, 0.6, 0.1])


def test_a_first_point_at_time_zero_starts_there() -> None:
    trajectory = ActiveTrajectory(
        0.0, np.ones(3), np.array([0.0, 1.0]), np.array([[0.0] * 3, [0.5] * 3]), Tolerances.jtc_defaults(3)
    )
    np.testing.assert_allclose(trajectory.sample(0.0), [0.0] * 3)
    np.testing.assert_allclose(trajectory.sample(0.5), [0.25] * 3)
    single = ActiveTrajectory(0.0, np.ones(3), np.array([0.0]), np.array([[0.3] * 3]), Tolerances.jtc_defaults(3))
    np.testing.assert_allclose(single.sample(4.0), [0.3] * 3)


def test_a_path_tolerance_violation_aborts() -> None:
    tolerances = Tolerances(np.full(3, 0.05), np.zeros(3), 0.0)
    trajectory = _ramp(tolerances)
    assert trajectory.check(10.0, np.zeros(3)) is None
    assert trajectory.check(10.5, np.array([0.1, 0.2, 0.05]) + 0.04) is None
    verdict = trajectory.check(10.6, np.zeros(3))  # desired (0.12, 0.24, 0.06)
    assert verdict is not None
    assert verdict[0] == PATH_TOLERANCE_VIOLATED
    assert "joint j1 is 0.12 rad from the trajectory, tolerance 0.05 rad" in verdict[1]


def test_without_tolerances_nothing_aborts_and_the_end_succeeds() -> None:
    trajectory = _ramp()
    assert trajectory.check(10.5, np.full(3, 5.0)) is None
    assert trajectory.check(12.0, np.full(3, 5.0)) == (SUCCESSFUL, "")


def test_the_goal_tolerance_is_waited_for_goal_time_then_aborts() -> None:
    tolerances = Tolerances(np.zeros(3), np.full(3, 0.01), 0.5)
    trajectory = _ramp(tolerances)
    short = np.array([0.35, 0.8, 0.1])
    assert trajectory.check(12.0, short) is None
    assert trajectory.check(12.5, short) is None  # within goal_time
    verdict = trajectory.check(12.6, short)
    assert verdict is not None
    assert verdict[0] == GOAL_TOLERANCE_VIOLATED
    assert "joint j1 is 0.05 rad from the last point" in verdict[1]
    assert _ramp(tolerances).check(12.3, np.array([0.405, 0.8, 0.1])) == (SUCCESSFUL, "")


def test_goal_time_zero_waits_without_limit() -> None:
    trajectory = _ramp(Tolerances(np.zeros(3), np.full(3, 0.01), 0.0))
    assert trajectory.check(1000.0, np.zeros(3)) is None


def test_a_goal_overrides_the_default_tolerances_per_joint_as_the_jtc() -> None:
    defaults = Tolerances(np.array([0.1, 0.1, 0.1]), np.array([0.02, 0.02, 0.02]), 1.0)
    got = defaults.for_goal(NAMES, [("j2", 0.3), ("j3", -1.0)], [("j1", 0.0), ("j3", 0.05)], 2.0)
    np.testing.assert_allclose(got.path_rad, [0.1, 0.3, 0.0])  # -1 erases
    np.testing.assert_allclose(got.goal_rad, [0.02, 0.02, 0.05])  # 0 keeps the default
    assert got.goal_time_s == 2.0
    assert defaults.for_goal(NAMES, [], [], 0.0).goal_time_s == 1.0
    # an unknown joint or an illegal value: the whole goal uses the defaults
    assert defaults.for_goal(NAMES, [("j2", 0.3), ("j9", 0.3)], [], 2.0) is defaults
    assert defaults.for_goal(NAMES, [("j2", -0.5)], [], 2.0) is defaults
    assert defaults.for_goal(NAMES, [], [], -3.0) is defaults


def test_the_jtc_defaults_check_nothing() -> None:
    defaults = Tolerances.jtc_defaults(2)
    assert defaults.goal_time_s == 0.0
    assert not defaults.path_rad.any()
    assert not defaults.goal_rad.any()


@pytest.mark.parametrize(
    "args",
    [
        (np.zeros(3), np.zeros(2), 0.0),
        (np.array([0.1, -0.1]), np.zeros(2), 0.0),
        (np.zeros(2), np.array([np.nan, 0.0]), 0.0),
        (np.zeros(2), np.zeros(2), -1.0),
    ],
)
def test_bad_tolerances_are_refused(args: tuple[np.ndarray, np.ndarray, float]) -> None:
    with pytest.raises(CosimError, match="tolerances"):
        Tolerances(*args)


def test_default_tolerances_fit_any_arm_and_a_wrong_size_is_refused() -> None:
    sized = Tolerances().sized(4)
    np.testing.assert_array_equal(sized.path_rad, np.zeros(4))
    np.testing.assert_array_equal(sized.goal_rad, np.zeros(4))
    assert _ramp(Tolerances()).check(12.0, np.full(3, 9.0)) == (SUCCESSFUL, "")
    with pytest.raises(CosimError, match="2 path and 2 goal values for 3 joints"):
        Tolerances(np.zeros(2), np.zeros(2)).sized(3)
    got = Tolerances(goal_time_s=1.0).for_goal(NAMES, [("j1", 0.2)], [], 0.0)
    np.testing.assert_allclose(got.path_rad, [0.2, 0.0, 0.0])
    assert got.goal_time_s == 1.0


def test_messages_give_each_joints_unit() -> None:
    """A prismatic joint (j3 here, as the insertion joint of a dVRK PSM) is in m in the refusals and the aborts."""
    units = ("rad", "rad", "m")
    with pytest.raises(TrajectoryRefusedError) as caught:
        accept(NAMES, list(NAMES), [1.0], [[0.0, 0.0, 0.3]], None, LOWER, UPPER, units=units)
    assert "joint j3 position 0.3 m is outside its limits [0, 0.2] m" in str(caught.value)
    positions = np.array([[0.0, 0.0, 0.1], [0.0, 0.0, 0.2]])
    tolerances = Tolerances(np.full(3, 0.01), np.zeros(3), 0.0)
    trajectory = ActiveTrajectory(10.0, np.zeros(3), np.array([1.0, 2.0]), positions, tolerances, units=units)
    verdict = trajectory.check(10.5, np.zeros(3))  # desired j3 = 0.05 m
    assert verdict is not None
    assert verdict[0] == PATH_TOLERANCE_VIOLATED
    assert "joint 2 is 0.05 m from the trajectory, tolerance 0.01 m" in verdict[1]
