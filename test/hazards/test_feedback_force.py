"""The feedback force: zero within the threshold, towards the model, saturated; on a real sudden jump."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.hazards.feedback_force import FeedbackGains, feedback_force
from cosim_validation.robots.model import Kinematics
from test.hazards.records import case_records

GAINS = FeedbackGains(kp_n_per_m=500.0, kd_ns_per_m=0.0, max_force_n=3.0)


def test_direction_threshold_and_saturation() -> None:
    t = np.arange(4) * 0.1
    robot = np.zeros((4, 3))
    model = np.array([[0.001, 0, 0], [0.004, 0, 0], [0, 0.02, 0], [0, 0, -0.004]])
    force = feedback_force(t, robot, model, 0.003, GAINS)
    np.testing.assert_array_equal(force[0], 0.0)  # 1 mm: within the threshold
    np.testing.assert_allclose(force[1], [2.0, 0, 0])  # 500 N/m x 4 mm, towards the model
    np.testing.assert_allclose(force[2], [0, 3.0, 0])  # 10 N saturated at 3 N, same direction
    np.testing.assert_allclose(force[3], [0, 0, -2.0])
    damped = feedback_force(
        t,
        robot,
        np.array([[0, 0, 0], [0.004, 0, 0], [0.008, 0, 0], [0.012, 0, 0]]),
        0.003,
        FeedbackGains(500.0, 10.0, 100.0),
    )
    np.testing.assert_allclose(damped[2], [500 * 0.008 + 10 * 0.04, 0, 0])  # the error grows at 40 mm/s


def test_a_sudden_jump_pushes_the_operator_towards_the_model(config: ConfigNode, kinematics: Kinematics) -> None:
    physical, model = case_records(config, kinematics, ["hazards:sudden_jump"], seed=1)
    force = feedback_force(physical.t_s, physical.tip_pos_m, model.tip_pos_m, 0.008, GAINS)
    magnitude = np.linalg.norm(force, axis=1)
    on = np.flatnonzero(magnitude > 0)
    assert on.size
    assert physical.t_s[on].min() == pytest.approx(8.0)
    assert magnitude.max() == pytest.approx(3.0)  # a ~20 mm jump saturates the device
    error = model.tip_pos_m[on] - physical.tip_pos_m[on]
    cosine = np.sum(force[on] * error, axis=1) / (magnitude[on] * np.linalg.norm(error, axis=1))
    assert np.all(cosine > 0.99)


def test_a_repeated_sample_time_gets_no_damping_term_live_and_in_batch() -> None:
    """A sample whose time repeats its predecessor's (or goes back) has no backward difference: the force is the
    spring term alone, finite, and the stream a live session uses gives the batch's numbers bit for bit."""
    from cosim_validation.hazards.feedback_force import FeedbackForceStream

    gains = FeedbackGains(500.0, 10.0, 100.0)
    t = np.array([0.0, 0.1, 0.1, 0.05, 0.2])
    model = np.array([[0, 0, 0], [0.004, 0, 0], [0.008, 0, 0], [0.009, 0, 0], [0.012, 0, 0]])
    robot = np.zeros_like(model)
    batch = feedback_force(t, robot, model, 0.003, gains)
    assert np.isfinite(batch).all()
    np.testing.assert_allclose(batch[2:4, 0], [500 * 0.008, 500 * 0.009])  # no damping term
    np.testing.assert_allclose(batch[4, 0], 500 * 0.012 + 10 * (0.012 - 0.009) / (0.2 - 0.05))
    stream = FeedbackForceStream(0.003, gains)
    live = np.array([stream.push(*sample) for sample in zip(t, robot, model, strict=True)])
    np.testing.assert_array_equal(live, batch)
