"""Feature sets OC / CP / CPE: the whole-series encoding equals the injector's one-command-at-a-time encoding."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.error_injection.features import DirectionState, FeatureSpec, feature_matrix


@pytest.mark.parametrize("kind", ["OC", "CP", "CPE"])
@pytest.mark.parametrize("n_joints", [3, 7])
def test_series_and_step_by_step_features_agree(kind: str, n_joints: int) -> None:
    rng = np.random.default_rng(4)
    current = np.cumsum(rng.normal(0.0, 1e-3, size=(300, n_joints)), axis=0)  # many moves below the deadband too
    previous = np.vstack((current[:1], current[:-1])) + rng.normal(0.0, 2e-5, size=current.shape)
    starts = np.zeros(300, dtype=bool)
    starts[[0, 120, 121, 250]] = True
    spec = FeatureSpec(kind, n_joints, deadband=5e-4)
    series = feature_matrix(spec, current, previous, starts)
    state = DirectionState(spec)
    for i in range(300):
        if starts[i]:
            state.reset()
        np.testing.assert_array_equal(series[i], state.features(current[i], previous[i]))
    assert series.shape == (300, spec.n_features)


def test_direction_holds_inside_the_deadband_and_restarts_with_a_segment() -> None:
    spec = FeatureSpec("CPE", 1, deadband=0.01)
    current = np.array([[0.0], [0.05], [0.055], [0.04], [0.0], [0.001]])
    previous = np.array([[0.0], [0.0], [0.05], [0.055], [0.04], [0.0]])
    starts = np.array([True, False, False, False, False, True])
    directions = feature_matrix(spec, current, previous, starts)[:, 1]
    np.testing.assert_array_equal(directions, [0.0, 1.0, 1.0, -1.0, -1.0, 0.0])


@pytest.mark.parametrize(
    ("kind", "n_joints", "deadband", "message"),
    [
        ("XY", 7, 0.0, "expected one of OC, CP, CPE"),
        ("OC", 0, 0.0, "at least one joint"),
        ("CPE", 7, -1.0, "deadband must be a finite number >= 0"),
        ("CPE", 7, float("nan"), "deadband"),
    ],
)
def test_bad_feature_sets_are_named(kind: str, n_joints: int, deadband: float, message: str) -> None:
    with pytest.raises(InputError, match=message):
        FeatureSpec(kind, n_joints, deadband)
