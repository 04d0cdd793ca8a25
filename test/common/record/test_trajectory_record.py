"""The trajectory record checks its shapes, and survives a round trip through bytes and files."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord


def make_record(n: int = 20, joints: int = 7, seed: int = 0) -> TrajectoryRecord:
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(n, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    axis = rng.normal(size=(n, joints, 3))
    axis /= np.linalg.norm(axis, axis=2, keepdims=True)
    actual = rng.normal(size=(n, 3))
    actual[::3] = np.nan
    return TrajectoryRecord(
        test_id="case-1",
        robot=RobotRole.VIRTUAL,
        backend="mujoco",
        joint_names=tuple(f"joint{i + 1}" for i in range(joints)),
        needle_length_m=0.15,
        t_s=np.arange(n) * 0.1,
        stage=np.repeat(np.arange(1, 6), int(np.ceil(n / 5)))[:n],
        q_setpoint=rng.normal(size=(n, joints)),
        q_measured=rng.normal(size=(n, joints)),
        joint_pos_m=rng.normal(size=(n, joints, 3)),
        joint_axis=axis,
        tip_pos_m=rng.normal(size=(n, 3)),
        tip_quat_wxyz=quat,
        actual_tip_pos_m=actual,
        actual_tip_quat_wxyz=np.full((n, 4), np.nan),
        meta={"controller": "straight", "sampling_rate_hz": 10.0},
    )


def assert_same(a: TrajectoryRecord, b: TrajectoryRecord) -> None:
    assert (a.test_id, a.robot, a.backend, a.joint_names, a.needle_length_m) == (
        b.test_id,
        b.robot,
        b.backend,
        b.joint_names,
        b.needle_length_m,
    )
    assert dict(a.meta) == dict(b.meta)
    for name in (
        "t_s",
        "stage",
        "q_setpoint",
        "q_measured",
        "joint_pos_m",
        "joint_axis",
        "tip_pos_m",
        "tip_quat_wxyz",
        "actual_tip_pos_m",
        "actual_tip_quat_wxyz",
    ):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_round_trip_bytes_and_file(tmp_path: Path) -> None:
    record = make_record()
    assert_same(record, TrajectoryRecord.from_bytes(record.to_bytes()))
    record.save(tmp_path / "r.npz")
    assert_same(record, TrajectoryRecord.load(tmp_path / "r.npz"))


def test_arrays_are_read_only_and_typed() -> None:
    record = make_record()
    assert record.stage.dtype == np.uint8
    assert record.t_s.dtype == np.float64
    with pytest.raises(ValueError, match="read-only"):
        record.t_s[0] = 1.0


def test_tip_axis_is_the_rotated_z_axis() -> None:
    record = make_record()
    w, x, y, z = record.tip_quat_wxyz.T
    # rotation matrix third column, written out independently
    r02 = 2 * (x * z + w * y)
    r12 = 2 * (y * z - w * x)
    r22 = w * w - x * x - y * y + z * z
    np.testing.assert_allclose(record.tip_axis, np.stack([r02, r12, r22], 1), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(record.needle_base_m - record.tip_pos_m, axis=1), 0.15)


def test_stage_indices_and_azimuth_altitude() -> None:
    record = make_record(n=10)
    assert list(record.stage_indices(Stage.APPROACH)) == [2, 3]
    az_alt = record.joint_azimuth_altitude()
    a = record.joint_axis
    np.testing.assert_allclose(np.sin(az_alt[..., 1]), a[..., 2], atol=1e-12)
    assert record.has_actual_tip


def test_bad_shapes_and_time_are_refused() -> None:
    good = make_record(n=5)
    with pytest.raises(InputError, match=r"tip_pos_m has shape \(4, 3\), expected \(5, 3\)"):
        TrajectoryRecord(**{**good.__dict__, "tip_pos_m": np.zeros((4, 3))})
    t = good.t_s.copy()
    t[3] = 0.0
    with pytest.raises(InputError, match="time goes backwards at sample 3"):
        TrajectoryRecord(**{**good.__dict__, "t_s": t})
    # a hostile trial: a joint named twice, a test id leaving an export's folder
    names = (good.joint_names[0],) * len(good.joint_names)
    with pytest.raises(InputError, match=f"joint_names holds {names[0]!r} more than once"):
        TrajectoryRecord(**{**good.__dict__, "joint_names": names})
    for test_id in ("../x", "a\nb", ".", "x" * 201):
        with pytest.raises(InputError, match="trajectory record test_id"):
            TrajectoryRecord(**{**good.__dict__, "test_id": test_id})


def test_garbage_bytes_are_refused() -> None:
    with pytest.raises(InputError, match=r"x\.npz: not a trajectory record"):
        TrajectoryRecord.from_bytes(b"garbage", source="x.npz")


def test_stage_and_role_parse() -> None:
    assert Stage.parse("Injection") is Stage.INJECTION
    assert RobotRole.parse("physical") is RobotRole.PHYSICAL
    with pytest.raises(InputError, match="expected one of: none, initialization"):
        Stage.parse("insertion")


def test_a_record_written_with_the_old_array_names_still_loads() -> None:
    """Before joint values lost the unit in their names (a prismatic joint is in metres), the arrays were
    q_setpoint_rad and q_measured_rad: the databases and files of older runs hold them."""
    record = make_record()
    with np.load(io.BytesIO(record.to_bytes())) as npz:
        arrays = {name: npz[name] for name in npz.files}
    arrays["q_setpoint_rad"] = arrays.pop("q_setpoint")
    arrays["q_measured_rad"] = arrays.pop("q_measured")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    assert_same(record, TrajectoryRecord.from_bytes(buffer.getvalue()))


def test_the_supervisor_mode_travels_with_each_sample() -> None:
    """A supervised record keeps its per-sample supervisor mode through bytes; one written before the mode was
    recorded (no ``supervisor`` array) reads as unsupervised; a value that is no mode is refused, naming it."""
    from cosim_validation.common.record import SupervisorMode

    record = make_record(n=6)
    assert record.supervisor.tolist() == [0] * 6  # UNSUPERVISED unless given
    modes = np.array([2, 1, 1, 3, 3, 4], dtype=np.uint8)
    supervised = TrajectoryRecord(**{**record.__dict__, "supervisor": modes})
    back = TrajectoryRecord.from_bytes(supervised.to_bytes())
    np.testing.assert_array_equal(back.supervisor, modes)
    assert SupervisorMode(int(back.supervisor[3])) is SupervisorMode.STOPPED
    assert back.head(4).supervisor.tolist() == [2, 1, 1, 3]
    with np.load(io.BytesIO(supervised.to_bytes())) as npz:
        arrays = {name: npz[name] for name in npz.files if name != "supervisor"}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    assert TrajectoryRecord.from_bytes(buffer.getvalue()).supervisor.tolist() == [0] * 6
    with pytest.raises(InputError, match=r"supervisor 9 at sample 2 is not a supervisor mode \(0 to 5\)"):
        TrajectoryRecord(**{**record.__dict__, "supervisor": np.array([0, 0, 9, 0, 0, 0])})
