"""The first-order hold: linear, exact at the end, continuous when a new setpoint comes mid-ramp."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.robots.virtual import SetpointRamp

DT = 0.001


@pytest.fixture
def ramp() -> SetpointRamp:
    r = SetpointRamp(3, DT)
    r.reset(np.array([0.0, 1.0, -1.0]))
    return r


def test_holds_without_command(ramp: SetpointRamp) -> None:
    steps, slope = ramp.next_segment(250)
    assert steps == 250
    assert np.all(slope == 0.0)
    assert not ramp.consume(250)
    np.testing.assert_array_equal(ramp.reference_rad, [0.0, 1.0, -1.0])


@pytest.mark.parametrize("taken", [1, 37, 99])
def test_reference_is_linear_in_time(ramp: SetpointRamp, taken: int) -> None:
    start, target = ramp.reference_rad, np.array([0.1, 0.8, -0.7])
    ramp.start(target, 0.1)
    assert ramp.steps_left == 100
    ramp.consume(taken)
    np.testing.assert_allclose(ramp.reference_rad, start + taken / 100 * (target - start), atol=1e-15)
    np.testing.assert_allclose(ramp.slope_rad_s, (target - start) / 0.1)


def test_reaches_the_setpoint_exactly_and_then_holds(ramp: SetpointRamp) -> None:
    target = np.array([0.123456789, 0.3, 2.0])
    ramp.start(target, 0.1)
    for _ in range(10):
        steps, _ = ramp.next_segment(7)
        ended = ramp.consume(steps)
    assert not ended
    steps, _ = ramp.next_segment(1000)
    assert steps == 30  # the segment stops where the ramp ends
    assert ramp.consume(steps)
    np.testing.assert_array_equal(ramp.reference_rad, target)
    assert np.all(ramp.slope_rad_s == 0.0)


def test_new_setpoint_mid_ramp_starts_from_the_current_reference(ramp: SetpointRamp) -> None:
    ramp.start(np.array([1.0, 1.0, 1.0]), 0.1)
    ramp.consume(50)
    middle = ramp.reference_rad
    ramp.start(np.array([0.0, 0.0, 0.0]), 0.05)
    ramp.consume(1)
    np.testing.assert_allclose(ramp.reference_rad, middle - middle / 50, atol=1e-15)


@pytest.mark.parametrize(("duration_s", "steps"), [(1e-6, 1), (0.0014, 1), (0.0016, 2), (0.1, 100)])
def test_duration_rounds_to_whole_steps(ramp: SetpointRamp, duration_s: float, steps: int) -> None:
    ramp.start(np.zeros(3), duration_s)
    assert ramp.steps_left == steps


def test_the_slope_version_changes_exactly_when_the_slope_does(ramp: SetpointRamp) -> None:
    """An engine copies the slope into its actuators only when the version moved: it must move at a new ramp, at a
    ramp's end and at a reset, and not while a ramp runs or the reference holds."""
    versions = [ramp.slope_version]
    ramp.start(np.array([0.1, 0.8, -0.7]), 0.01)  # 10 steps
    versions.append(ramp.slope_version)
    for _ in range(3):
        steps, slope = ramp.segment(3)
        np.testing.assert_array_equal(slope, ramp.next_segment(3)[1])
        ramp.consume(steps)
    versions.append(ramp.slope_version)  # still ramping: 1 step left
    ramp.consume(ramp.segment(5)[0])
    versions.append(ramp.slope_version)  # ended
    assert np.all(ramp.segment(5)[1] == 0.0)
    ramp.consume(5)
    versions.append(ramp.slope_version)  # holding
    ramp.reset(np.zeros(3))
    versions.append(ramp.slope_version)
    assert np.diff(versions).tolist() == [1, 0, 1, 0, 1]
