"""Compact records rebuild the executed records to within one quantization step, and are much smaller."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.assembly import AssemblySpec, CaseAssembly
from cosim_validation.campaign.case_pipeline import run_case, shared_assembly
from cosim_validation.campaign.record_codec import POS_STEP_M, Q_STEP_RAD, decode_record, encode_record, is_plan
from cosim_validation.coverage import Suite
from cosim_validation.exceptions import InputError
from cosim_validation.record import TrajectoryRecord
from cosim_validation.robot import Kinematics
from test.campaign.run_fixtures import CONFIG


@pytest.fixture(scope="module")
def world() -> CaseAssembly:
    return shared_assembly(AssemblySpec(str(CONFIG), ("mujoco", "emulated"), "straight"))


@pytest.fixture(scope="module")
def kinematics(world: CaseAssembly) -> Kinematics:
    return world.kinematics


@pytest.fixture(scope="module")
def records(world: CaseAssembly, suites: tuple[Path, Path]) -> dict[str, TrajectoryRecord]:
    """A planned case: its expected record and its execution on MuJoCo and on the emulated arm."""
    suite = Suite.read(suites[0])
    for i in range(len(suite)):
        result = run_case(world, suite.case(i), i)
        if result.trajectories:
            return {r.backend: r for r in result.trajectories}
    raise AssertionError("no case of the grid suite could be planned")


@pytest.mark.parametrize("name", ["plan", "mujoco", "emulated"])
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
    np.testing.assert_allclose(back.q_setpoint, record.q_setpoint, rtol=0, atol=Q_STEP_RAD / 2 + 1e-15)
    np.testing.assert_allclose(back.q_measured, record.q_measured, rtol=0, atol=Q_STEP_RAD / 2 + 1e-15)
    # a plan's actual tip is its FK tip; a robot's is stored
    actual_atol = 20 * Q_STEP_RAD if name == "plan" else POS_STEP_M / 2 + 1e-15
    np.testing.assert_allclose(back.actual_tip_pos_m, record.actual_tip_pos_m, rtol=0, atol=actual_atol)
    # derived arrays come back by forward kinematics of the (quantized) measured joints
    np.testing.assert_allclose(back.tip_pos_m, record.tip_pos_m, rtol=0, atol=20 * Q_STEP_RAD)
    np.testing.assert_allclose(back.joint_axis, record.joint_axis, rtol=0, atol=20 * Q_STEP_RAD)
    assert is_plan(back) == (name == "plan")


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
