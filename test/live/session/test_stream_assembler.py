"""Samples assembled from shuffled topic streams equal the rows of the same trajectory record."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord
from cosim_validation.live.session.stream_assembler import StreamAssembler
from cosim_validation.monitor.properties import Sample
from cosim_validation.robots.model import Kinematics

URDF = Path(__file__).resolve().parents[3] / "urdf" / "xmate_er3_pro.urdf"
DT_NS = 100_000_000
START_NS = 5_000_000_000


@pytest.fixture(scope="module")
def kin() -> Kinematics:
    return Kinematics.from_urdf(URDF, 0.2)


def make_record(kin: Kinematics, role: RobotRole, n: int, seed: int, with_tip: bool) -> TrajectoryRecord:
    rng = np.random.default_rng(seed)
    plan = np.cumsum(rng.normal(scale=0.01, size=(n, 7)), axis=0) + np.array([0, 0.3, 0, 1.6, 0, 1.2, 0])
    measured = plan if role is RobotRole.EXPECTED else plan + rng.normal(scale=1e-3, size=plan.shape)
    fk = kin.record_arrays(measured)
    actual = fk.tip_pos_m + rng.normal(scale=2e-4, size=(n, 3)) if with_tip else np.full((n, 3), np.nan)
    quat = fk.tip_quat_wxyz if with_tip else np.full((n, 4), np.nan)
    if role is RobotRole.EXPECTED:  # a plan's actual tip is its planned tip
        actual, quat = fk.tip_pos_m, fk.tip_quat_wxyz
    return TrajectoryRecord(
        "c",
        role,
        "test",
        kin.joint_names,
        kin.needle_length_m,
        np.arange(n) / 10.0,  # as a 10 Hz plan: k / rate, exact like (stamp - start) / 1e9
        np.repeat(np.arange(1, 6), n // 5),
        plan,
        measured,
        fk.joint_pos_m,
        fk.joint_axis,
        fk.tip_pos_m,
        fk.tip_quat_wxyz,
        actual,
        quat,
    )


def assert_sample_equal(a: Sample, b: Sample) -> None:
    assert (a.robot, a.stage) == (b.robot, b.stage)
    assert a.t_s == pytest.approx(b.t_s, abs=1e-12)
    for name in (
        "q_setpoint",
        "q_measured",
        "joint_pos_m",
        "joint_axis",
        "tip_pos_m",
        "tip_quat_wxyz",
        "actual_tip_pos_m",
        "actual_tip_quat_wxyz",
    ):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), atol=1e-12, err_msg=name)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shuffled_streams_give_the_record_rows(kin: Kinematics, seed: int) -> None:
    n = 40
    expected = make_record(kin, RobotRole.EXPECTED, n, seed, with_tip=False)
    virtual = make_record(kin, RobotRole.VIRTUAL, n, seed, with_tip=True)
    physical = make_record(kin, RobotRole.PHYSICAL, n, seed + 10, with_tip=False)
    physical = TrajectoryRecord(**{**physical.__dict__, "q_setpoint": expected.q_setpoint})
    # each topic is in order (one publisher, reliable); the four topics interleave at random
    queues = [[(k, kind, START_NS + k * DT_NS) for k in range(n)] for kind in ("expected", "vj", "vt", "pj")]
    rng = np.random.default_rng(seed)
    order = []
    while any(queues):
        queue = queues[rng.choice([i for i, q in enumerate(queues) if q])]
        order.append(queue.pop(0))
    asm = StreamAssembler(kin, {RobotRole.VIRTUAL: True, RobotRole.PHYSICAL: False})
    got: dict[RobotRole, list[Sample]] = {r: [] for r in RobotRole}
    for k, kind, stamp in order:
        if kind == "expected":
            out = asm.add_expected(stamp, Stage(int(expected.stage[k])), expected.q_setpoint[k])
        elif kind == "vj":
            out = asm.add_joints(RobotRole.VIRTUAL, stamp, virtual.q_measured[k])
        elif kind == "vt":
            out = asm.add_tip(RobotRole.VIRTUAL, stamp, virtual.actual_tip_pos_m[k], virtual.actual_tip_quat_wxyz[k])
        else:
            out = asm.add_joints(RobotRole.PHYSICAL, stamp, physical.q_measured[k])
        for sample in out:
            got[sample.robot].append(sample)
    for sample in asm.flush():
        got[sample.robot].append(sample)
    assert asm.samples_per_robot == {RobotRole.VIRTUAL: n, RobotRole.PHYSICAL: n}
    for record in (expected, virtual, physical):
        samples = got[record.robot]
        assert len(samples) == n
        for k, sample in enumerate(samples):
            assert_sample_equal(sample, Sample.from_record(record, k))
    for role in (RobotRole.VIRTUAL, RobotRole.PHYSICAL):  # per robot, samples leave in time order
        times = [s.t_s for s in got[role]]
        assert times == sorted(times)


def test_without_expected_stream_each_joint_state_is_a_sample(kin: Kinematics) -> None:
    asm = StreamAssembler(kin, {RobotRole.VIRTUAL: False}, with_expected=False)
    q = np.zeros(7)
    out = asm.add_joints(RobotRole.VIRTUAL, 7_000_000_000, q) + asm.add_joints(RobotRole.VIRTUAL, 7_050_000_000, q)
    assert [s.t_s for s in out] == [0.0, 0.05]
    assert all(s.stage is Stage.NONE for s in out)


def test_bad_input(kin: Kinematics) -> None:
    asm = StreamAssembler(kin, {RobotRole.VIRTUAL: False})
    with pytest.raises(Exception, match="robot 'physical' is not monitored"):
        asm.add_joints(RobotRole.PHYSICAL, 0, np.zeros(7))
    with pytest.raises(Exception, match=r"virtual joints: expected 7 positions, got shape \(6,\)"):
        asm.add_joints(RobotRole.VIRTUAL, 0, np.zeros(6))


def test_record_builder_rebuilds_the_record(kin: Kinematics) -> None:
    from cosim_validation.live.session.record_builder import RecordBuilder
    from test.common.record.test_trajectory_record import assert_same

    record = make_record(kin, RobotRole.VIRTUAL, 25, 4, with_tip=True)
    builder = RecordBuilder("c", RobotRole.VIRTUAL, "test", kin.joint_names, kin.needle_length_m)
    for k in range(record.n_samples):
        builder.add(Sample.from_record(record, k))
    assert len(builder) == 25
    assert_same(builder.build(), record)
