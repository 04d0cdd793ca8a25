"""Guards: offsets shrink smoothly to zero away from the training data, and joints that do not help are masked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.error_injection.error_types import ModelFileError
from cosim_validation.error_injection.features import FeatureSpec
from cosim_validation.error_injection.injection import ErrorInjector
from cosim_validation.error_injection.learning import (
    VALIDATION_BLOCK_ROWS,
    LearnSettings,
    fit_guarded,
    validation_blocks,
)
from cosim_validation.error_injection.mlp import Network
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.error_injection.support import joint_mask, support_of
from cosim_validation.error_injection.training import TrainingSettings
from cosim_validation.robots.model import Kinematics
from test.error_injection.test_model_file import _rewritten


def random_network(spec: FeatureSpec, seed: int) -> Network:
    """A small network with random weights: offsets of order 1e-3 that vary with the input."""
    rng = np.random.default_rng(seed)
    f, j = spec.n_features, spec.n_joints
    weights = (rng.normal(size=(f, 8)), rng.normal(size=(8, j)))
    biases = (rng.normal(size=8), rng.normal(size=j))
    return Network(spec, weights, biases, np.zeros(f), np.full(f, 0.1), np.zeros(j), np.full(j, 1e-3))


def guarded_model(kinematics: Kinematics, training_x: np.ndarray) -> ErrorModel:
    """Both networks random, NN1 guarded by the support of ``training_x`` (n, J) (OC features), every joint on."""
    n = kinematics.n_joints
    spec = FeatureSpec("OC", n)
    nn1, nn2 = random_network(spec, 1), random_network(spec, 2)
    guard = replace(support_of((training_x - nn1.x_mean) / nn1.x_std, 0), mask=np.ones(n, dtype=bool))
    return ErrorModel(RobotIdentity.of(kinematics), nn1, nn2, "0" * 64, {}, {"nn1": guard})


@pytest.fixture(scope="module")
def training_x(kinematics: Kinematics) -> np.ndarray:
    rng = np.random.default_rng(4)
    return 0.1 * rng.uniform(-1.0, 1.0, size=(400, kinematics.n_joints))  # the box [-0.1, 0.1] per joint


def test_far_from_the_training_data_the_offsets_shrink_to_zero(kinematics: Kinematics, training_x: np.ndarray) -> None:
    model = guarded_model(kinematics, training_x)
    inside = model.offsets("nn1", training_x)
    np.testing.assert_array_equal(inside, model.nn1.predict(training_x))  # on the support: the network's own
    direction = np.random.default_rng(5).normal(size=kinematics.n_joints)
    direction /= np.linalg.norm(direction)
    far = np.array([0.12 * k * direction for k in (3, 10, 100)])
    assert np.abs(model.nn1.predict(far)).max() > 1e-4  # the raw network still answers there
    np.testing.assert_array_equal(model.offsets("nn1", far), 0.0)
    sizes = [
        np.abs(model.offsets("nn1", s * direction)).max() / np.abs(model.nn1.predict(s * direction)).max()
        for s in (0.15, 0.17, 0.19, 0.21)
    ]
    assert sizes == sorted(sizes, reverse=True)  # shrinking with the distance beyond the box (0.1 per joint)


def test_the_offsets_are_continuous_across_the_support_boundary(kinematics: Kinematics, training_x: np.ndarray) -> None:
    model = guarded_model(kinematics, training_x)
    path = np.zeros((4001, kinematics.n_joints))
    path[:, 0] = np.linspace(0.0, 0.4, 4001)  # from the middle out of the box at 0.1 and beyond the taper
    offsets = model.offsets("nn1", path)
    raw = model.nn1.predict(path)
    steps = np.abs(np.diff(offsets, axis=0)).max()
    raw_steps = np.abs(np.diff(raw, axis=0)).max()
    # no jump: a step of 1e-4 rad is 1e-3 of the normaliser's std, so the weight changes by at most pi/2 1e-3 (the
    # half cosine's steepest slope over a width of 1); a cut-off at the boundary would jump by the whole offset
    assert steps <= raw_steps + 0.5 * np.pi * 1e-3 * np.abs(raw).max() + 1e-12
    crossing = np.searchsorted(path[:, 0], training_x[:, 0].max())
    np.testing.assert_allclose(offsets[crossing - 5 : crossing + 5], raw[crossing - 5 : crossing + 5], atol=2e-5)
    assert np.abs(offsets[-1]).max() == 0.0


def test_joints_whose_offsets_do_not_help_are_masked() -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(-1.0, 1.0, size=(800, 2))
    y = np.column_stack((2e-3 * np.sin(2.0 * x[:, 0]) + 1e-3 * x[:, 1], 1e-3 * rng.normal(size=800)))
    settings = LearnSettings(training=TrainingSettings(hidden_layers=(8,), max_epochs=60, patience=10, seed=3))
    trained, guard = fit_guarded(FeatureSpec("OC", 2), x, y, settings, "test")
    assert guard is not None
    assert guard.mask.tolist() == [True, False]  # the noise of joint 2 cannot be predicted
    plain, none = fit_guarded(FeatureSpec("OC", 2), x, y, replace(settings, plain=True), "test")
    assert none is None
    assert trained.train_rows == plain.train_rows == 800
    assert not np.array_equal(trained.network.weights[0], plain.network.weights[0])  # fitted without the blocks


def test_the_validation_blocks_are_runs_of_consecutive_rows() -> None:
    held = validation_blocks(1000, 0)
    assert held.sum() == 3 * VALIDATION_BLOCK_ROWS  # 15 % of 20 blocks
    starts = np.flatnonzero(np.diff(held.astype(int)) == 1) + 1
    assert all(s % VALIDATION_BLOCK_ROWS == 0 for s in starts)
    assert not np.array_equal(held, validation_blocks(1000, 1))


def test_a_joint_whose_offsets_remove_little_of_the_error_is_masked() -> None:
    target = np.ones((10, 3))
    predicted = np.column_stack((np.ones(10), np.full(10, 0.05), np.full(10, 0.5)))  # removes 100 %, 10 %, 75 %
    assert joint_mask(target, predicted).tolist() == [True, False, True]
    assert joint_mask(target, predicted, min_gain=0.0).tolist() == [True, True, True]


def test_a_masked_joint_is_not_injected(kinematics: Kinematics, training_x: np.ndarray) -> None:
    model = guarded_model(kinematics, training_x)
    mask = np.ones(kinematics.n_joints, dtype=bool)
    mask[2] = False
    masked = replace(model, guards={"nn1": replace(model.guards["nn1"], mask=mask)})
    offsets = masked.offsets("nn1", training_x[:5])
    np.testing.assert_array_equal(offsets[:, 2], 0.0)
    np.testing.assert_array_equal(offsets[:, 3], model.nn1.predict(training_x[:5])[:, 3])


def test_the_injector_leaves_a_setpoint_far_from_the_data_alone(kinematics: Kinematics, training_x: np.ndarray) -> None:
    model = guarded_model(kinematics, training_x)
    both = replace(model, guards={"nn1": model.guards["nn1"], "nn2": model.guards["nn1"]})  # same features
    injector = ErrorInjector(both, kinematics.q_lower, kinematics.q_upper, "test")
    far = np.clip(np.full(kinematics.n_joints, 1.0), kinematics.q_lower, kinematics.q_upper)
    injector.reset(far, 0)
    np.testing.assert_array_equal(injector.command(0.0, far), far)


def test_guards_round_trip_and_old_files_still_load(
    kinematics: Kinematics, training_x: np.ndarray, tmp_path: Path
) -> None:
    model = guarded_model(kinematics, training_x)
    path = tmp_path / "g.npz"
    model.save(path)
    back = ErrorModel.load(path)
    assert set(back.guards) == {"nn1"}
    assert not back.guarded  # NN2 has none
    x = np.vstack((training_x[:3], 0.5 * np.ones((2, kinematics.n_joints))))
    np.testing.assert_array_equal(back.offsets("nn1", x), model.offsets("nn1", x))
    plain = replace(model, guards={})
    old = ErrorModel.from_bytes(_rewritten(plain.to_bytes(), {"version": 1}), "old.npz")
    assert old.guards == {}
    np.testing.assert_array_equal(old.offsets("nn1", x), model.nn1.predict(x))


@pytest.mark.parametrize(
    ("edit", "drop", "message"),
    [
        (None, "nn1.support_points", "entry 'nn1.support_points' missing"),
        ({"version": 1}, None, "guard: expected an object in a version-2 file"),
        ({"version": 0}, None, "make the model again with cosim errors train"),
    ],
)
def test_a_damaged_guard_is_one_clear_error(
    kinematics: Kinematics, training_x: np.ndarray, edit: dict[str, object] | None, drop: str | None, message: str
) -> None:
    data = guarded_model(kinematics, training_x).to_bytes()
    with pytest.raises(ModelFileError, match=message):
        ErrorModel.from_bytes(_rewritten(data, edit, drop), "m.npz")


def test_a_mask_of_the_wrong_length_is_refused(kinematics: Kinematics, training_x: np.ndarray) -> None:
    import io
    import json

    data = guarded_model(kinematics, training_x).to_bytes()
    with np.load(io.BytesIO(data)) as npz:
        header = json.loads(npz["header"].tobytes().decode())
    header["networks"]["nn1"]["guard"]["mask"] = [True]
    with pytest.raises(ModelFileError, match=r"guard.mask: expected 7 true/false"):
        ErrorModel.from_bytes(_rewritten(data, {"networks": header["networks"]}), "m.npz")
