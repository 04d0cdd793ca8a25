"""Compact records rebuild the executed records to within one quantization step, and are much smaller."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.campaign.record_codec import POS_STEP_M, Q_STEP_RAD, decode_record, encode_record, is_plan
from cosim_validation.config import load_config
from cosim_validation.exceptions import InputError
from cosim_validation.record import RobotRole, TrajectoryRecord
from cosim_validation.robot import Kinematics, RobotConfig
from cosim_validation.sim import execute_trajectory, make_backend
from test.sim.plans import CONFIG_PATH, five_stage_plan


@pytest.fixture(scope="module")
def kinematics() -> Kinematics:
    return RobotConfig.from_config(load_config(CONFIG_PATH)["robot"]).kinematics


def _plan_record(kinematics: Kinematics, t_s: np.ndarray, stage: np.ndarray, q: np.ndarray) -> TrajectoryRecord:
    fk = kinematics.record_arrays(q)
    return TrajectoryRecord(
        test_id="c1",
        robot=RobotRole.EXPECTED,
        backend="plan",
        joint_names=kinematics.joint_names,
        needle_length_m=kinematics.needle_length_m,
        t_s=t_s,
        stage=stage,
        q_setpoint_rad=q,
        q_measured_rad=q,
        joint_pos_m=fk.joint_pos_m,
        joint_axis=fk.joint_axis,
        tip_pos_m=fk.tip_pos_m,
        tip_quat_wxyz=fk.tip_quat_wxyz,
        actual_tip_pos_m=fk.tip_pos_m,
        actual_tip_quat_wxyz=fk.tip_quat_wxyz,
        meta={"controller": "straight"},
    )


@pytest.fixture(scope="module")
def records(kinematics: Kinematics) -> dict[str, TrajectoryRecord]:
    """The plan as an expected record, and its execution on MuJoCo and on the emulated arm."""
    config = load_config(CONFIG_PATH)
    t_s, stage, q = five_stage_plan(RobotConfig.from_config(config["robot"]).home_q_rad)
    out = {"expected": _plan_record(kinematics, t_s, stage, q)}
    for name in ("mujoco", "emulated"):
        out[name] = execute_trajectory(make_backend(name, config, kinematics), kinematics, t_s, stage, q, test_id="c1")
    return out


@pytest.mark.parametrize("name", ["expected", "mujoco", "emulated"])
def test_round_trip_within_one_step(name: str, records: dict[str, TrajectoryRecord], kinematics: Kinematics) -> None:
    record = records[name]
    blob = encode_record(record)
    back = decode_record(blob, kinematics, "test")
    assert len(blob) * 5 < len(record.to_bytes())
    assert (back.test_id, back.robot, back.backend, back.meta) == (
        record.test_id,
        record.robot,
        record.backend,
        record.meta,
    )
    np.testing.assert_array_equal(back.stage, record.stage)
    np.testing.assert_allclose(back.t_s, record.t_s, rtol=0, atol=1e-9)
    np.testing.assert_allclose(back.q_setpoint_rad, record.q_setpoint_rad, rtol=0, atol=Q_STEP_RAD / 2 + 1e-15)
    np.testing.assert_allclose(back.q_measured_rad, record.q_measured_rad, rtol=0, atol=Q_STEP_RAD / 2 + 1e-15)
    # a plan's actual tip is its FK tip; a robot's is stored
    actual_atol = 20 * Q_STEP_RAD if name == "expected" else POS_STEP_M / 2 + 1e-15
    np.testing.assert_allclose(back.actual_tip_pos_m, record.actual_tip_pos_m, rtol=0, atol=actual_atol)
    # derived arrays come back by forward kinematics of the (quantized) measured joints
    np.testing.assert_allclose(back.tip_pos_m, record.tip_pos_m, rtol=0, atol=20 * Q_STEP_RAD)
    np.testing.assert_allclose(back.joint_axis, record.joint_axis, rtol=0, atol=20 * Q_STEP_RAD)
    assert is_plan(back) == (name == "expected")


def test_full_records_still_read(records: dict[str, TrajectoryRecord]) -> None:
    record = records["mujoco"]
    back = decode_record(record.to_bytes(), None, "test")
    np.testing.assert_array_equal(back.tip_pos_m, record.tip_pos_m)


def test_bad_input(records: dict[str, TrajectoryRecord], kinematics: Kinematics) -> None:
    blob = encode_record(records["mujoco"])
    with pytest.raises(InputError, match="needs the robot model"):
        decode_record(blob, None, "run/results.sqlite:c1/virtual")
    with pytest.raises(InputError, match="junk: not a trajectory record"):
        decode_record(b"no npz here", kinematics, "junk")
