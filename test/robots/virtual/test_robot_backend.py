"""Every backend keeps the protocol: clock, reset, setpoint bookkeeping and clear errors for bad input."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.registry import HOSTED_NAMES, make_backend
from cosim_validation.robots.virtual import BackendInputError, RobotBackend


# the in-process engines; the ros2_control robot (a controller manager over ROS 2) is tested through a campaign
# against the controller manager stand-in (test/live/session/test_ros2_control_session.py)
@pytest.fixture(scope="module", params=HOSTED_NAMES)
def backend(request: pytest.FixtureRequest, config: ConfigNode, kinematics: Kinematics) -> Iterator[RobotBackend]:
    if request.param == "coppeliasim":  # CoppeliaSim is played by the stand-in, a separate process
        config = request.getfixturevalue("coppeliasim_config")
    made = make_backend(request.param, config, kinematics)
    yield made
    made.close()


@pytest.fixture
def home(backend: RobotBackend, robot_config: Any) -> np.ndarray:
    backend.reset(robot_config.home_q)
    return np.asarray(robot_config.home_q)


def test_implements_the_protocol(backend: RobotBackend, kinematics: Kinematics) -> None:
    assert isinstance(backend, RobotBackend)
    assert backend.joint_names == kinematics.joint_names
    assert backend.role == (RobotRole.PHYSICAL if backend.name == "emulated" else RobotRole.VIRTUAL)
    np.testing.assert_allclose(backend.q_lower, kinematics.q_lower)
    np.testing.assert_allclose(backend.q_upper, kinematics.q_upper)


def test_reset_starts_the_clock_at_rest(backend: RobotBackend, home: np.ndarray) -> None:
    sample = backend.read()
    assert sample.t_s == 0.0
    np.testing.assert_array_equal(sample.q_setpoint, home)
    np.testing.assert_allclose(sample.q_measured, home, atol=2e-4)
    assert sample.actual_tip_pos_m.shape == (3,)
    assert np.linalg.norm(sample.actual_tip_quat_wxyz) == pytest.approx(1.0)


def test_clock_does_not_drift(backend: RobotBackend, home: np.ndarray) -> None:
    for _ in range(25):
        backend.advance(0.1)
    assert backend.read().t_s == pytest.approx(2.5, abs=1e-12)
    step = backend.physics_timestep_s
    backend.advance(0.4 * step)  # less than half a physics step: no step yet
    assert backend.read().t_s == pytest.approx(2.5, abs=1e-12)
    backend.advance(0.4 * step)  # now the requested time passes the half step
    assert backend.read().t_s == pytest.approx(2.5 + step, abs=1e-12)


def test_read_reports_the_last_setpoint(backend: RobotBackend, home: np.ndarray) -> None:
    target = home + 0.01
    backend.command(target, 0.1)
    np.testing.assert_array_equal(backend.read().q_setpoint, target)


def _with(home: np.ndarray, joint: int, value: float) -> np.ndarray:
    q = home.copy()
    q[joint] = value
    return q


@pytest.mark.parametrize(
    ("make_q", "match"),
    [
        (lambda h: _with(h, 2, np.nan), r"setpoint: joint3 is nan; joint positions must be finite"),
        (lambda h: _with(h, 0, np.inf), r"setpoint: joint1 is inf"),
        (lambda h: h[:6], r"setpoint: expected shape \(7,\), got shape \(6,\)"),
        (lambda h: h[None, :], r"setpoint: expected shape \(7,\), got shape \(1, 7\)"),
        (lambda h: _with(h, 3, 2.5), r"setpoint: joint4 = 2\.5 rad is outside its limits \[-2\.0944, 2\.0944\]"),
        (lambda h: "home", r"setpoint: expected 7 joint positions"),
    ],
)
def test_bad_setpoints_are_refused(backend: RobotBackend, home: np.ndarray, make_q: Any, match: str) -> None:
    with pytest.raises(BackendInputError, match=rf"^{backend.name} {match}"):
        backend.command(make_q(home), 0.1)
    np.testing.assert_array_equal(backend.read().q_setpoint, home)  # nothing was accepted


@pytest.mark.parametrize("bad", [0.0, -0.1, float("nan"), float("inf"), "0.1", None, True])
def test_bad_durations_are_refused(backend: RobotBackend, home: np.ndarray, bad: Any) -> None:
    with pytest.raises(BackendInputError, match=rf"{backend.name} command duration_s: expected"):
        backend.command(home, bad)
    with pytest.raises(BackendInputError, match=rf"{backend.name} advance dt_s: expected"):
        backend.advance(bad)


def test_bad_reset_pose_is_refused(backend: RobotBackend, home: np.ndarray) -> None:
    with pytest.raises(BackendInputError, match=rf"{backend.name} reset pose: joint7 is -inf"):
        backend.reset(_with(home, 6, -np.inf))
