"""The residual spread of a guarded model: estimated on the validation blocks, stored, and sampled by the injector."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.error_injection.error_types import ModelFileError
from cosim_validation.error_injection.features import FeatureSpec
from cosim_validation.error_injection.injection import ErrorInjector, make_errors_filter, parse_errors_options
from cosim_validation.error_injection.learning import LearnSettings, fit_guarded
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.support import Spread, support_of
from cosim_validation.error_injection.training import TrainingSettings
from cosim_validation.robots.model import Kinematics
from test.error_injection.test_guard import guarded_model, random_network


@pytest.fixture(scope="module")
def training_x(kinematics: Kinematics) -> np.ndarray:
    """The guards' training inputs: uniform in the box [-0.1, 0.1] of every joint."""
    return 0.1 * np.random.default_rng(4).uniform(-1.0, 1.0, size=(400, kinematics.n_joints))


def _ar1(rng: np.random.Generator, n: int, sigma: float, phi: float) -> np.ndarray:
    e = np.zeros(n)
    e[0] = sigma * rng.normal()
    for k in range(1, n):
        e[k] = phi * e[k - 1] + np.sqrt(1.0 - phi**2) * sigma * rng.normal()
    return e


def test_training_stores_the_spread_of_a_known_residual_process() -> None:
    """A learnable offset plus AR(1) residuals of known size and correlation along the rows: the guard's spread is
    theirs (the blocks hold 900 of the 6,000 rows)."""
    rng = np.random.default_rng(11)
    n = 6000
    x = rng.uniform(-1.0, 1.0, size=(n, 2))
    sigma, phi = np.array([3e-4, 1e-4]), np.array([0.8, 0.3])
    noise = np.column_stack([_ar1(rng, n, s, p) for s, p in zip(sigma, phi, strict=True)])
    y = np.column_stack((2e-3 * np.sin(2.0 * x[:, 0]), 1e-3 * x[:, 1])) + noise
    settings = LearnSettings(training=TrainingSettings(hidden_layers=(16,), max_epochs=150, patience=15, seed=3))
    _, guard = fit_guarded(FeatureSpec("OC", 2), x, y, settings, "test")
    assert guard is not None
    assert guard.spread is not None
    assert guard.mask.tolist() == [True, True]
    np.testing.assert_allclose(guard.spread.sigma, sigma, rtol=0.25)
    np.testing.assert_allclose(guard.spread.phi, phi, atol=0.12)


def _sampled_model(kinematics: Kinematics, training_x: np.ndarray, sigma: float, phi: float) -> ErrorModel:
    """Both networks guarded by the support of ``training_x``, every joint on, each with the same spread."""
    n = kinematics.n_joints
    model = guarded_model(kinematics, training_x)
    spread = Spread(np.full(n, sigma), np.full(n, phi))
    nn2 = random_network(FeatureSpec("OC", n), 3)
    guard2 = replace(support_of((training_x - nn2.x_mean) / nn2.x_std, 0), mask=np.ones(n, dtype=bool))
    guards = {"nn1": replace(model.guards["nn1"], spread=spread), "nn2": replace(guard2, spread=spread)}
    return replace(model, nn2=nn2, guards=guards)


def _offsets(injector: ErrorInjector, setpoints: np.ndarray, case_seed: int) -> np.ndarray:
    injector.reset(setpoints[0], case_seed)
    return np.array([injector.offsets(q)[0] for q in setpoints[1:]])


def test_sampling_adds_the_spread_to_the_networks_offsets_the_same_way_per_case(
    kinematics: Kinematics, training_x: np.ndarray
) -> None:
    sigma, phi = 2e-4, 0.9
    model = _sampled_model(kinematics, training_x, sigma, phi)
    limits = (kinematics.q_lower - 1.0, kinematics.q_upper + 1.0)
    setpoints = training_x[:301]  # on the support: the guard's weight is 1
    plain = _offsets(ErrorInjector(model, *limits, "m"), setpoints, 5)
    sampled = ErrorInjector(model, *limits, "m", sample=7)
    first = _offsets(sampled, setpoints, 5)
    residual = first - plain
    assert np.abs(residual[0]).max() < 3 * sigma  # the draw starts from zero at the case's start
    assert residual[50:].std() == pytest.approx(sigma, rel=0.25)  # stationary after the start
    lag1 = np.corrcoef(residual[50:-1].ravel(), residual[51:].ravel())[0, 1]
    assert lag1 == pytest.approx(phi, abs=0.1)
    np.testing.assert_array_equal(_offsets(sampled, setpoints, 5), first)  # the same case: the same draw
    assert not np.allclose(_offsets(sampled, setpoints, 6), first)  # another case: another draw
    other = _offsets(ErrorInjector(model, *limits, "m", sample=8), setpoints, 5)
    assert not np.allclose(other, first)  # another seed: another twin


