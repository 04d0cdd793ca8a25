"""Which CRTK answer belongs to which setpoint (ros/crtk_answers.py): an emulated arm echoes the setpoint's stamp,
a real one stamps with its own, later clock; the tracker's tip and marker complete a tracked sample."""

from __future__ import annotations

import numpy as np

from cosim_validation.live.ros.convert import MarkerFrame
from cosim_validation.live.ros.crtk_answers import AnswerJoiner

NAMES = ("yaw", "pitch", "insertion")


def test_an_echoed_stamp_answers_its_own_setpoint() -> None:
    joiner = AnswerJoiner(NAMES, tracked=False)
    joiner.expect(100, np.array([0.1, 0.2, 0.05]))
    done = joiner.joints(100, np.array([0.11, 0.19, 0.051]))
    assert done is not None
    stamp, sample = done
    assert stamp == 100
    np.testing.assert_array_equal(sample.q_setpoint, [0.1, 0.2, 0.05])
    np.testing.assert_array_equal(sample.q_measured, [0.11, 0.19, 0.051])
    assert np.isnan(sample.actual_tip_pos_m).all()
    assert np.isnan(sample.marker_error_m)


def test_a_later_clock_answers_the_oldest_setpoint_first_and_an_older_message_none() -> None:
    joiner = AnswerJoiner(NAMES, tracked=False)
    joiner.expect(100, np.zeros(3))
    joiner.expect(200, np.ones(3))
    assert joiner.joints(50, np.full(3, 9.0)) is None  # older than every setpoint: answers nothing
    first = joiner.joints(10_000, np.full(3, 0.5))
    second = joiner.joints(10_010, np.full(3, 0.7))
    assert first is not None
    assert second is not None
    assert (first[0], second[0]) == (100, 200)
    joiner.clear()
    assert joiner.joints(20_000, np.zeros(3)) is None


def test_a_tracked_sample_waits_for_the_tip_and_the_marker() -> None:
    joiner = AnswerJoiner(NAMES, tracked=True)
    joiner.expect(100, np.zeros(3))
    assert joiner.joints(100, np.zeros(3)) is None
    assert joiner.tip(100, np.array([0.1, 0.0, -0.2]), np.array([1.0, 0.0, 0.0, 0.0])) is None
    done = joiner.marker(MarkerFrame(100, np.array([0.5, 0.1, 1.0]), np.array([1.0, 0.0, 0.0, 0.0]), 8e-5))
    assert done is not None
    _, sample = done
    np.testing.assert_array_equal(sample.actual_tip_pos_m, [0.1, 0.0, -0.2])
    np.testing.assert_array_equal(sample.marker_pos_m, [0.5, 0.1, 1.0])
    assert sample.marker_error_m == 8e-5
