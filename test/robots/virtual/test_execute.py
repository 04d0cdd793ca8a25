"""Executing a plan yields a complete TrajectoryRecord; malformed plans are refused with the sample named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import BackendInputError, RobotBackend, execute_trajectory

Plan = tuple[np.ndarray, np.ndarray, np.ndarray]


@pytest.fixture(scope="module")
def mujoco(config: ConfigNode, kinematics: Kinematics) -> RobotBackend:
    return make_backend("mujoco", config, kinematics)


@pytest.fixture(scope="module")
def record(mujoco: RobotBackend, kinematics: Kinematics, plan: Plan) -> TrajectoryRecord:
    return execute_trajectory(mujoco, kinematics, *plan, test_id="case-7", meta={"controller": "straight"})


def test_record_holds_the_plan_and_the_run(record: TrajectoryRecord, kinematics: Kinematics, plan: Plan) -> None:
    t_s, stage, q = plan
    assert (record.test_id, record.backend, record.robot) == ("case-7", "mujoco", RobotRole.VIRTUAL)
    assert record.meta == {"controller": "straight"}
    assert record.joint_names == kinematics.joint_names
    assert record.needle_length_m == kinematics.needle_length_m
    np.testing.assert_allclose(record.t_s, t_s, atol=1e-12)
    np.testing.assert_array_equal(record.stage, stage)
    np.testing.assert_array_equal(record.q_setpoint, q)
    assert [Stage(s) for s in dict.fromkeys(record.stage.tolist())] == [
        Stage.INITIALIZATION,
        Stage.APPROACH,
        Stage.INJECTION,
        Stage.EXTRACTION,
        Stage.RESET,
    ]


def test_fk_fields_come_from_the_measured_joints(record: TrajectoryRecord, kinematics: Kinematics) -> None:
    fk = kinematics.record_arrays(record.q_measured)
    np.testing.assert_array_equal(record.joint_pos_m, fk.joint_pos_m)
    np.testing.assert_array_equal(record.joint_axis, fk.joint_axis)
    np.testing.assert_array_equal(record.tip_pos_m, fk.tip_pos_m)
    np.testing.assert_array_equal(record.tip_quat_wxyz, fk.tip_quat_wxyz)
    assert not np.array_equal(record.q_measured, record.q_setpoint)


def test_virtual_actual_tip_is_ground_truth(record: TrajectoryRecord) -> None:
    assert record.has_actual_tip
    np.testing.assert_allclose(record.actual_tip_pos_m, record.tip_pos_m, atol=1e-9)


def test_record_survives_a_round_trip(record: TrajectoryRecord) -> None:
    again = TrajectoryRecord.from_bytes(record.to_bytes())
    np.testing.assert_array_equal(again.actual_tip_pos_m, record.actual_tip_pos_m)
    assert again.backend == "mujoco"


def _plan_with(plan: Plan, index: int, change: Callable[[np.ndarray], Any]) -> list[Any]:
    parts: list[Any] = [a.copy() for a in plan]
    parts[index] = change(parts[index])
    return parts


def _set(array: np.ndarray, where: tuple[int, ...], value: float) -> np.ndarray:
    array = array.copy()
    array[where] = value
    return array


@pytest.mark.parametrize(
    ("index", "change", "match"),
    [
        (0, lambda t: t[:0], r"plan t_s: expected a 1-D array of n >= 1 times"),
        (0, lambda t: _set(t, (5,), np.nan), r"plan t_s\[5\] is not finite"),
        (0, lambda t: _set(t, (5,), t[4]), r"plan t_s must increase strictly; t_s\[5\] = 0\.4 after 0\.4"),
        (1, lambda s: s[:-1], r"plan stage: expected \(211,\) Stage values"),
        (1, lambda s: _set(s, (3,), 9), r"plan stage: expected \(211,\) Stage values"),
        (2, lambda q: q[:, :6], r"plan q_setpoint: expected shape \(211, 7\), got \(211, 6\)"),
        (2, lambda q: _set(q, (12, 4), np.inf), r"plan q_setpoint\[12\] \(joint5 = inf rad\) is not finite"),
        (2, lambda q: _set(q, (30, 1), -3.0), r"\(joint2 = -3\.0 rad\) .* outside \[-2\.0944, 2\.0944\] rad"),
    ],
)
def test_malformed_plans_are_refused(
    mujoco: RobotBackend, kinematics: Kinematics, plan: Plan, index: int, change: Any, match: str
) -> None:
    with pytest.raises(BackendInputError, match=match):
        execute_trajectory(mujoco, kinematics, *_plan_with(plan, index, change))


def test_a_single_sample_plan_is_the_rest_pose(mujoco: RobotBackend, kinematics: Kinematics, plan: Plan) -> None:
    t_s, stage, q = plan
    one = execute_trajectory(mujoco, kinematics, t_s[:1], stage[:1], q[:1])
    assert one.n_samples == 1
    np.testing.assert_allclose(one.q_measured, q[:1])


def test_a_prismatic_joint_outside_its_limits_is_named_in_metres(repo_root: Path) -> None:
    """The dVRK PSM's insertion joint is prismatic: the refusal gives its value and limits in m."""
    from cosim_validation.common.config import load_config
    from cosim_validation.robots.model import RobotConfig

    config = load_config(repo_root / "config" / "dvrk_psm_insertion.yaml")
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    backend = make_backend("mujoco", config, kinematics)
    insertion = kinematics.joint_units.index("m")
    q = np.tile(np.clip(np.zeros(kinematics.n_joints), kinematics.q_lower, kinematics.q_upper), (3, 1))
    q[2, insertion] = kinematics.q_upper[insertion] + 0.5
    t_s, stage = np.array([0.0, 0.1, 0.2]), np.full(3, int(Stage.INITIALIZATION))
    name = kinematics.joint_names[insertion]
    with pytest.raises(BackendInputError, match=rf"q_setpoint\[2\] \({name} = [0-9.]+ m\) .* outside \[.*\] m$"):
        execute_trajectory(backend, kinematics, t_s, stage, q)
