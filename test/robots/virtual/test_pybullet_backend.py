"""PyBullet, the second engine, runs the same plan as MuJoCo to within a stated tolerance.

Both engines simulate the same rigid bodies read from the same URDF, with the same servo, reference and
integration scheme (semi-implicit Euler with the velocity terms implicit). What may differ is the
engines' own rigid-body dynamics (mass matrix, gravity, Coriolis) and their round-off. Tolerance:
measured joints within 1e-8 rad and actual tips within 1e-6 m (1 micrometre; PyBullet reports link
poses with single-precision round-off) over a whole five-stage case.
"""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import execute_trajectory
from cosim_validation.robots.virtual.pybullet_backend import PybulletBackend

JOINT_TOLERANCE_RAD = 1e-8
TIP_TOLERANCE_M = 1e-6


@pytest.fixture(scope="module")
def records(
    config: ConfigNode, kinematics: Kinematics, plan: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> dict[str, TrajectoryRecord]:
    out = {}
    for name in ("mujoco", "pybullet"):
        backend = make_backend(name, config, kinematics)
        out[name] = execute_trajectory(backend, kinematics, *plan, test_id="cross-engine")
        backend.close()
    return out


def test_engines_agree_on_a_whole_case(records: dict[str, TrajectoryRecord]) -> None:
    mujoco, pybullet = records["mujoco"], records["pybullet"]
    np.testing.assert_array_equal(mujoco.t_s, pybullet.t_s)
    assert np.abs(mujoco.q_measured - pybullet.q_measured).max() < JOINT_TOLERANCE_RAD
    tip_gap_m = np.linalg.norm(mujoco.actual_tip_pos_m - pybullet.actual_tip_pos_m, axis=1)
    assert tip_gap_m.max() < TIP_TOLERANCE_M
    quat_gap = np.minimum(
        np.abs(mujoco.actual_tip_quat_wxyz - pybullet.actual_tip_quat_wxyz).max(axis=1),
        np.abs(mujoco.actual_tip_quat_wxyz + pybullet.actual_tip_quat_wxyz).max(axis=1),
    )
    assert quat_gap.max() < 1e-6


def test_agreement_is_not_trivial(records: dict[str, TrajectoryRecord]) -> None:
    """Both arms lag the plan by far more than they differ from each other."""
    for record in records.values():
        lag_rad = np.abs(record.q_measured - record.q_setpoint).max()
        assert lag_rad > 100 * JOINT_TOLERANCE_RAD


def test_pybullet_ground_truth_equals_nominal_fk(records: dict[str, TrajectoryRecord]) -> None:
    record = records["pybullet"]
    gap_m = np.linalg.norm(record.actual_tip_pos_m - record.tip_pos_m, axis=1)
    assert gap_m.max() < TIP_TOLERANCE_M


def test_close_is_idempotent(config: ConfigNode, kinematics: Kinematics) -> None:
    backend = make_backend("pybullet", config, kinematics)
    assert isinstance(backend, PybulletBackend)
    backend.close()
    backend.close()
