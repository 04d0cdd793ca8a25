"""Forward kinematics, tip pose and Jacobian against MuJoCo, pinocchio and finite differences."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from cosim_validation.common.record import RobotRole, TrajectoryRecord
from cosim_validation.robots.model import Kinematics, KinematicsInputError, RobotModelError, load_chain

N_RANDOM = 200


def _random_q(kinematics: Kinematics, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(kinematics.q_lower, kinematics.q_upper, size=(n, kinematics.n_joints))


@pytest.fixture(scope="module")
def mujoco_model(kinematics: Kinematics) -> object:
    """The same URDF in MuJoCo, keeping the fixed frames as bodies (fusestatic off)."""
    mujoco = pytest.importorskip("mujoco")
    text = Path(kinematics.chain.urdf_path).read_text()
    text = re.sub(r"(<robot[^>]*>)", r'\1<mujoco><compiler fusestatic="false"/></mujoco>', text, count=1)
    return mujoco.MjModel.from_xml_string(text)


def test_fk_agrees_with_mujoco_bodies(kinematics: Kinematics, mujoco_model: object) -> None:
    import mujoco

    model = mujoco_model
    data = mujoco.MjData(model)
    q = _random_q(kinematics, N_RANDOM, seed=1)
    arrays = kinematics.record_arrays(q)
    joint_ids = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name) for name in kinematics.joint_names]
    links = [model.jnt_bodyid[j] for j in joint_ids]
    mount = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "needle_mount")
    assert min(joint_ids) >= 0
    assert mount >= 0
    for i in range(N_RANDOM):
        data.qpos[[model.jnt_qposadr[j] for j in joint_ids]] = q[i]
        mujoco.mj_kinematics(model, data)
        np.testing.assert_allclose(arrays.joint_pos_m[i], data.xpos[links], atol=1e-6)
        np.testing.assert_allclose(arrays.joint_pos_m[i], data.xanchor[joint_ids], atol=1e-6)
        np.testing.assert_allclose(arrays.joint_axis[i], data.xaxis[joint_ids], atol=1e-9)
        R_mount = data.xmat[mount].reshape(3, 3)
        tip = data.xpos[mount] + kinematics.needle_length_m * R_mount[:, 2]
        np.testing.assert_allclose(arrays.tip_pos_m[i], tip, atol=1e-6)
        R_tip = Rotation.from_quat(arrays.tip_quat_wxyz[i], scalar_first=True).as_matrix()
        np.testing.assert_allclose(R_tip, R_mount, atol=1e-9)


def test_tip_agrees_with_pinocchio(kinematics: Kinematics) -> None:
    import pinocchio as pin

    model = kinematics.chain.model
    data = model.createData()
    mount = model.getFrameId("needle_mount")
    for q in _random_q(kinematics, 50, seed=2):
        pin.framesForwardKinematics(model, data, q)
        placement = data.oMf[mount]
        pose = kinematics.tip_pose(q)
        expected = placement.translation + kinematics.needle_length_m * placement.rotation[:, 2]
        np.testing.assert_allclose(pose.pos_m, expected, atol=1e-12)
        np.testing.assert_allclose(pose.R, placement.rotation, atol=1e-12)


def test_jacobian_matches_finite_differences(kinematics: Kinematics) -> None:
    h = 1e-6
    for q in _random_q(kinematics, 30, seed=3):
        J = kinematics.tip_jacobian(q)
        numeric = np.empty((6, kinematics.n_joints))
        for j in range(kinematics.n_joints):
            dq = np.zeros(kinematics.n_joints)
            dq[j] = h
            plus, minus = kinematics.tip_pose(q + dq), kinematics.tip_pose(q - dq)
            numeric[:3, j] = (plus.pos_m - minus.pos_m) / (2 * h)
            numeric[3:, j] = Rotation.from_matrix(plus.R @ minus.R.T).as_rotvec() / (2 * h)
        np.testing.assert_allclose(J, numeric, atol=1e-6)


def test_jacobian_matches_pinocchio_frame_jacobian(kinematics: Kinematics) -> None:
    import pinocchio as pin

    model = kinematics.chain.model.copy()
    mount = model.getFrameId("needle_mount")
    tip_placement = model.frames[mount].placement * pin.SE3(np.eye(3), np.array([0, 0, kinematics.needle_length_m]))
    tip = model.addFrame(pin.Frame("needle_tip", model.frames[mount].parentJoint, mount, tip_placement, pin.OP_FRAME))
    data = model.createData()
    for q in _random_q(kinematics, 20, seed=4):
        expected = pin.computeFrameJacobian(model, data, q, tip, pin.LOCAL_WORLD_ALIGNED)
        np.testing.assert_allclose(kinematics.tip_jacobian(q), expected, atol=1e-12)


def test_record_arrays_fit_a_trajectory_record(kinematics: Kinematics) -> None:
    q = _random_q(kinematics, 7, seed=5)
    arrays = kinematics.record_arrays(q)
    n = len(q)
    record = TrajectoryRecord(
        test_id="fk",
        robot=RobotRole.EXPECTED,
        backend="plan",
        joint_names=kinematics.joint_names,
        needle_length_m=kinematics.needle_length_m,
        t_s=np.arange(n) * 0.1,
        stage=np.ones(n, dtype=np.uint8),
        q_setpoint=q,
        q_measured=q,
        joint_pos_m=arrays.joint_pos_m,
        joint_axis=arrays.joint_axis,
        tip_pos_m=arrays.tip_pos_m,
        tip_quat_wxyz=arrays.tip_quat_wxyz,
        actual_tip_pos_m=arrays.tip_pos_m,
        actual_tip_quat_wxyz=arrays.tip_quat_wxyz,
    )
    mounts, tips = kinematics.needle_segments(q)
    np.testing.assert_allclose(record.tip_axis, (tips - mounts) / kinematics.needle_length_m, atol=1e-12)
    np.testing.assert_allclose(record.needle_base_m, mounts, atol=1e-12)
    assert np.all(record.tip_quat_wxyz[:, 0] >= 0)
    np.testing.assert_allclose(np.linalg.norm(record.joint_axis, axis=2), 1.0, atol=1e-12)


def test_zero_pose_is_straight_up(kinematics: Kinematics) -> None:
    """ROBOTS.md 1.2: zero pose points the arm up; the holder ends above the base by the summed offsets and
    guides the needle at 45 deg to the flange axis (about the flange y axis)."""
    pose = kinematics.tip_pose(np.zeros(kinematics.n_joints))
    height = 0.34260487 + 0.23743878 + 0.15549959 + 0.22044633 + 0.14512568 + 0.25090877 + 0.02 + 0.06
    axis = np.array([np.sqrt(0.5), 0.0, np.sqrt(0.5)])
    np.testing.assert_allclose(pose.axis, axis, atol=1e-12)
    np.testing.assert_allclose(pose.pos_m, [0, 0, height] + kinematics.needle_length_m * axis, atol=1e-12)


def test_needle_length_moves_tip_along_axis(kinematics: Kinematics) -> None:
    longer = kinematics.with_needle_length(kinematics.needle_length_m + 0.05)
    for q in _random_q(kinematics, 10, seed=6):
        a, b = kinematics.tip_pose(q), longer.tip_pose(q)
        np.testing.assert_allclose(b.pos_m - a.pos_m, 0.05 * a.axis, atol=1e-12)


@pytest.mark.parametrize("length", [0.0, -0.1, float("nan"), float("inf"), 1e-9, 1e300])
def test_bad_needle_length_is_rejected(kinematics: Kinematics, length: float) -> None:
    """1e-9 m and 1e300 m reached MuJoCo, which failed with a traceback (issue 15)."""
    with pytest.raises(KinematicsInputError, match=r"needle_length_m must be a needle's length, 0\.001 to 1 m"):
        kinematics.with_needle_length(length)


@pytest.mark.parametrize(
    ("q", "message"),
    [
        (np.zeros(6), r"shape \(n, 7\)"),
        (np.zeros((2, 8)), r"one joint vector of shape \(7,\), got \(2, 8\)"),
        # a batch given where one vector is taken: not cut to its first row
        (np.zeros((2, 7)), r"one joint vector of shape \(7,\), got \(2, 7\)"),
        (np.array([0, 0, np.nan, 0, 0, 0, 0]), r"q\[0, 2\] \(joint3\) is not finite"),
        (np.array([0, 0, 0, 0, 0, np.inf, 0]), r"\(joint6\) is not finite"),
    ],
)
def test_bad_joint_vectors_are_rejected(kinematics: Kinematics, q: np.ndarray, message: str) -> None:
    with pytest.raises(KinematicsInputError, match=message):
        kinematics.tip_pose(q)
    if q.ndim == 2:  # every method of one joint vector refuses a batch
        for method in (kinematics.tip_jacobian, kinematics.tip_transform, kinematics.check_limits):
            with pytest.raises(KinematicsInputError, match="one joint vector"):
                method(q)
        with pytest.raises(KinematicsInputError, match=r"q_posture must be one joint vector"):
            kinematics.check_limits(q, name="q_posture")  # named as the caller names it


def test_limit_violation_names_the_joint(kinematics: Kinematics) -> None:
    q = np.zeros(kinematics.n_joints)
    q[1] = 2.5
    with pytest.raises(KinematicsInputError, match=r"joint2 = 2\.5 rad outside \[-2\.0944, 2\.0944\]"):
        kinematics.check_limits(q)
    assert kinematics.limit_violations(np.zeros(kinematics.n_joints)) == []


def test_missing_urdf_and_unknown_frame(tmp_path: Path, kinematics: Kinematics) -> None:
    with pytest.raises(RobotModelError, match="URDF file not found"):
        load_chain(tmp_path / "none.urdf", "needle_mount")
    with pytest.raises(RobotModelError, match="no frame 'tool0'"):
        load_chain(kinematics.chain.urdf_path, "tool0")
    with pytest.raises(RobotModelError, match="not after the last joint"):
        load_chain(kinematics.chain.urdf_path, "link3")
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'/>")
    with pytest.raises(RobotModelError, match="cannot read the URDF"):
        load_chain(bad, "a")
