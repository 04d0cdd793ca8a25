"""The detector on real records: no alarm fault-free, every sudden jump caught at once, the second detector."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.hazards.command_progress import command_progress
from cosim_validation.hazards.detector import DetectorSettings, derive_threshold, detect, deviations
from cosim_validation.hazards.fault_window import schedule
from cosim_validation.hazards.hazard_library import load_library
from cosim_validation.hazards.online_detector import OnlineDetector
from cosim_validation.hazards.window_verdict import alarm_episodes, judge_windows
from cosim_validation.robots.model import Kinematics
from test.hazards.records import case_records

MARGIN = 1.25
PERIOD_S = 0.1


@pytest.fixture(scope="module")
def settings(config: ConfigNode, kinematics: Kinematics) -> DetectorSettings:
    """Thresholds derived from a fault-free case of another seed than the ones judged."""
    physical, model = case_records(config, kinematics, [], seed=100)
    tip_m, joint, residual_m = deviations(physical, model)
    progress = command_progress(physical.q_setpoint, physical.q_measured)
    return DetectorSettings(
        derive_threshold(np.array([tip_m.max()]), MARGIN),
        derive_threshold(np.array([joint.max()]), MARGIN),
        derive_threshold(np.array([np.nanmax(residual_m)]), MARGIN),
        derive_threshold(np.array([np.nanmax(progress)]), MARGIN),
    )


def _judge(physical: TrajectoryRecord, model: TrajectoryRecord, settings: DetectorSettings, name: str, seed: int):  # type: ignore[no-untyped-def]
    detection = detect(physical, model, settings)
    windows = schedule(load_library()[name], physical.t_s[1:], seed)
    return detection, windows, *judge_windows(detection, windows, settings.threshold_m)


def test_no_alarm_on_fault_free_cases(config: ConfigNode, kinematics: Kinematics, settings: DetectorSettings) -> None:
    for seed in (1, 2):
        detection = detect(*case_records(config, kinematics, [], seed=seed), settings)
        assert not detection.alarm.any(), (seed, detection.deviation_m.max())
        assert not detection.second_alarm.any()


def test_every_sudden_jump_is_caught_within_a_cycle(
    config: ConfigNode, kinematics: Kinematics, settings: DetectorSettings
) -> None:
    physical, model = case_records(config, kinematics, ["hazards:sudden_jump"], seed=1)
    detection, windows, verdicts, false_alarms, second_false = _judge(physical, model, settings, "sudden_jump", 1)
    assert [round(w[0], 6) for w in windows] == [8.0, 16.0]  # every 8 s of a 21 s case
    assert (false_alarms, second_false) == (0, 0)
    for verdict in verdicts:
        assert verdict.detected
        assert verdict.max_deviation_m > 3 * settings.threshold_m
        assert 0.0 <= verdict.latency_s <= PERIOD_S + 1e-9  # the first sample after the corrupted setpoint
        assert verdict.latency_s <= verdict.crossing_s - verdict.start_s + PERIOD_S + 1e-9
    online = OnlineDetector(settings)
    live = [
        online.push(
            t,
            physical.tip_pos_m[k],
            model.tip_pos_m[k],
            physical.q_measured[k],
            model.q_measured[k],
            physical.actual_tip_pos_m[k],
        )
        for k, t in enumerate(detection.t_s)
    ]
    np.testing.assert_array_equal([a.tip or a.joint for a in live], detection.alarm)
    np.testing.assert_array_equal([a.tracker for a in live], detection.tracker_alarm)


def test_a_tracker_dropout_is_invisible_to_the_tip_detector_but_not_to_the_second(
    config: ConfigNode, kinematics: Kinematics, settings: DetectorSettings
) -> None:
    physical, model = case_records(config, kinematics, ["hazards:tracker_dropout"], seed=1)
    detection, _, (verdict,), false_alarms, second_false = _judge(physical, model, settings, "tracker_dropout", 1)
    assert not verdict.detected
    assert (false_alarms, second_false) == (0, 0)
    assert verdict.second_detected
    assert verdict.second_latency_s == pytest.approx(0.0, abs=1e-9)
    assert np.isnan(physical.actual_tip_pos_m[(detection.t_s >= 5.0) & (detection.t_s < 7.0)]).all()


def test_alarm_episodes_and_bad_thresholds() -> None:
    assert alarm_episodes(np.array([True, True, False, True, False, False, True])) == 3
    assert alarm_episodes(np.zeros(4, dtype=bool)) == 0
    assert derive_threshold(np.array([0.001, 0.002, math.nan]), 1.5) == pytest.approx(0.003)
    with pytest.raises(InputError, match="no fault-free run"):
        derive_threshold(np.array([math.nan]), 1.5)
    with pytest.raises(InputError, match="margin must be > 1"):
        derive_threshold(np.array([0.001]), 1.0)


def test_commands_out_of_order_are_caught_by_the_command_progress_at_once(
    config: ConfigNode, kinematics: Kinematics, settings: DetectorSettings
) -> None:
    physical, model = case_records(config, kinematics, ["hazards:commands_out_of_order"], seed=1)
    detection, _, (verdict,), false_alarms, second_false = _judge(physical, model, settings, "commands_out_of_order", 1)
    assert not detection.tracker_alarm.any()  # the tracker agrees with the encoders: only the progress check
    assert (false_alarms, second_false) == (0, 0)
    assert verdict.second_detected
    assert 0.0 <= verdict.second_latency_s <= PERIOD_S + 1e-9  # the first stuttered sample
    stutter = detection.progress[np.isfinite(detection.progress) & (detection.t_s > verdict.start_s)]
    assert stutter.max() > 0.9  # a command not applied (rho ~ 0) or two at once (rho ~ 2)
