"""The ``errors`` robot filter: the simulated robot is commanded setpoint + a1 + a2 and reports its encoders."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.assembly.robots import build_robot
from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.error_injection.error_types import ModelFileError
from cosim_validation.error_injection.injection import ErrorInjector, parse_errors_options
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.robots.filters.robot_filter import FilteredBackend
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.robots.robot_backend import BackendSample
from test.error_injection.synthetic import random_walk


def _sample(q: np.ndarray) -> BackendSample:
    return BackendSample(0.0, q, q, np.full(3, np.nan), np.full(4, np.nan))


def test_the_command_is_setpoint_plus_both_offsets_from_the_robots_own_history(
    synthetic_model: ErrorModel, kinematics: Kinematics
) -> None:
    injector = ErrorInjector(synthetic_model, kinematics.q_lower - 1.0, kinematics.q_upper + 1.0, "m")
    path = random_walk(kinematics, 40, seed=7)
    injector.reset(path[0], 0)
    nn1, nn2 = synthetic_model.nn1, synthetic_model.nn2
    previous, direction1 = path[0], np.zeros(kinematics.n_joints)
    for q_s in path[1:]:
        q = injector.command(0.0, q_s)
        direction1 = np.where(np.abs(q_s - previous) > nn1.features.deadband, np.sign(q_s - previous), direction1)
        a1 = nn1.predict(np.concatenate((q_s, direction1)))
        a2 = nn2.predict(q_s + a1)  # NN2 is OC in the synthetic model: the measured joints only
        np.testing.assert_allclose(q, q_s + a1 + a2, atol=1e-15)
        seen = injector.observe(_sample(q + 1e-5))  # the simulator lands close to its command
        np.testing.assert_allclose(seen.q_measured, q + 1e-5 - a2, atol=1e-15)  # its encoders: the links less a2
        previous = seen.q_measured  # the history is the filtered robot's own reading


def test_a_plain_list_is_a_joint_vector_and_a_bad_one_is_named(
    synthetic_model: ErrorModel, kinematics: Kinematics
) -> None:
    injector = ErrorInjector(synthetic_model, kinematics.q_lower - 1.0, kinematics.q_upper + 1.0, "m")
    path = random_walk(kinematics, 3, seed=7)
    injector.reset(path[0], 0)
    as_array = injector.offsets(path[1])
    injector.reset([float(v) for v in path[0]], 0)  # the same from lists
    as_list = injector.offsets([float(v) for v in path[1]])
    np.testing.assert_array_equal(as_array[0], as_list[0])
    np.testing.assert_array_equal(as_array[1], as_list[1])
    for bad in (path[1][:-1], np.vstack((path[1], path[2]))):
        with pytest.raises(InputError, match=r"errors:m: q_setpoint must be 7 joint values"):
            injector.command(0.0, bad)
    # a NaN setpoint goes on to the robot, whose command checks refuse it with the robot's name
    assert np.isnan(injector.command(0.0, np.r_[path[1][:-1], np.nan])[-1])
    for bad in (path[0][:3], np.r_[path[0][:-1], np.nan]):
        with pytest.raises(InputError, match=r"errors:m: q0 must be 7 finite joint values"):
            injector.reset(bad, 0)


def test_commands_stay_inside_the_joint_limits(synthetic_model: ErrorModel, kinematics: Kinematics) -> None:
    injector = ErrorInjector(synthetic_model, kinematics.q_lower, kinematics.q_upper, "m")
    injector.reset(kinematics.q_upper, 0)
    q = injector.command(0.0, kinematics.q_upper)
    assert (q <= kinematics.q_upper).all()
    assert (q >= kinematics.q_lower).all()


def test_the_filtered_mujoco_arm_reaches_where_the_physical_one_would(
    config: ConfigNode, kinematics: Kinematics, robot_config: RobotConfig, model_path: Path
) -> None:
    robot = build_robot(config, "mujoco", kinematics, filters=[f"errors:model={model_path}"])
    assert isinstance(robot, FilteredBackend)
    assert robot.name == "mujoco+errors:er3pro-synthetic"
    injector = robot.filters[0]
    assert isinstance(injector, ErrorInjector)
    home = robot_config.home_q
    robot.reset(home)
    target = home + 0.05
    for _ in range(30):  # hold for 3 s: the servo settles on target + a1 + a2
        robot.command(target, 0.1)
        robot.advance(0.1)
    sample = robot.read()
    a1, a2 = injector.last_offsets
    assert np.abs(a1 + a2).max() > 3e-4  # the model's offsets are not negligible
    np.testing.assert_allclose(sample.q_measured, target + a1, atol=3e-5)  # the encoders read like the physical arm
    np.testing.assert_allclose(sample.actual_tip_pos_m, kinematics.tip_pose(target + a1 + a2).pos_m, atol=2e-5)
    robot.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("", "name the model file: errors:model=PATH"),
        ("model=", "expected model=PATH"),
        ("path=a.npz", r"expected model=PATH\[,sample=SEED\], got 'path=a.npz'"),
        ("model=a.npz,model=b.npz", "model given twice"),
    ],
)
def test_bad_options_are_named(options: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_errors_options(options)


def test_a_missing_or_foreign_model_is_refused(
    config: ConfigNode, kinematics: Kinematics, synthetic_model: ErrorModel, tmp_path: Path
) -> None:
    with pytest.raises(ModelFileError, match=r"errors filter: .*missing\.npz: cannot read the error model"):
        build_robot(config, "mujoco", kinematics, filters=[f"errors:model={tmp_path / 'missing.npz'}"])
    foreign = tmp_path / "foreign.npz"
    replace(synthetic_model, robot=RobotIdentity(kinematics.joint_names, "f" * 64)).save(foreign)
    with pytest.raises(ModelFileError, match="made for another robot model"):
        build_robot(config, "mujoco", kinematics, filters=[f"errors:model={foreign}"])
