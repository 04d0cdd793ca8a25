"""The optical tracker of the emulated arms: it reports the marker where the hidden set-up puts it (AX = YB holds
for the true X and Y), with the configured noise field, registration error and dropouts; a seed fixes it."""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cosim_validation.anatomy import pose_matrix
from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.robots.emulated.optical_tracker import OpticalTracker
from cosim_validation.robots.emulated.optical_tracker_config import OpticalTrackerConfig
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import execute_trajectory
from test.robots.virtual.plans import config_node, shipped_config_dict

SHIPPED_MARKER = shipped_config_dict()["backends"]["emulated"]["tracker"]["marker"]


def _config(**changes: Any) -> OpticalTrackerConfig:
    data = copy.deepcopy(SHIPPED_MARKER) | changes
    return OpticalTrackerConfig.from_config(ConfigNode(data, "test.yaml", "backends.emulated.tracker.marker"))


def _facing(config: OpticalTrackerConfig, distance_m: float, view_angle_rad: float = 0.0) -> tuple[np.ndarray, ...]:
    """A tool pose (base_link) that puts the marker on the tracker's axis at ``distance_m``, its normal turned
    ``view_angle_rad`` away from the line of sight."""
    T_tracker_marker = np.eye(4)
    T_tracker_marker[:3, :3] = Rotation.from_euler("x", math.pi + view_angle_rad).as_matrix()  # normal -> tracker
    T_tracker_marker[:3, 3] = [0.0, 0.0, distance_m]
    T_base_tool = config.T_base_tracker @ T_tracker_marker @ np.linalg.inv(config.T_tool_marker)
    x, y, z, w = Rotation.from_matrix(T_base_tool[:3, :3]).as_quat()
    return T_base_tool[:3, 3], np.array([w, x, y, z]), T_tracker_marker


def _frames(tracker: OpticalTracker, pose: tuple[np.ndarray, ...], n: int, dt_s: float = 0.1) -> list[Any]:
    return [tracker.measure(k * dt_s, pose[0], pose[1]) for k in range(n)]


def test_the_marker_is_where_the_hidden_set_up_puts_it() -> None:
    """The mean reading is inv(Y) A X for the true tool pose A: the AX = YB a calibration must solve."""
    config = _config(dropout_rate_hz=0.0)
    position, quat, T_tracker_marker = _facing(config, 1.0)
    frames = _frames(OpticalTracker(config, np.random.default_rng(1)), (position, quat), 3000)
    mean = np.mean([f.pos_m for f in frames], axis=0)
    np.testing.assert_allclose(mean, T_tracker_marker[:3, 3], atol=1e-5)  # 0.1 mm noise / sqrt(3000) ~ 2 um
    rotations = Rotation.from_quat([np.r_[f.quat_wxyz[1:], f.quat_wxyz[0]] for f in frames])
    assert (rotations.mean() * Rotation.from_matrix(T_tracker_marker[:3, :3]).inv()).magnitude() < 1e-4


def test_noise_is_0_1_mm_face_on_at_one_metre_and_weakest_along_the_line_of_sight() -> None:
    config = _config(dropout_rate_hz=0.0)
    position, quat, T_tracker_marker = _facing(config, 1.0)
    frames = _frames(OpticalTracker(config, np.random.default_rng(2)), (position, quat), 6000)
    error = np.array([f.pos_m for f in frames]) - T_tracker_marker[:3, 3]
    std = error.std(axis=0)  # the line of sight is the tracker's z axis here
    np.testing.assert_allclose(std[:2], config.fiducial_noise_std_m, rtol=0.05)
    np.testing.assert_allclose(std[2], config.depth_noise_factor * config.fiducial_noise_std_m, rtol=0.05)
    rms_mm = 1e3 * math.sqrt(float((error**2).sum(axis=1).mean()))
    assert 0.08 < rms_mm < 0.12  # "noise about 0.1 mm" (issue 17)
    registration = np.array([f.registration_error_m for f in frames])
    np.testing.assert_allclose(registration.mean(), config.registration_error_m, rtol=0.03)
    np.testing.assert_allclose(registration.std() / registration.mean(), config.registration_error_spread, rtol=0.1)


