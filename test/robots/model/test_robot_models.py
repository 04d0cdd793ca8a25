"""The registered robots: the URDFs of the dVRK PSM and the Raven-II against forward kinematics written here
from their published DH tables, loaded by pinocchio (the project's kinematics) and by MuJoCo alike.

The DH code below is independent of the URDFs and of the project's kernels: it composes the modified (Craig)
transform RotX(alpha_{i-1}) TransX(a_{i-1}) RotZ(theta_i) TransZ(d_i) row by row from the tables of
../shared/ROBOTS.md 2.4 (dVRK, sawIntuitiveResearchKit PSM.json and LARGE_NEEDLE_DRIVER_400006.json) and 3.2
(Raven-II, r2_kinematics.cpp, left arm).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.config import load_config
from cosim_validation.common.exceptions import ConfigError
from cosim_validation.robots.model import (
    PRISMATIC,
    REVOLUTE,
    ROBOT_MODELS,
    ArmCapsules,
    Kinematics,
    RobotConfig,
    RobotModelError,
    robot_model,
)

N_RANDOM = 2000
TOLERANCE_M = 1e-9


def _modified_dh(alpha: float, a: float, theta: float, d: float) -> np.ndarray:
    ca, sa, ct, st = np.cos(alpha), np.sin(alpha), np.cos(theta), np.sin(theta)
    return np.array(
        [
            [ct, -st, 0.0, a],
            [st * ca, ct * ca, -sa, -sa * d],
            [st * sa, ct * sa, ca, ca * d],
            [0.0, 0.0, 0.0, 1.0],
        ]
    )


def _chain(rows: list[tuple[float, float, float, float]]) -> np.ndarray:
    T = np.eye(4)
    for row in rows:
        T = T @ _modified_dh(*row)
    return T


def psm_tool_tip(q: np.ndarray) -> np.ndarray:
    """Base (RCM) to the tool tip of the dVRK Classic PSM + Large Needle Driver: PSM.json, then the tool json,
    then the tooltip offset. Rows (alpha, A, theta, D); the joint value adds to theta (revolute) or D."""
    rows = [
        (1.5708, 0.0, q[0] + 1.5708, 0.0),
        (-1.5708, 0.0, q[1] - 1.5708, 0.0),
        (1.5708, 0.0, 0.0, q[2] - 0.4318),
        (0.0, 0.0, q[3], 0.4162),
        (-1.5708, 0.0, q[4] - 1.5708, 0.0),
        (-1.5708, 0.0091, q[5] - 1.5708, 0.0),
    ]
    tooltip_offset = np.array([[0.0, -1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [-1.0, 0.0, 0.0, 0.0], [0, 0, 0, 1.0]])
    return _chain(rows) @ tooltip_offset


def _rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    Rz = np.array([[cy, -sy, 0.0], [sy, cy, 0.0], [0.0, 0.0, 1.0]])
    Ry = np.array([[cp, 0.0, sp], [0.0, 1.0, 0.0], [-sp, 0.0, cp]])
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, cr, -sr], [0.0, sr, cr]])
    T = np.eye(4)
    T[:3, :3] = Rz @ Ry @ Rx
    return T


def raven_tool_tip(q: np.ndarray) -> np.ndarray:
    """Base (RCM, +z up) to the grasper tip frame of the Raven-II gold arm: the mount rotation of the URDF, the
    left-arm DH table with joint2theta's offsets (205, 180, 0, 0, -90, 0 deg), then +z turned onto x6."""
    la12, la23, d4, lw = np.radians(75.0), np.radians(52.0), -0.47, 0.013
    rows = [
        (0.0, 0.0, q[0] + np.radians(205.0), 0.0),
        (la12, 0.0, q[1] + np.radians(180.0), 0.0),
        (np.pi - la23, 0.0, np.pi / 2, q[2]),
        (0.0, 0.0, q[3], d4),
        (np.pi / 2, 0.0, q[4] - np.radians(90.0), 0.0),
        (np.pi / 2, lw, q[5], 0.0),
    ]
    mount = _rpy(2.053, -1.2201, -2.0277)
    return mount @ _chain(rows) @ _rpy(0.0, np.pi / 2, 0.0)


