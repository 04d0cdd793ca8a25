"""The trajectory record checks its shapes, and survives a round trip through bytes and files."""

from __future__ import annotations

import io
import json
import re
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


@pytest.mark.parametrize(
    ("name", "values", "message"),
    [  # the uint8 cast wrapped 256 to 0 and -255 to 1 and truncated 1.7 to 1: read as another record, exit 0
        ("stage", [0, 1, 256, 1, 1, 1], "stage 256 at sample 2 is not a stage (0 to 5)"),
        ("stage", [0, 1, 1, -255, 1, 1], "stage -255 at sample 3 is not a stage (0 to 5)"),
        ("stage", [0, 1.7, 1, 1, 1, 1], "stage 1.7 at sample 1 is not a stage (0 to 5)"),
        ("stage", [0, 1, 1, 1, float("nan"), 1], "stage nan at sample 4 is not a stage (0 to 5)"),
        ("supervisor", [0, 0, 0, 0, 0, 256], "supervisor 256 at sample 5 is not a supervisor mode (0 to 5)"),
    ],
)
def test_stage_and_supervisor_codes_are_whole_numbers_in_range(name: str, values: list[float], message: str) -> None:
    record = make_record(n=6)
    with pytest.raises(InputError, match=re.escape(message)):
        TrajectoryRecord(**{**record.__dict__, name: np.array(values)})
    stages = np.array([0.0, 1.0, 1.0, 2.0, 2.0, 3.0])  # whole numbers stored as floats are fine
    assert TrajectoryRecord(**{**record.__dict__, "stage": stages}).stage.tolist() == [0, 1, 1, 2, 2, 3]


@pytest.mark.parametrize(
    ("name", "row", "message"),
    [  # a zero quaternion read as "along +z"; 1e300 overflowed in the orientation signals
        ("tip_quat_wxyz", [0.0, 0.0, 0.0, 0.0], "tip_quat_wxyz at sample 3 has norm 0; expected a unit quaternion"),
        ("tip_quat_wxyz", [1e300, 0.0, 0.0, 0.0], "tip_quat_wxyz holds 1e+300 at sample 3"),
        ("actual_tip_quat_wxyz", [0.5, 0.5, 0.5, 0.6], "actual_tip_quat_wxyz at sample 3 has norm 1.05357"),
        ("marker_quat_wxyz", [2.0, 0.0, 0.0, 0.0], "marker_quat_wxyz at sample 3 has norm 2; expected a unit"),
    ],
)
def test_orientations_are_unit_quaternions_or_not_known(name: str, row: list[float], message: str) -> None:
    record = make_record(n=6)
    values = np.tile([1.0, 0.0, 0.0, 0.0], (6, 1))
    values[3] = row
    with pytest.raises(InputError, match=re.escape(message)):
        TrajectoryRecord(**{**record.__dict__, name: values.copy()})
    values[3] = np.nan  # not known
    assert np.isnan(TrajectoryRecord(**{**record.__dict__, name: values}).__dict__[name][3]).all()


def test_joint_axes_are_unit_vectors_and_registration_errors_not_negative() -> None:
    record = make_record(n=6)
    axes = record.joint_axis.copy()
    axes[2, 4] = [0.0, 0.0, 2.0]
    with pytest.raises(InputError, match=re.escape("joint_axis at sample 2 has norm 2; expected a unit vector")):
        TrajectoryRecord(**{**record.__dict__, "joint_axis": axes.copy()})
    axes[2, 4] = [0.0, 0.0, 1e308]
    with pytest.raises(InputError, match=re.escape("joint_axis holds 1e+308 at sample 2")):
        TrajectoryRecord(**{**record.__dict__, "joint_axis": axes})
    error = np.array([0.001, -1e300, 0.001, np.nan, 0.001, 0.001])
    with pytest.raises(InputError, match=re.escape("marker_error_m holds -1e+300 at sample 1")):
        TrajectoryRecord(**{**record.__dict__, "marker_error_m": error.copy()})
    error[1] = -0.001
    with pytest.raises(InputError, match=re.escape("marker_error_m holds -0.001 at sample 1; a registration error")):
        TrajectoryRecord(**{**record.__dict__, "marker_error_m": error})


def test_a_needle_length_too_large_for_a_number_is_one_error() -> None:
    """``"needle_length_m": 10**400`` as a JSON integer was an OverflowError traceback."""
    data = make_record().to_bytes()
    with np.load(io.BytesIO(data)) as npz:
        arrays = {name: npz[name] for name in npz.files}
    header = json.loads(arrays["header"].tobytes().decode())
    text = json.dumps(header).replace(json.dumps(header["needle_length_m"]), "1" + "0" * 400, 1)
    arrays["header"] = np.frombuffer(text.encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    with pytest.raises(InputError, match="header: 'needle_length_m' must be a length in metres, got an integer of 401"):
        TrajectoryRecord.from_bytes(buffer.getvalue(), source="huge.npz")


def test_entries_are_bounded_when_unpacked_and_unknown_ones_never_unpacked(monkeypatch: pytest.MonkeyPatch) -> None:
    """An 800 KB file with an extra entry of 1e8 zeros took 892 MB to read; a 3.9 MB one unpacked to 4 GB."""
    from cosim_validation.common.record import trajectory_record

    data = make_record(n=200).to_bytes()
    with np.load(io.BytesIO(data)) as npz:
        arrays = {name: npz[name] for name in npz.files}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays, junk=np.zeros(2_000_000))  # 16 MB of zeros, some 16 KB packed
    ours = sum(a.nbytes for a in arrays.values())
    monkeypatch.setattr(trajectory_record, "MAX_UNPACKED_BYTES", ours + 100_000)
    assert TrajectoryRecord.from_bytes(buffer.getvalue()).n_samples == 200  # the junk is not unpacked
    monkeypatch.setattr(trajectory_record, "MAX_UNPACKED_BYTES", ours // 2)
    with pytest.raises(InputError, match=r"bomb.npz: not a trajectory record it can read: its arrays unpack to"):
        TrajectoryRecord.from_bytes(buffer.getvalue(), source="bomb.npz")


def test_a_backend_name_of_a_hundred_thousand_characters_is_one_short_error() -> None:
    """It was echoed whole on ``cosim check``'s first line."""
    data = make_record().to_bytes()
    with np.load(io.BytesIO(data)) as npz:
        arrays = {name: npz[name] for name in npz.files}
    header = json.loads(arrays["header"].tobytes().decode()) | {"backend": "m" * 100_000}
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    with pytest.raises(InputError) as error:
        TrajectoryRecord.from_bytes(buffer.getvalue(), source="long.npz")
    assert str(error.value) == (
        f"long.npz: header: 'backend' must be a name of at most 200 printable characters, got {'m' * 40}... "
        "(100000 characters)"
    )


def test_an_entry_declaring_a_shape_no_memory_holds_is_one_error() -> None:
    """A tiny entry whose .npy header says (2**56,) ended in a MemoryError traceback (its zip size is small)."""
    import zipfile

    data = make_record().to_bytes()
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(buffer, "w") as out:
        for info in source.infolist():
            if info.filename != "t_s.npy":
                out.writestr(info, source.read(info))
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (2**56,)})
        out.writestr("t_s.npy", header.getvalue() + b"\0" * 64)
    with pytest.raises(InputError, match=r"^huge.npz: not a trajectory record"):
        TrajectoryRecord.from_bytes(buffer.getvalue(), source="huge.npz")