@pytest.mark.parametrize(("distance_m", "view_angle_rad"), [(1.5, 0.0), (1.0, 1.0), (0.7, 0.6)])
def test_noise_and_registration_error_grow_with_distance_squared_and_viewing_angle(
    distance_m: float, view_angle_rad: float
) -> None:
    config = _config(dropout_rate_hz=0.0)
    position, quat, T_tracker_marker = _facing(config, distance_m, view_angle_rad)
    frames = _frames(OpticalTracker(config, np.random.default_rng(3)), (position, quat), 4000)
    scale = distance_m**2 / math.cos(view_angle_rad)
    registration = np.array([f.registration_error_m for f in frames])
    np.testing.assert_allclose(registration.mean(), scale * config.registration_error_m, rtol=0.04)
    across = (np.array([f.pos_m for f in frames]) - T_tracker_marker[:3, 3])[:, 0].std()
    np.testing.assert_allclose(across, scale * config.fiducial_noise_std_m, rtol=0.06)


def test_the_marker_is_not_seen_outside_the_volume_or_turned_away() -> None:
    config = _config(dropout_rate_hz=0.0)
    tracker = OpticalTracker(config, np.random.default_rng(4))
    for distance_m, angle in ((0.45, 0.0), (2.1, 0.0), (1.0, config.max_view_angle_rad + 0.01)):
        position, quat, _ = _facing(config, distance_m, angle)
        frame = tracker.measure(0.0, position, quat)
        assert not frame.seen
        assert np.isnan(frame.pos_m).all()
        assert np.isnan(frame.quat_wxyz).all()
    position, quat, _ = _facing(config, 1.0, config.max_view_angle_rad - 0.01)
    assert tracker.measure(0.1, position, quat).seen


def test_occlusions_come_at_the_configured_rate_and_length() -> None:
    config = _config(dropout_rate_hz=0.5, dropout_duration_s=0.4)
    position, quat, _ = _facing(config, 1.0)
    seen = np.array(
        [f.seen for f in _frames(OpticalTracker(config, np.random.default_rng(5)), (position, quat), 60000)]
    )
    edges = np.diff(np.r_[0, (~seen).astype(int), 0])
    lengths = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)  # frames of each occlusion
    dt_s, total_s = 0.1, 6000.0
    np.testing.assert_allclose(len(lengths) / (seen.mean() * total_s), config.dropout_rate_hz, rtol=0.1)
    # an occlusion ends with probability 1 - exp(-dt / duration) per 10 Hz frame: geometric lengths
    expected_s = dt_s / -math.expm1(-dt_s / config.dropout_duration_s)
    np.testing.assert_allclose(lengths.mean() * dt_s, expected_s, rtol=0.1)


def test_a_bad_tracker_section_names_its_key() -> None:
    with pytest.raises(ConfigError, match=r"tracker\.marker\.range_m: expected \[near, far\]"):
        _config(range_m=[2.0, 1.0])
    with pytest.raises(ConfigError, match=r"tracker\.marker\.colour: unknown key"):
        _config(colour="red")
    with pytest.raises(ConfigError, match=r"tracker\.marker\.max_view_angle_rad"):
        _config(max_view_angle_rad=2.0)