REFERENCES = {"dvrk_psm": psm_tool_tip, "raven2": raven_tool_tip}


@pytest.fixture(scope="module", params=sorted(REFERENCES))
def model_kinematics(request: pytest.FixtureRequest, repo_root: Path) -> tuple[str, Kinematics]:
    model = robot_model(request.param)
    return model.name, Kinematics.from_urdf(repo_root / model.urdf, model.needle_length_m, model.mount_frame)


def _random_joints(kinematics: Kinematics, n: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return kinematics.q_lower + rng.random((n, kinematics.n_joints)) * (kinematics.q_upper - kinematics.q_lower)


def test_the_urdf_is_the_dh_table_to_a_nanometre(model_kinematics: tuple[str, Kinematics]) -> None:
    name, kinematics = model_kinematics
    reference = REFERENCES[name]
    q = _random_joints(kinematics, N_RANDOM)
    tip_pos, tip_R = kinematics.tip_poses(q)
    needle = kinematics.needle_length_m
    worst_m, worst_rot = 0.0, 0.0
    for i in range(N_RANDOM):
        T = reference(q[i])
        expected_tip = T[:3, 3] + needle * T[:3, 2]  # the needle along the tool tip's +z
        worst_m = max(worst_m, float(np.linalg.norm(tip_pos[i] - expected_tip)))
        worst_rot = max(worst_rot, float(np.abs(tip_R[i] - T[:3, :3]).max()))
    assert worst_m < TOLERANCE_M, f"{name}: tip differs from the DH table by {worst_m:.3g} m"
    assert worst_rot < 1e-9, f"{name}: orientation differs by {worst_rot:.3g}"


def test_the_insertion_joint_is_prismatic_in_metres(model_kinematics: tuple[str, Kinematics]) -> None:
    name, kinematics = model_kinematics
    expected = [REVOLUTE, REVOLUTE, PRISMATIC, REVOLUTE, REVOLUTE, REVOLUTE]
    assert kinematics.chain.joint_type.tolist() == expected
    assert kinematics.chain.joint_unit(2) == "m"
    assert kinematics.chain.joint_unit(0) == "rad"
    beyond = np.array(robot_model(name).home_q)
    beyond[[0, 2]] = kinematics.q_upper[[0, 2]] + 0.5
    first, insertion = kinematics.limit_violations(beyond)  # each in its own unit
    assert " rad outside " in first
    assert " m outside " in insertion
    home = np.array(robot_model(name).home_q)
    deeper = home.copy()
    deeper[2] += 0.01  # the tip moves 10 mm along the shaft, through the RCM at the origin
    a, b = kinematics.tip_pose(home).pos_m, kinematics.tip_pose(deeper).pos_m
    assert np.linalg.norm(b - a) == pytest.approx(0.01, abs=1e-12)
    direction = (b - a) / np.linalg.norm(b - a)
    assert np.linalg.norm(np.cross(direction, a / np.linalg.norm(a))) < 2e-4  # along the line from the RCM


def test_the_jacobian_of_a_prismatic_joint_is_its_axis(model_kinematics: tuple[str, Kinematics]) -> None:
    _, kinematics = model_kinematics
    q = _random_joints(kinematics, 5, seed=3)
    step = 1e-7
    for row in q:
        J = kinematics.tip_jacobian(row)
        for j in range(kinematics.n_joints):
            moved = row.copy()
            moved[j] += step
            numeric = (kinematics.tip_pose(moved).pos_m - kinematics.tip_pose(row).pos_m) / step
            assert np.allclose(J[:3, j], numeric, atol=1e-6)
        assert np.allclose(J[3:, 2], 0.0)  # sliding does not turn the tip


def test_mujoco_reads_the_same_robot(model_kinematics: tuple[str, Kinematics]) -> None:
    mujoco = pytest.importorskip("mujoco")
    name, kinematics = model_kinematics
    spec = mujoco.MjSpec.from_file(str(kinematics.chain.urdf_path))
    spec.compiler.fusestatic = False
    model = spec.compile()
    data = mujoco.MjData(model)
    kinds = [int(model.jnt_type[j]) for j in range(model.njnt)]
    assert kinds[2] == int(mujoco.mjtJoint.mjJNT_SLIDE)
    body = model.body("tool_tip").id
    reference = REFERENCES[name]
    for row in _random_joints(kinematics, 200, seed=11):
        data.qpos[:] = row
        mujoco.mj_kinematics(model, data)
        T = reference(row)
        assert np.linalg.norm(data.xpos[body] - T[:3, 3]) < TOLERANCE_M
        assert np.abs(data.xmat[body].reshape(3, 3) - T[:3, :3]).max() < 1e-9


def test_every_registered_robot_loads_with_its_home_pose_inside_its_limits(repo_root: Path) -> None:
    for model in ROBOT_MODELS.values():
        kinematics = Kinematics.from_urdf(repo_root / model.urdf, model.needle_length_m, model.mount_frame)
        assert kinematics.n_joints == model.n_joints == len(model.velocity) == len(model.jerk)
        assert kinematics.limit_violations(np.array(model.home_q), model.joint_limit_margin) == []
        every = ArmCapsules(kinematics)
        through_port = ArmCapsules(kinematics, exempt_links=model.port_links)
        assert set(every.link_names) - set(through_port.link_names) == set(model.port_links)


def test_a_port_link_the_urdf_lacks_is_named(repo_root: Path) -> None:
    model = robot_model("dvrk_psm")
    kinematics = Kinematics.from_urdf(repo_root / model.urdf, model.needle_length_m, model.mount_frame)
    with pytest.raises(RobotModelError, match="no link 'shaft_link'"):
        ArmCapsules(kinematics, exempt_links=("shaft_link",))


def _robot_section(tmp_path: Path, text: str) -> RobotConfig:
    path = tmp_path / "robot.yaml"
    path.write_text(text)
    return RobotConfig.from_config(load_config(path)["robot"])


def test_a_configuration_chooses_the_robot_by_name_and_overrides_its_values(tmp_path: Path) -> None:
    psm = _robot_section(tmp_path, "robot: {model: dvrk_psm, needle_length_m: 0.02}\n")
    assert psm.model.name == "dvrk_psm"
    assert psm.kinematics.n_joints == 6
    assert psm.kinematics.needle_length_m == 0.02
    assert psm.limits.velocity[2] == pytest.approx(0.2)  # m/s, the insertion
    assert psm.port_links == ("roll_link", "wrist_pitch_link", "wrist_yaw_link")
    er3 = _robot_section(tmp_path, "robot: {needle_length_m: 0.3}\n")  # no model: the ER3 Pro, as before
    assert er3.model.name == "xmate_er3_pro"
    assert er3.kinematics.n_joints == 7


def test_an_unknown_robot_is_one_clear_error(tmp_path: Path) -> None:
    expected = r"robot\.model: expected one of 'xmate_er3_pro', 'dvrk_psm', 'raven2', got 'ur5'"
    with pytest.raises(ConfigError, match=expected):
        _robot_section(tmp_path, "robot: {model: ur5}\n")


def test_a_joint_type_the_code_does_not_handle_is_named(tmp_path: Path, repo_root: Path) -> None:
    text = (repo_root / "urdf" / "dvrk_psm.urdf").read_text()
    broken = tmp_path / "psm_continuous.urdf"
    joint = '<joint name="wrist_yaw" type="{}">'
    broken.write_text(text.replace(joint.format("revolute"), joint.format("continuous")))
    with pytest.raises(RobotModelError, match="'wrist_yaw' is a continuous joint; only revolute and prismatic"):
        Kinematics.from_urdf(broken, 0.01, "tool_tip")
    with pytest.raises(ConfigError, match=r"robot\.urdf.*'wrist_yaw' is a continuous joint"):
        _robot_section(tmp_path, f"robot: {{model: dvrk_psm, urdf: {broken}}}\n")
