"""The kinematic calibration in the model file (version 3) and in the injector: stored exactly, older files read as
"no kinematic calibration", a damaged entry named, and the injector adds the calibrated joints' offsets."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.error_injection.error_types import ModelFileError
from cosim_validation.error_injection.features import DEFAULT_DEADBAND
from cosim_validation.error_injection.injection import ErrorInjector
from cosim_validation.error_injection.joint_map import JointMap
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample
from test.error_injection.synthetic import random_walk
from test.error_injection.test_model_file import _rewritten

SHIPPED_V1 = Path(__file__).parent / "data" / "er3_emulated.npz"


def _joint_map(n_joints: int) -> JointMap:
    rng = np.random.default_rng(7)
    return JointMap(
        rng.normal(0.0, 5e-3, n_joints),
        1.0 + rng.normal(0.0, 0.01, n_joints),
        ((n_joints - 2, n_joints - 1),),
        np.array([0.03]),
        np.full(n_joints, -2e-3),
    )


def test_a_calibrated_model_round_trips_as_version_3(synthetic_model: ErrorModel, tmp_path: Path) -> None:
    model = replace(synthetic_model, joint_map=_joint_map(synthetic_model.robot.n_joints))
    path = tmp_path / "m.npz"
    model.save(path)
    back = ErrorModel.load(path).joint_map
    assert back is not None
    assert model.joint_map is not None
    for name in ("offset", "scale", "coupling", "lost_motion"):
        np.testing.assert_array_equal(getattr(back, name), getattr(model.joint_map, name))
    assert back.coupled == model.joint_map.coupled


def test_older_files_read_as_without_a_kinematic_calibration(synthetic_model: ErrorModel) -> None:
    assert ErrorModel.load(SHIPPED_V1).joint_map is None  # version 1
    version_2 = _rewritten(synthetic_model.to_bytes(), {"version": 2})
    assert ErrorModel.from_bytes(version_2, "m.npz").joint_map is None


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        ({"scale": [1.0]}, "header: kinematic.scale: expected 7 finite numbers"),
        ({"coupled": [[5, 9]]}, "header: kinematic.coupled: expected pairs of joint indices in 0..6"),
        ({"lost_motion": None}, "header: kinematic.lost_motion: expected 7 finite numbers"),
        # physically none: scale 0 froze the arm (1.6 m from the target, exit 0); 1e6 rad failed the first case late
        ({"scale": [0.0] * 7}, r"header: kinematic.scale\[0\]: 0 is no arm's calibration; expected 0.5 to 2"),
        ({"offset": [1e6] + [0.0] * 6}, r"header: kinematic.offset\[0\]: 1e\+06 is no arm's calibration"),
        ({"coupling": [5.0]}, r"header: kinematic.coupling\[0\]: 5 is no arm's calibration"),
    ],
)
def test_a_damaged_kinematic_entry_is_named(synthetic_model: ErrorModel, edit: dict[str, object], message: str) -> None:
    joint_map = _joint_map(synthetic_model.robot.n_joints)
    entry = joint_map.to_json(synthetic_model.robot.joint_names) | edit
    data = _rewritten(replace(synthetic_model, joint_map=joint_map).to_bytes(), {"kinematic": entry})
    with pytest.raises(ModelFileError, match=f"m.npz: {message}"):
        ErrorModel.from_bytes(data, "m.npz")
    with pytest.raises(ModelFileError, match="'kinematic' in a version-2 file"):
        ErrorModel.from_bytes(_rewritten(data, {"version": 2, "kinematic": entry | {}}), "m.npz")


def test_the_injector_adds_the_calibrated_joints_offsets(synthetic_model: ErrorModel, kinematics: Kinematics) -> None:
    joint_map = _joint_map(kinematics.n_joints)
    plain = ErrorInjector(synthetic_model, kinematics.q_lower - 1.0, kinematics.q_upper + 1.0, "plain")
    calibrated = ErrorInjector(
        replace(synthetic_model, joint_map=joint_map), kinematics.q_lower - 1.0, kinematics.q_upper + 1.0, "cal"
    )
    setpoints = random_walk(kinematics, 40, seed=2)
    for injector in (plain, calibrated):
        injector.reset(setpoints[0], 0)
    moves = np.zeros(kinematics.n_joints)
    previous = setpoints[0]
    for q_s in setpoints[1:]:
        without, with_map = plain.command(0.0, q_s), calibrated.command(0.0, q_s)
        measured = q_s + plain.last_offsets[0]  # what the encoders would read: NN1's offset on the setpoint
        moves = np.where(np.abs(measured - previous) > DEFAULT_DEADBAND, np.sign(measured - previous), moves)
        expected = joint_map.apply(measured, moves)[0] - measured
        np.testing.assert_allclose(with_map - without, expected, atol=1e-12)
        assert np.abs(expected).max() > 1e-3  # the offsets are there, not zero
        for injector, command in ((plain, without), (calibrated, with_map)):
            observed = injector.observe(BackendSample(0.0, q_s, command, np.full(3, np.nan), np.full(4, np.nan)))
            np.testing.assert_allclose(observed.q_measured, measured, atol=1e-12)  # both report the encoders
        previous = measured
