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


def _feed_dead_robot(assembler: StreamAssembler, n: int, late_from: int | None) -> list[Sample]:
    """A physical robot that answers every setpoint with joints, tip pose and marker; from ``late_from`` on its tip
    poses and markers are not (yet) there when the case ends, as when the live monitor concluded a killed robot's
    case before they arrived. ``late_from=None``: everything arrives (the bag), the late ones after the joints."""
    q = np.array([0, 0.3, 0, 1.6, 0, 1.2, 0])
    out: list[Sample] = []
    late = []
    for k in range(n):
        stamp = START_NS + k * DT_NS
        out += assembler.add_expected(stamp, Stage.INJECTION, q)
        out += assembler.add_joints(RobotRole.PHYSICAL, stamp, q)
        tip = (RobotRole.PHYSICAL, stamp, np.array([0.4, 0.0, 0.3]), np.array([1.0, 0, 0, 0]))
        marker = (*tip, 1e-4)
        if late_from is not None and k >= late_from:
            continue  # never arrives before the case ends
        if k >= 7:
            late.append((tip, marker))  # recorded, but after the joint states
            continue
        out += assembler.add_tip(*tip)
        out += assembler.add_marker(*marker)
    if late_from is None:
        for tip, marker in late:
            out += assembler.add_tip(*tip)
            out += assembler.add_marker(*marker)
    return out + assembler.flush()


def test_capped_replay_hands_out_what_the_live_monitor_had(kin: Kinematics) -> None:
    from cosim_validation.live.session.stream_assembler import StreamCaps

    def fresh() -> StreamAssembler:
        return StreamAssembler(kin, {RobotRole.PHYSICAL: True}, markers=frozenset({RobotRole.PHYSICAL}))

    live = fresh()
    live_samples = _feed_dead_robot(live, 10, late_from=7)
    caps = StreamCaps(live.samples_per_robot, live.tips_used, live.markers_used)
    assert caps.tips == {RobotRole.PHYSICAL: 7}
    assert caps.markers == {RobotRole.PHYSICAL: 7}

    uncapped = fresh()
    bag_samples = _feed_dead_robot(uncapped, 10, late_from=None)
    physical = [s for s in bag_samples if s.robot is RobotRole.PHYSICAL]
    assert np.isfinite(physical[-1].marker_pos_m).all()  # without caps the replay would see more than live did

    replay = fresh()
    replay.cap(caps.tips, caps.markers)
    replayed = _feed_dead_robot(replay, 10, late_from=None)
    assert len(replayed) == len(live_samples)
    for a, b in zip(sorted(replayed, key=_order), sorted(live_samples, key=_order), strict=True):
        assert_sample_equal(a, b)
        np.testing.assert_array_equal(a.marker_pos_m, b.marker_pos_m)
        assert a.marker_error_m == b.marker_error_m or (np.isnan(a.marker_error_m) and np.isnan(b.marker_error_m))


def _order(sample: Sample) -> tuple[float, int]:
    return sample.t_s, int(sample.robot)