def test_far_from_the_data_the_sampled_residual_fades_with_the_offset(
    kinematics: Kinematics, training_x: np.ndarray
) -> None:
    model = _sampled_model(kinematics, training_x, 2e-4, 0.9)
    injector = ErrorInjector(model, kinematics.q_lower - 1.0, kinematics.q_upper + 1.0, "m", sample=1)
    far = np.full((20, kinematics.n_joints), 1.5)  # 15 times the training box's half-width
    np.testing.assert_array_equal(_offsets(injector, far, 0), 0.0)


def test_sampling_a_model_without_a_spread_is_one_error(
    config: ConfigNode, kinematics: Kinematics, training_x: np.ndarray, model_path: Path, tmp_path: Path
) -> None:
    with pytest.raises(ModelFileError, match=r"sample=3: the model stores no residual spread of nn1 and nn2"):
        ErrorInjector(guarded_model(kinematics, training_x), kinematics.q_lower, kinematics.q_upper, "m", sample=3)
    with pytest.raises(ModelFileError, match=r"errors filter: .*er3pro-synthetic\.npz: sample=0: .*cosim errors train"):
        make_errors_filter(config, f"model={model_path},sample=0", kinematics)  # a model without guards
    make_errors_filter(config, f"model={model_path}", kinematics)  # without sample= it injects as before


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("model=a.npz,sample=-1", r"sample: expected an integer seed in 0\.\.9223372036854775807, got '-1'"),
        ("model=a.npz,sample=x", r"sample: expected an integer seed .*got 'x'"),
        ("model=a.npz,sample=1e3", r"sample: expected an integer seed .*got '1e3'"),
        ("model=a.npz,sample=99999999999999999999", r"sample: expected an integer seed"),
        ("model=a.npz,sample=", r"expected model=PATH\[,sample=SEED\], got 'sample='"),
        ("model=a.npz,sample=1,sample=2", "sample given twice"),
        ("sample=1", "name the model file"),
    ],
)
def test_bad_sample_options_are_named(options: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_errors_options(options)


def test_the_options_give_the_model_and_the_seed() -> None:
    assert parse_errors_options("model=a.npz") == (Path("a.npz"), None)
    assert parse_errors_options(" sample = 12 , model = a.npz ") == (Path("a.npz"), 12)


def test_the_spread_round_trips_and_a_damaged_one_is_refused(
    kinematics: Kinematics, training_x: np.ndarray, tmp_path: Path
) -> None:
    model = _sampled_model(kinematics, training_x, 2e-4, 0.5)
    path = tmp_path / "m.npz"
    model.save(path)
    loaded = ErrorModel.load(path)
    for key in ("nn1", "nn2"):
        spread = loaded.spread(key)
        assert spread is not None
        np.testing.assert_array_equal(spread.sigma, model.guards[key].spread.sigma)  # type: ignore[union-attr]
        np.testing.assert_array_equal(spread.phi, model.guards[key].spread.phi)  # type: ignore[union-attr]
    damaged = [
        ({"sigma": [1e-4] * 6, "phi": [0.5] * 7}, r"guard\.spread\.sigma: expected 7 numbers"),
        ({"sigma": [1e-4] * 7, "phi": [1.5] * 7}, r"phi within \(-1, 1\)"),
        ({"sigma": [-1e-4] * 7, "phi": [0.5] * 7}, r"sigma >= 0"),
        ({"sigma": [1e-4] * 7, "phi": [True] * 7}, r"guard\.spread\.phi: expected 7 numbers"),
        ([1, 2], r"guard\.spread: expected an object"),
    ]
    for spread, message in damaged:
        with pytest.raises(ModelFileError, match=message):
            ErrorModel.from_bytes(_with_spread(path.read_bytes(), spread), "bad.npz")


def _with_spread(data: bytes, spread: object) -> bytes:
    """The model archive ``data`` with NN1's stored spread replaced by ``spread``."""
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    header = json.loads(arrays["header"].tobytes().decode())
    header["networks"]["nn1"]["guard"]["spread"] = spread
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()
