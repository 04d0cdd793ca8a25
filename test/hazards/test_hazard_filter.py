"""The hazard injector on synthetic streams: windows, events, each fault model, the clean setpoint, the seed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import Stage
from cosim_validation.hazards.fault_window import schedule
from cosim_validation.hazards.hazard_filter import HazardFilter
from cosim_validation.hazards.scenario import Fault, FaultModel, Scenario, Strike, Trigger, TriggerKind
from cosim_validation.robots.filters.robot_filter import needs_stage
from cosim_validation.robots.filters.robot_filters import make_filter
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample

PERIOD_S = 0.1


def _scenario(strike: Strike, variables: tuple[str, ...], fault: Fault, duration_s: float = 0.3) -> Scenario:
    return Scenario("s", "o", "u", "c", strike, variables, fault, Trigger(TriggerKind.TIME, at_s=1.0), duration_s)


def _drive(f: HazardFilter, q0: np.ndarray, n: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray, list]:  # type: ignore[type-arg]
    """n cycles of a ramp on every joint; (commands out (n, J), readings out (n, J), events)."""
    f.reset(q0, seed)
    commands, readings, events = [], [], []
    for k in range(1, n + 1):
        clean = q0 + 0.01 * k
        commands.append(f.command(k * PERIOD_S, clean))
        sample = BackendSample(
            k * PERIOD_S, clean, clean.copy(), np.array([0.4, 0.0, 0.1 * k]), np.array([1.0, 0, 0, 0])
        )
        out = f.observe(sample)
        np.testing.assert_array_equal(out.q_setpoint, clean)  # the monitor gets the clean command
        readings.append(out.q_measured)
        events += f.events()
    return np.array(commands), np.array(readings), events


def test_sudden_jump_windows_every_8_s_for_three_cycles(config: ConfigNode, kinematics: Kinematics) -> None:
    f = make_filter(config, "hazards:sudden_jump", kinematics)
    assert isinstance(f, HazardFilter)
    assert f.name == "hazards:sudden_jump"
    q0 = np.zeros(kinematics.n_joints)
    commands, readings, events = _drive(f, q0, 200)
    clean = q0 + 0.01 * np.arange(1, 201)[:, None]
    corrupted = np.flatnonzero(np.any(commands != clean, axis=1)) + 1
    np.testing.assert_array_equal(corrupted, [80, 81, 82, 160, 161, 162])
    np.testing.assert_allclose(commands[79:82, 0], clean[78, 0] + 0.05)  # the command before the window + 0.05 rad
    np.testing.assert_array_equal(commands[:, 1:], clean[:, 1:])  # the first joint only
    np.testing.assert_array_equal(readings, clean)
    assert [(round(e.t_s, 6), e.kind) for e in events] == [
        (8.0, "fault_start"),
        (8.3, "fault_end"),
        (16.0, "fault_start"),
        (16.3, "fault_end"),
    ]
    assert all(e.name == "sudden_jump" for e in events)


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (Fault(FaultModel.HOLD), lambda c, k: c[9]),
        (Fault(FaultModel.OFFSET, 0.5), lambda c, k: c[k] + 0.5),
        (Fault(FaultModel.CONSTANT, 0.2), lambda c, k: 0.2),
        (Fault(FaultModel.SCALE, 2.0), lambda c, k: c[9] + 2 * (c[k] - c[9])),
        (Fault(FaultModel.DELAY, delay_cycles=2), lambda c, k: c[k - 2]),
        (Fault(FaultModel.DROP), lambda c, k: c[9]),
        (Fault(FaultModel.OUT_OF_ORDER), lambda c, k: c[k - 1] if (k - 10) % 2 else c[k]),
    ],
)
def test_command_faults_on_one_joint(kinematics: Kinematics, fault: Fault, expected) -> None:  # type: ignore[no-untyped-def]
    q0 = np.zeros(kinematics.n_joints)
    f = HazardFilter(_scenario(Strike.USER_COMMAND, ("joint3",), fault), kinematics)
    commands, _, events = _drive(f, q0, 20)
    clean = 0.01 * np.arange(0, 21)  # clean[k] = joint value of cycle k
    for k in range(1, 21):
        want = expected(clean, k) if 10 <= k < 13 else clean[k]
        assert commands[k - 1, 2] == pytest.approx(want), k
    assert [e.kind for e in events] == ["fault_start", "fault_end"]


def test_swap_exchanges_two_joints(kinematics: Kinematics) -> None:
    f = HazardFilter(_scenario(Strike.JOINT_COMMAND, ("joint5", "joint6"), Fault(FaultModel.SWAP)), kinematics)
    f.reset(np.zeros(kinematics.n_joints), 1)
    for k in range(1, 10):
        f.command(k * PERIOD_S, np.zeros(kinematics.n_joints))
    out = f.command(1.0, np.arange(kinematics.n_joints) * 0.1)
    assert (out[4], out[5]) == pytest.approx((0.5, 0.4))


def test_encoder_stuck_zero_and_noise(kinematics: Kinematics) -> None:
    q0 = np.full(kinematics.n_joints, 0.1)
    stuck = HazardFilter(_scenario(Strike.ENCODER, ("all",), Fault(FaultModel.STUCK), math.inf), kinematics)
    commands, readings, _ = _drive(stuck, q0, 30)
    np.testing.assert_allclose(readings[9:], np.tile(q0 + 0.09, (21, 1)))  # frozen at the reading before 1.0 s
    np.testing.assert_allclose(commands, q0 + 0.01 * np.arange(1, 31)[:, None])  # commands continue
    zero = HazardFilter(_scenario(Strike.ENCODER, ("joint4",), Fault(FaultModel.ZERO)), kinematics)
    _, readings, _ = _drive(zero, q0, 20)
    assert np.all(readings[9:12, 3] == 0.0)
    assert readings[12, 3] != 0.0
    noise = HazardFilter(_scenario(Strike.ENCODER, ("all",), Fault(FaultModel.NOISE, 0.01)), kinematics)
    _, a, _ = _drive(noise, q0, 20, seed=3)
    _, b, _ = _drive(noise, q0, 20, seed=3)
    _, c, _ = _drive(noise, q0, 20, seed=4)
    np.testing.assert_array_equal(a, b)  # same case seed, same noise
    assert not np.array_equal(a[9:12], c[9:12])
    assert np.std(a[9:12] - (q0 + 0.01 * np.arange(10, 13)[:, None])) > 0.003


def test_a_tracker_dropout_reports_nothing(kinematics: Kinematics) -> None:
    f = HazardFilter(_scenario(Strike.TRACKER, ("position",), Fault(FaultModel.DROP)), kinematics)
    f.reset(np.zeros(kinematics.n_joints), 0)
    seen = []
    for k in range(1, 15):
        f.command(k * PERIOD_S, np.zeros(kinematics.n_joints))
        q = np.zeros(kinematics.n_joints)
        out = f.observe(BackendSample(0.0, q, q, np.array([0.4, 0.0, 0.1]), np.array([1.0, 0, 0, 0])))
        seen.append(bool(np.isnan(out.actual_tip_pos_m).all()))
        assert not np.isnan(out.actual_tip_quat_wxyz).any()
    assert [k + 1 for k, lost in enumerate(seen) if lost] == [10, 11, 12]


def test_bad_options(config: ConfigNode, kinematics: Kinematics) -> None:
    with pytest.raises(InputError, match="unknown hazard scenario 'nope'; scenarios: temporarily_unavailable"):
        make_filter(config, "hazards:nope", kinematics)
    with pytest.raises(InputError, match="name a scenario"):
        make_filter(config, "hazards:", kinematics)


def test_a_stage_trigger_opens_with_the_stage_and_closes_when_it_ends(
    config: ConfigNode, kinematics: Kinematics
) -> None:
    f = make_filter(config, "hazards:encoder_offset_during_injection", kinematics)
    assert isinstance(f, HazardFilter)
    assert f.needs_stage
    q0 = np.zeros(kinematics.n_joints)
    stages = np.array([Stage.APPROACH] * 5 + [Stage.INJECTION] * 4 + [Stage.EXTRACTION] * 3 + [Stage.INJECTION] * 2)
    f.reset(q0, 3)
    offsets = []
    for k, stage in enumerate(stages, start=1):
        f.stage(int(stage))
        f.command(k * PERIOD_S, q0)
        sample = BackendSample(k * PERIOD_S, q0, q0.copy(), np.zeros(3), np.array([1.0, 0, 0, 0]))
        offsets.append(f.observe(sample).q_measured[1])
    np.testing.assert_allclose(offsets, [0.0] * 5 + [0.01] * 4 + [0.0] * 5)  # once per case: not re-entered
    assert [(round(e.t_s, 6), e.kind) for e in f.events()] == [(0.6, "fault_start"), (1.0, "fault_end")]
    windows = schedule(f.scenario, PERIOD_S * np.arange(1, len(stages) + 1), 3, stages)
    assert np.asarray(windows) == pytest.approx(np.array([[0.6, 1.0]]))  # recomputed from the records' stages
    assert schedule(f.scenario, PERIOD_S * np.arange(1, len(stages) + 1), 3) == []  # without stages: never


def test_only_a_stage_triggered_filter_waits_for_stages(config: ConfigNode, kinematics: Kinematics) -> None:
    staged = make_filter(config, "hazards:encoder_offset_during_injection", kinematics)
    timed = make_filter(config, "hazards:sudden_jump", kinematics)
    offset = make_filter(config, "offset:joint2=0.001", kinematics)
    assert needs_stage([offset, staged])
    assert not needs_stage([offset, timed])  # stage-aware, but its window is in time
    assert not needs_stage([])

    class SaysSoButHearsNoStage:  # a needs_stage attribute without the stage() notification
        needs_stage = True

    assert not needs_stage([SaysSoButHearsNoStage()])  # type: ignore[list-item]
