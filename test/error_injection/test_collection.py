"""Collecting from the emulated physical arm: settled random steps and a held-out continuous motion, as a dataset."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.error_injection.collection import (
    CollectSettings,
    collect,
    continuous_setpoints,
    motion_box,
    training_setpoints,
)
from cosim_validation.error_injection.dataset_io import read_parquet
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.registry import make_backend


def test_the_motion_stays_in_the_box_in_small_steps(robot_config: RobotConfig) -> None:
    kin, home = robot_config.kinematics, robot_config.home_q
    settings = CollectSettings(goals=5, test_s=3.0)
    box = motion_box(home, kin.q_lower, kin.q_upper, settings.reach)
    train = training_setpoints(home, box, settings, settings.seed)
    assert np.abs(np.diff(np.vstack((home, train)), axis=0)).max() <= settings.step_rad + 1e-12
    span = settings.reach * (kin.q_upper - kin.q_lower)
    assert (np.abs(train - home) <= span + 1e-12).all()
    test = continuous_setpoints(home, box, settings, settings.seed)
    assert test.shape == (30, kin.n_joints)
    assert np.abs(test[0] - home).max() < 0.05  # starts at rest near home, moves continuously
    # at rest: the first period's speed is a small part of the motion's top speed (the sines alone start at speed)
    long = continuous_setpoints(home, box, CollectSettings(test_s=60.0), settings.seed)
    speed = np.abs(np.diff(np.vstack((home, long)), axis=0)).max(axis=1)
    assert speed[0] < 0.02 * speed.max()


def test_collect_from_the_emulated_arm(config: ConfigNode, robot_config: RobotConfig) -> None:
    kin = robot_config.kinematics
    backend = make_backend("emulated", config, kin)
    settings = CollectSettings(goals=2, test_s=2.0, motion_s=1.0, seed=3, repeats=4)
    data = collect(backend, kin, robot_config.home_q, settings)
    backend.close()
    assert set(data.set_name) == {"train", "test"}
    assert (data.set_name == "test").sum() == 20
    assert list(np.unique(data.segment)) == [0, 1, 2]  # settled steps, continuous training motion, held out
    home = robot_config.home_q
    steps = training_setpoints(home, motion_box(home, kin.q_lower, kin.q_upper, settings.reach), settings, 3)
    settled = data.segment == 0
    assert settled.sum() == 4 * len(steps)
    readings = data.q_measured[settled].reshape(len(steps), 4, kin.n_joints)
    np.testing.assert_array_equal(data.q_setpoint[settled], np.repeat(steps, 4, axis=0))
    # settled: the readings of one step differ by the encoders' noise only (1e-5 rad), not by motion
    assert np.abs(readings - readings[:, :1]).max() < 1e-4
    gap = np.abs(data.q_measured - data.q_setpoint).max()
    assert 1e-5 < gap < 0.05  # the emulated arm errs, a little
    assert data.marker_seen.any()
    seen = data.marker_seen
    assert (data.marker_error_m[seen] > 0).all()
    np.testing.assert_allclose(np.linalg.norm(data.marker_quat_wxyz[seen], axis=1), 1.0, atol=1e-9)


def test_collect_cli_writes_the_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.parquet"
    argv = ["errors", "collect", "-o", str(out), "--goals", "2", "--test-s", "1", "--motion-s", "1", "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["rows"]["test"] == 10
    assert read_parquet(out).meta["source"] == "cosim errors collect (emulated)"


def test_bad_collection_settings_are_named() -> None:
    with pytest.raises(InputError, match="goals, test_s out of range"):
        CollectSettings(goals=0, test_s=-1.0)
    with pytest.raises(InputError, match="repeats out of range"):
        CollectSettings(repeats=0)
    # shorter than one sample period: no held-out row at all (5e-324 was taken, the dataset unusable)
    with pytest.raises(InputError, match=r"test_s out of range \(expected test_s \[0.1, 86400\]: at least one"):
        CollectSettings(test_s=5e-324)
    with pytest.raises(InputError, match=r"motion_s out of range \(expected motion_s \[0.01, 86400\]"):
        CollectSettings(motion_s=0.005, rate_hz=100.0)


def test_a_collection_case_gives_the_rows_of_the_batch_collection(
    config: ConfigNode, robot_config: RobotConfig
) -> None:
    """The ``error_collection`` controller's plan run as a case (a record of every sample) gives, through
    ``dataset_of_collection_records``, the rows ``collect`` keeps; a record of another seed's motion is refused."""
    from dataclasses import replace

    from cosim_validation.controllers.collection_controller import CollectionController
    from cosim_validation.error_injection.collection_records import dataset_of_collection_records
    from cosim_validation.error_injection.error_types import DatasetError
    from cosim_validation.robots.virtual.execute import execute_trajectory

    kin, home = robot_config.kinematics, robot_config.home_q
    settings = CollectSettings(goals=1, test_s=0.5, motion_s=0.5, repeats=2)
    plan = CollectionController(robot_config, settings).plan_case(np.zeros(3), np.zeros(3), seed=7)
    backend = make_backend("emulated", config, kin)
    backend.reseed(7)  # type: ignore[attr-defined]
    record = execute_trajectory(backend, kin, plan.t_s, plan.stage, plan.q, test_id="c")
    batch = collect(backend, kin, home, replace(settings, seed=7))
    backend.close()
    rows = dataset_of_collection_records([record], kin, home, settings, [[3, 7]], "a record")
    assert rows.meta["case_seeds"] == [7]
    assert rows.n_rows == batch.n_rows == plan.meta["readings"] < len(plan.t_s)
    np.testing.assert_array_equal(rows.set_name, batch.set_name)
    np.testing.assert_array_equal(rows.segment, batch.segment)
    np.testing.assert_array_equal(rows.q_setpoint, batch.q_setpoint)
    np.testing.assert_allclose(rows.q_measured, batch.q_measured, rtol=0, atol=1e-9)
    with pytest.raises(DatasetError, match="case c: not the error_collection motion of the run"):
        dataset_of_collection_records([record], kin, home, settings, [[3]], "a record")