def test_the_emulated_arm_reports_its_marker_reproducibly(
    kinematics: Kinematics, plan: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> None:
    """The shipped set-up sees the marker through a five-stage case (occlusions aside), in the tracker's frame;
    a case seed fixes every frame; the virtual robot has no tracker."""
    config = config_node(shipped_config_dict())

    def run(case_seed: int) -> Any:
        arm = make_backend("emulated", config, kinematics)
        arm.reseed(case_seed)  # type: ignore[attr-defined]
        return execute_trajectory(arm, kinematics, *plan)

    record, again, other = run(7), run(7), run(8)
    assert record.has_marker
    seen = np.isfinite(record.marker_error_m)
    assert 0.9 < seen.mean() < 1.0 or seen.all()
    assert np.isnan(record.marker_pos_m[~seen]).all()
    np.testing.assert_array_equal(record.marker_pos_m, again.marker_pos_m)
    assert not np.allclose(record.marker_pos_m[seen], other.marker_pos_m[seen], equal_nan=True)
    # the reading is the true marker pose: within a few noise sigmas of inv(Y) A_true X at every frame
    marker = SHIPPED_MARKER
    X = pose_matrix(np.array(marker["tool_to_marker"]["xyz_m"]), np.array(marker["tool_to_marker"]["rpy_rad"]))
    Y = pose_matrix(np.array(marker["base_to_tracker"]["xyz_m"]), np.array(marker["base_to_tracker"]["rpy_rad"]))
    T = np.repeat(np.eye(4)[None], record.n_samples, axis=0)  # the tracked (actual) tip as A
    T[:, :3, 3] = record.actual_tip_pos_m
    q = record.actual_tip_quat_wxyz
    T[:, :3, :3] = Rotation.from_quat(np.c_[q[:, 1:], q[:, :1]]).as_matrix()
    expected = (np.linalg.inv(Y) @ T @ X)[:, :3, 3]
    gap_mm = 1e3 * np.linalg.norm(record.marker_pos_m[seen] - expected[seen], axis=1)
    assert gap_mm.max() < 3.0  # the tip tracker's own 0.2 mm noise, turned by the 0.34 m lever of the marker
    virtual = execute_trajectory(make_backend("mujoco", config, kinematics), kinematics, *plan)
    assert not virtual.has_marker


def test_a_frame_is_the_true_pose_moved_by_its_own_draws() -> None:
    """Each seen frame, recomputed with scipy from the same generator's draws in the tracker's order (occlusion,
    registration spread, position noise, rotation noise): the noise stretched along the line of sight, the rotation
    noise applied in the marker's frame."""
    config = _config(dropout_rate_hz=0.0)
    rng = np.random.default_rng(4)
    tracker, replay = OpticalTracker(config, np.random.default_rng(9)), np.random.default_rng(9)
    T_tracker_base = np.linalg.inv(config.T_base_tracker)
    for k in range(40):
        position, quat, _ = _facing(config, rng.uniform(0.8, 1.4), rng.uniform(0.0, 0.6))
        quat = (Rotation.from_quat(np.r_[quat[1:], quat[0]]) * Rotation.from_rotvec(rng.normal(0, 0.05, 3))).as_quat()
        frame = tracker.measure(0.1 * k, position, np.r_[quat[3], quat[:3]])
        assert frame.seen
        T_base_tool = np.eye(4)
        T_base_tool[:3, :3], T_base_tool[:3, 3] = Rotation.from_quat(quat).as_matrix(), position
        T = T_tracker_base @ T_base_tool @ config.T_tool_marker
        distance = np.linalg.norm(T[:3, 3])
        sight = T[:3, 3] / distance
        scale = (distance / config.reference_distance_m) ** 2 / float(-T[:3, 2] @ sight)
        replay.random()
        spread = max(0.0, 1.0 + config.registration_error_spread * replay.normal())
        noise = replay.normal(0.0, config.fiducial_noise_std_m * scale, 3)
        noise += (config.depth_noise_factor - 1.0) * (noise @ sight) * sight
        turn = Rotation.from_rotvec(replay.normal(0.0, config.fiducial_noise_std_m * scale / config.marker_radius_m, 3))
        np.testing.assert_allclose(frame.pos_m, T[:3, 3] + noise, rtol=0, atol=1e-12)
        x, y, z, w = (Rotation.from_matrix(T[:3, :3]) * turn).as_quat()
        np.testing.assert_allclose(frame.quat_wxyz, np.array([w, x, y, z]) * np.sign(w), rtol=0, atol=1e-12)
        assert frame.registration_error_m == pytest.approx(config.registration_error_m * scale * spread, rel=1e-12)
