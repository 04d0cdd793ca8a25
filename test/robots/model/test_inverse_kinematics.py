"""Inverse kinematics: reaches reachable poses within the limits, follows lines smoothly, rejects bad input."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.robots.model import InverseKinematics, KinematicsInputError, RobotConfig
from cosim_validation.robots.model.inverse_kinematics import frame_with_axis


@pytest.fixture(scope="module")
def ik(robot_config: RobotConfig) -> InverseKinematics:
    return InverseKinematics(robot_config.kinematics, robot_config.q_lower, robot_config.q_upper, robot_config.home_q)


def test_reaches_poses_of_random_configurations(ik: InverseKinematics, robot_config: RobotConfig) -> None:
    """Every pose of a configuration inside the limits is reached, within the limits, to 0.1 µm."""
    kin = robot_config.kinematics
    rng = np.random.default_rng(7)
    for q in rng.uniform(robot_config.q_lower, robot_config.q_upper, size=(60, 7)):
        pose = kin.tip_pose(q)
        result = ik.solve(pose.pos_m, pose.axis)
        assert result.converged
        reached = kin.tip_pose(result.q)
        assert np.linalg.norm(reached.pos_m - pose.pos_m) < 1e-7
        assert np.degrees(np.arccos(min(1.0, reached.axis @ pose.axis))) < 1e-4
        assert np.all(result.q >= robot_config.q_lower)
        assert np.all(result.q <= robot_config.q_upper)


def test_solve_is_deterministic(ik: InverseKinematics) -> None:
    a = ik.solve([0.45, 0.05, -0.1], [0.1, 0.0, -1.0])
    b = ik.solve([0.45, 0.05, -0.1], [0.1, 0.0, -1.0])
    np.testing.assert_array_equal(a.q, b.q)


def test_track_follows_a_line_smoothly(ik: InverseKinematics, robot_config: RobotConfig) -> None:
    kin = robot_config.kinematics
    start = ik.solve([0.45, 0.0, 0.05], [0.0, 0.0, -1.0])
    assert start.converged
    points = np.linspace([0.45, 0.0, 0.05], [0.45, 0.0, -0.15], 101)
    R = kin.tip_pose(start.q).R
    path = ik.track(start.q, points[1:], R)
    assert path.converged
    assert np.max(path.position_error_m) < 1e-7
    tips, tip_R = kin.tip_poses(path.q)
    np.testing.assert_allclose(tips, points[1:], atol=1e-7)
    np.testing.assert_allclose(tip_R, np.broadcast_to(R, tip_R.shape), atol=1e-6)
    # 2 mm steps of the tip: the redundancy is resolved continuously (no jumps between branches)
    assert np.max(np.abs(np.diff(path.q, axis=0))) < 0.02


def test_unreachable_pose_is_reported_not_faked(ik: InverseKinematics, robot_config: RobotConfig) -> None:
    result = ik.solve([1.5, 0.0, 0.3], [0.0, 0.0, -1.0])
    assert not result.converged
    assert result.position_error_m > 0.3
    assert np.all(result.q >= robot_config.q_lower)
    assert np.all(result.q <= robot_config.q_upper)


def test_limits_are_respected_when_narrowed(robot_config: RobotConfig) -> None:
    kin = robot_config.kinematics
    lower, upper = robot_config.q_lower.copy(), robot_config.q_upper.copy()
    lower[3], upper[3] = 1.3, 1.5
    narrow = InverseKinematics(kin, lower, upper, np.clip(robot_config.home_q, lower, upper))
    result = narrow.solve([0.45, 0.0, -0.05], [0.0, 0.0, -1.0])
    assert 1.3 <= result.q[3] <= 1.5


def test_frame_with_axis_is_a_rotation() -> None:
    for axis in ([0, 0, 1], [1, 0, 0], [0.3, -0.2, -0.9]):
        R = frame_with_axis(np.array(axis, dtype=float))
        np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
        assert np.linalg.det(R) == pytest.approx(1.0)
        np.testing.assert_allclose(R[:, 2], np.array(axis) / np.linalg.norm(axis), atol=1e-12)


@pytest.mark.parametrize(
    ("position", "axis", "message"),
    [
        ([np.nan, 0, 0], [0, 0, -1], "tip_pos_m must be finite"),
        ([0.4, 0, np.inf], [0, 0, -1], "tip_pos_m must be finite"),
        ([0.4, 0], [0, 0, -1], r"tip_pos_m must have shape \(3,\)"),
        ([0.4, 0, 0], [0, 0, 0], "needle_axis must be a non-zero vector"),
        ([0.4, 0, 0], [0, np.nan, 1], "needle_axis must be finite"),
    ],
)
def test_bad_targets_are_rejected(
    ik: InverseKinematics, position: list[float], axis: list[float], message: str
) -> None:
    with pytest.raises(KinematicsInputError, match=message):
        ik.solve(position, axis)


def test_bad_path_input_is_rejected(ik: InverseKinematics, robot_config: RobotConfig) -> None:
    home = robot_config.home_q
    with pytest.raises(KinematicsInputError, match=r"finite \(n, 3\)"):
        ik.track(home, [[0.4, 0.0, np.nan]], np.eye(3))
    with pytest.raises(KinematicsInputError, match="R_target must be finite"):
        ik.track(home, [[0.4, 0.0, 0.0]], np.eye(2))
    with pytest.raises(KinematicsInputError, match="violates joint limits"):
        InverseKinematics(robot_config.kinematics, robot_config.q_lower, robot_config.q_upper, home + 10)
