"""The CoppeliaSim engine through its stand-in: the official client drives it, it runs a whole case as the MuJoCo
arm behind it does, and what goes wrong (nobody answering, a scene without the arm, bad settings) is one clear
error, quickly.

The stand-in ramps the servo reference linearly from one target to the next over a simulation step; the backend
sets the targets to the protocol's first-order hold at each step's end. With 10 ms steps and setpoints every
100 ms the reference is the same piecewise-linear function as MuJoCo's, so the two must agree to round-off.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import ConfigError, MissingDependencyError
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import BackendModelError, execute_trajectory
from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig
from cosim_validation.robots.virtual.errors import BackendConnectionError
from test.robots.virtual.coppeliasim_process import with_coppeliasim
from test.robots.virtual.plans import config_node, shipped_config_dict

JOINT_TOLERANCE_RAD = 1e-9
TIP_TOLERANCE_M = 1e-9


def _config(port: int, **settings: object) -> ConfigNode:
    return config_node(with_coppeliasim(shipped_config_dict(), port, **settings))


@pytest.fixture(scope="module")
def records(
    coppeliasim_port: int, config: ConfigNode, kinematics: Kinematics, plan: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> dict[str, TrajectoryRecord]:
    out = {}
    for name, settings in (("mujoco", config), ("coppeliasim", _config(coppeliasim_port, time_step_s=0.01))):
        backend = make_backend(name, settings, kinematics)
        out[name] = execute_trajectory(backend, kinematics, *plan, test_id="cross-engine")
        backend.close()
    return out


def test_a_whole_case_equals_the_mujoco_arm_behind_the_standin(records: dict[str, TrajectoryRecord]) -> None:
    mujoco, coppelia = records["mujoco"], records["coppeliasim"]
    assert coppelia.backend == "coppeliasim"
    np.testing.assert_allclose(coppelia.t_s, mujoco.t_s, atol=1e-9)
    assert np.abs(coppelia.q_measured - mujoco.q_measured).max() < JOINT_TOLERANCE_RAD
    assert np.linalg.norm(coppelia.actual_tip_pos_m - mujoco.actual_tip_pos_m, axis=1).max() < TIP_TOLERANCE_M
    lag_rad = np.abs(coppelia.q_measured - coppelia.q_setpoint).max()
    assert lag_rad > 1e4 * JOINT_TOLERANCE_RAD  # a dynamic arm that lags its plan, not a copy of it


def test_tip_dummy_pose_is_the_ground_truth_of_nominal_fk(records: dict[str, TrajectoryRecord]) -> None:
    record = records["coppeliasim"]
    np.testing.assert_allclose(record.actual_tip_pos_m, record.tip_pos_m, atol=1e-9)
    dots = np.abs(np.sum(record.actual_tip_quat_wxyz * record.tip_quat_wxyz, axis=1))
    np.testing.assert_allclose(dots, 1.0, atol=1e-9)


def test_a_coarser_step_than_the_setpoints_is_not_equal(
    coppeliasim_port: int, kinematics: Kinematics, records: dict[str, TrajectoryRecord], plan: tuple[np.ndarray, ...]
) -> None:
    """The agreement above is not built in: 30 ms steps hold the reference across setpoint boundaries."""
    backend = make_backend("coppeliasim", _config(coppeliasim_port, time_step_s=0.03), kinematics)
    try:
        assert backend.time_step_s == pytest.approx(0.03)  # type: ignore[attr-defined]
        short = [p[:40] for p in plan]  # 4 s
        record = execute_trajectory(backend, kinematics, *short)
    finally:
        backend.close()
    gap_rad = np.abs(record.q_measured - records["mujoco"].q_measured[:40]).max()
    assert gap_rad > 1e3 * JOINT_TOLERANCE_RAD


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts TCP connections and never says a word."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("listening", [True, False], ids=["silent-listener", "nobody"])
def test_no_answer_is_one_clear_error_quickly(
    listening: bool, request: pytest.FixtureRequest, kinematics: Kinematics
) -> None:
    port = request.getfixturevalue("silent_port") if listening else free_port()
    config = _config(port, connect_timeout_s=0.5)
    with pytest.raises(BackendConnectionError) as caught:  # the wait is the configured 0.5 s, as it says
        make_backend("coppeliasim", config, kinematics)
    message = str(caught.value)
    assert "\n" not in message
    assert f"no CoppeliaSim answered at tcp://127.0.0.1:{port} within 0.5 s" in message
    assert "start CoppeliaSim" in message
    assert "scripts/coppeliasim_standin.py" in message


def test_scene_without_the_arm_lists_what_was_expected(coppeliasim_port: int, kinematics: Kinematics) -> None:
    config = _config(coppeliasim_port, joint_path="/base_link/arm/{joint}", tip_path="/needle_tip")
    with pytest.raises(BackendModelError) as caught:
        make_backend("coppeliasim", config, kinematics)
    message = str(caught.value)
    missing = ", ".join(f"/base_link/arm/joint{i}" for i in range(1, 8))
    assert f"has no object at {missing};" in message
    assert "its joints joint1, joint2, joint3, joint4, joint5, joint6, joint7 at /base_link/arm/{joint}" in message
    assert "/needle_tip," not in message  # the tip exists: only what is missing is listed as missing


def test_nested_paths_find_the_arm(coppeliasim_port: int, kinematics: Kinematics, robot_config: object) -> None:
    config = _config(coppeliasim_port, joint_path="/base_link/{joint}", tip_path="/base_link/joint7/needle_tip")
    backend = make_backend("coppeliasim", config, kinematics)
    try:
        sample = backend.read()
        np.testing.assert_allclose(sample.actual_tip_pos_m, kinematics.tip_pose(sample.q_measured).pos_m, atol=1e-9)
    finally:
        backend.close()
    backend.close()  # idempotent


def test_a_closed_backend_says_so(coppeliasim_port: int, kinematics: Kinematics) -> None:
    backend = make_backend("coppeliasim", _config(coppeliasim_port), kinematics)
    backend.close()
    with pytest.raises(BackendConnectionError, match=r"sim\.getSimulationTime: the backend is closed"):
        backend.read()


def test_a_time_step_the_scene_cannot_take_is_refused(coppeliasim_port: int, kinematics: Kinematics) -> None:
    # the stand-in's scene steps its arm at backends.physics_timestep_s of the case study it was started with (2 ms)
    with pytest.raises(BackendConnectionError, match=r"sim\.setFloatParam.*not a whole number of 0\.002 s"):
        make_backend("coppeliasim", _config(coppeliasim_port, time_step_s=0.0015), kinematics)


@pytest.mark.parametrize(
    ("key", "value", "match"),
    [
        ("port", 70000, r"backends\.coppeliasim\.port: expected an integer <= 65535"),
        ("port", "23000", r"backends\.coppeliasim\.port: expected an integer"),
        ("host", " ", r"backends\.coppeliasim\.host: expected a host name"),
        ("connect_timeout_s", 0, r"backends\.coppeliasim\.connect_timeout_s: expected a number > 0"),
        ("time_step_s", 0.5, r"backends\.coppeliasim\.time_step_s: expected a number <= 0\.1"),
        ("joint_path", "/arm/joint", r"backends\.coppeliasim\.joint_path: expected a path containing \{joint\}"),
        ("tip_path", "needle_tip", r"backends\.coppeliasim\.tip_path: expected an absolute CoppeliaSim object path"),
        ("hots", "x", r"backends\.coppeliasim\.hots: unknown key; expected one of: base_path, call_timeout_s"),
    ],
)
def test_bad_settings_name_the_key(key: str, value: object, match: str) -> None:
    data = shipped_config_dict()
    data["backends"]["coppeliasim"] = {key: value}
    node = config_node(data)["backends"]["coppeliasim"]
    with pytest.raises(ConfigError, match=match):
        CoppeliaSimConfig.from_config(node)


def test_defaults_are_coppeliasims() -> None:
    assert CoppeliaSimConfig.from_config(None).endpoint == "tcp://localhost:23000"


def test_missing_client_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, kinematics: Kinematics) -> None:
    monkeypatch.setitem(__import__("sys").modules, "coppeliasim_zmqremoteapi_client", None)
    with pytest.raises(MissingDependencyError, match=r"coppeliasim-zmqremoteapi-client==2\.0\.4"):
        make_backend("coppeliasim", _config(1), kinematics)
