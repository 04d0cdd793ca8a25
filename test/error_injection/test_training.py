"""The error networks: they learn known error functions, evaluate like scikit-learn, and train reproducibly."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.neural_network import MLPRegressor  # type: ignore[import-untyped]

from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.features import FeatureSpec, feature_matrix
from cosim_validation.error_injection.mlp import Network
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.training import MIN_TRAINING_ROWS, TrainingSettings, train_network
from cosim_validation.robots.model import Kinematics
from test.error_injection.synthetic import BACKLASH_RAD, synthetic_rows


def _held_out(kinematics: Kinematics) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    q_s, q_m, q_a = synthetic_rows(kinematics, 600, seed=99)
    starts = np.zeros(len(q_s), dtype=bool)
    starts[0] = True
    return q_s, q_m, q_a, starts


def test_the_networks_recover_the_known_error_functions(kinematics: Kinematics, synthetic_model: ErrorModel) -> None:
    q_s, q_m, q_a, starts = _held_out(kinematics)
    previous = np.vstack((q_m[:1], q_m[:-1]))
    nn1, nn2 = synthetic_model.nn1, synthetic_model.nn2
    a1 = nn1.predict(feature_matrix(nn1.features, q_s, previous, starts))
    a2 = nn2.predict(feature_matrix(nn2.features, q_m, previous, starts))
    # on new motion: NN1 explains > 90 % of the variance of the controller error (play included; a direction
    # flipped by the error itself is left), NN2 > 99 % of the smooth kinematic error
    for predicted, truth, share in ((a1, q_m - q_s, 0.3), (a2, q_a - q_m, 0.1)):
        rms_truth = np.sqrt(np.mean(truth**2))
        rms_left = np.sqrt(np.mean((truth - predicted) ** 2))
        assert rms_left < share * rms_truth


def test_without_a_direction_the_play_cannot_be_learned(kinematics: Kinematics) -> None:
    q_s, q_m, _ = synthetic_rows(kinematics, 3000, seed=1)
    spec = FeatureSpec("OC", kinematics.n_joints)
    settings = TrainingSettings(max_epochs=150, patience=15, seed=1)
    net = train_network(spec, q_s, q_m - q_s, settings).network
    h_s, h_m, _, _ = _held_out(kinematics)
    left = (h_m - h_s) - net.predict(h_s)
    assert np.sqrt(np.mean(left**2)) > 0.5 * BACKLASH_RAD  # the play stays: the OC feature set cannot see it


def test_the_numpy_network_equals_sklearn_predict() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 6)) * [1.0, 2.0, 0.5, 3.0, 1.0, 0.1] + 0.3
    y = np.column_stack((np.sin(x[:, 0]) + x[:, 1] * x[:, 2], np.cos(x[:, 3]) - x[:, 5], x[:, 4] ** 2))
    x_mean, x_std, y_mean, y_std = x.mean(0), x.std(0), y.mean(0), y.std(0)
    mlp = MLPRegressor(hidden_layer_sizes=(16, 32), max_iter=50, random_state=0).fit(
        (x - x_mean) / x_std, (y - y_mean) / y_std
    )
    net = Network(FeatureSpec("CP", 3), tuple(mlp.coefs_), tuple(mlp.intercepts_), x_mean, x_std, y_mean, y_std)
    expected = mlp.predict((x - x_mean) / x_std) * y_std + y_mean
    np.testing.assert_allclose(net.predict(x), expected, rtol=1e-10, atol=1e-12)  # many rows: matrix products
    np.testing.assert_allclose(net.predict(x[7]), expected[7], rtol=1e-10, atol=1e-12)  # one row: the kernel
    np.testing.assert_allclose(net.predict(x[:10]), expected[:10], rtol=1e-10, atol=1e-12)  # few rows: the kernel


def test_the_same_data_and_seed_give_the_same_network() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(300, 4))
    y = np.tanh(x[:, :2])
    spec = FeatureSpec("CP", 2)
    settings = TrainingSettings(max_epochs=20, seed=5)
    a, b = train_network(spec, x, y, settings).network, train_network(spec, x, y, settings).network
    for wa, wb in zip(a.weights, b.weights, strict=True):
        np.testing.assert_array_equal(wa, wb)
    other = train_network(spec, x, y, TrainingSettings(max_epochs=20, seed=6)).network
    assert not np.array_equal(a.weights[0], other.weights[0])


def test_too_few_rows_name_the_minimum() -> None:
    x = np.zeros((MIN_TRAINING_ROWS - 1, 2))
    with pytest.raises(DatasetError, match=f"199 usable rows, at least {MIN_TRAINING_ROWS} are needed"):
        train_network(FeatureSpec("CP", 1), x, x[:, :1], TrainingSettings(), "NN1")


def test_non_finite_rows_are_refused() -> None:
    x = np.ones((MIN_TRAINING_ROWS, 2))
    x[5, 1] = np.nan
    with pytest.raises(DatasetError, match="not all finite"):
        train_network(FeatureSpec("CP", 1), x, x[:, :1], TrainingSettings())
