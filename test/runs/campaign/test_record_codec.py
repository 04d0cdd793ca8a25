"""Compact records rebuild the executed records to within one quantization step, and are much smaller."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.assembly import AssemblySpec, CaseAssembly
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.robots.model import Kinematics
from cosim_validation.runs.campaign.case_pipeline import run_case, shared_assembly
from cosim_validation.runs.campaign.record_codec import (
    POS_STEP_M,
    Q_STEP_RAD,
    QUAT_STEP,
    decode_record,
    encode_record,
    is_plan,
)
from cosim_validation.testgen import Suite
from test.runs.campaign.run_fixtures import CONFIG

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def world() -> CaseAssembly:
    return shared_assembly(AssemblySpec(str(CONFIG), ("mujoco", "emulated"), "straight"))


@pytest.fixture(scope="module")
def kinematics(world: CaseAssembly) -> Kinematics:
    return world.kinematics


@pytest.fixture(scope="module")
def records(world: CaseAssembly, suites: tuple[Path, Path]) -> dict[str, TrajectoryRecord]:
    """A planned case: its expected record and its execution on MuJoCo and on the emulated arm."""
    suite = Suite.read(suites[0])
    for i in range(len(suite)):
        result = run_case(world, suite.case(i), i)
        if result.trajectories:
            return {r.backend: r for r in result.trajectories}
    raise AssertionError("no case of the grid suite could be planned")


@pytest.mark.parametrize("name", ["plan", "mujoco", "emulated"])
def test_round_trip_within_one_step(name: str, records: dict[str, TrajectoryRecord], kinematics: Kinematics) -> None:
    record = records[name]
    blob = encode_record(record)
    back = decode_record(blob, kinematics, "test")
    assert len(blob) * 5 < len(record.to_bytes())
    assert (back.test_id, back.robot, back.backend, back.meta) == (
        record.test_id,
        record.robot,
        record.backend,
        record.meta,
    )
    np.testing.assert_array_equal(back.stage, record.stage)
    np.testing.assert_allclose(back.t_s, record.t_s, rtol=0, atol=1e-9)
    np.testing.assert_allclose(back.q_setpoint, record.q_setpoint, rtol=0, atol=Q_STEP_RAD / 2 + 1e-15)
    np.testing.assert_allclose(back.q_measured, record.q_measured, rtol=0, atol=Q_STEP_RAD / 2 + 1e-15)
    # a plan's actual tip is its FK tip; a robot's is stored
    actual_atol = 20 * Q_STEP_RAD if name == "plan" else POS_STEP_M / 2 + 1e-15
    np.testing.assert_allclose(back.actual_tip_pos_m, record.actual_tip_pos_m, rtol=0, atol=actual_atol)
    # derived arrays come back by forward kinematics of the (quantized) measured joints
    np.testing.assert_allclose(back.tip_pos_m, record.tip_pos_m, rtol=0, atol=20 * Q_STEP_RAD)
    np.testing.assert_allclose(back.joint_axis, record.joint_axis, rtol=0, atol=20 * Q_STEP_RAD)
    assert is_plan(back) == (name == "plan")
    # the emulated arm's tracker marker travels too; a simulator has none and none comes back
    assert back.has_marker == record.has_marker == (name == "emulated")
    if record.has_marker:
        np.testing.assert_allclose(back.marker_pos_m, record.marker_pos_m, rtol=0, atol=POS_STEP_M / 2 + 1e-15)
        np.testing.assert_allclose(back.marker_quat_wxyz, record.marker_quat_wxyz, rtol=0, atol=QUAT_STEP / 2 + 1e-15)
        np.testing.assert_allclose(back.marker_error_m, record.marker_error_m, rtol=0, atol=POS_STEP_M / 2 + 1e-15)
        np.testing.assert_array_equal(np.isnan(back.marker_pos_m), np.isnan(record.marker_pos_m))


def test_unknown_values_stay_unknown(records: dict[str, TrajectoryRecord], kinematics: Kinematics) -> None:
    """A joint or a tracker sample that was not known in some samples comes back as NaN exactly there, and the
    known neighbours keep their values (the first format lost a record's actual tip when any sample was NaN)."""
    record = records["emulated"]
    q_measured = record.q_measured.copy()
    q_measured[5:9, 2] = np.nan
    actual = record.actual_tip_pos_m.copy()
    actual[50:60] = np.nan
    marker = record.marker_pos_m.copy()
    marker[:3] = np.nan
    gappy = dataclasses.replace(record, q_measured=q_measured, actual_tip_pos_m=actual, marker_pos_m=marker)
    back = decode_record(encode_record(gappy), kinematics, "test")
    for name in ("q_measured", "actual_tip_pos_m", "marker_pos_m"):
        mine, theirs = getattr(back, name), getattr(gappy, name)
        np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs), err_msg=name)
        np.testing.assert_allclose(mine[np.isfinite(theirs)], theirs[np.isfinite(theirs)], rtol=0, atol=1e-6)


def test_the_supervisor_mode_round_trips(records: dict[str, TrajectoryRecord], kinematics: Kinematics) -> None:
    """A supervised record's mode per sample comes back exactly; an unsupervised one stores no mode array (so
    a format-2 file written before the mode was recorded is the same bytes) and decodes as unsupervised."""
    import io

    record = records["emulated"]
    modes = np.resize(np.array([2, 1, 1, 3, 3, 4, 1], dtype=np.uint8), record.n_samples)
    supervised = dataclasses.replace(record, supervisor=modes)
    np.testing.assert_array_equal(decode_record(encode_record(supervised), kinematics, "test").supervisor, modes)
    with np.load(io.BytesIO(encode_record(record))) as npz:
        assert "supervisor" not in npz.files
    assert not decode_record(encode_record(record), kinematics, "test").supervisor.any()


def test_first_format_still_decodes(kinematics: Kinematics) -> None:
    """A compact record written by the first format (shipped fixture: 40 samples of an emulated run, and the full
    record it was made from) decodes to within one step; it has no tracker marker."""
    compact = (DATA / "emulated_v1.compact.npz").read_bytes()
    full = TrajectoryRecord.from_bytes((DATA / "emulated_v1.full.npz").read_bytes(), "fixture")
    back = decode_record(compact, kinematics, "fixture")
    assert back.n_samples == full.n_samples == 40
    np.testing.assert_allclose(back.q_measured, full.q_measured, rtol=0, atol=Q_STEP_RAD / 2 + 1e-15)
    np.testing.assert_allclose(back.actual_tip_pos_m, full.actual_tip_pos_m, rtol=0, atol=POS_STEP_M / 2 + 1e-15)
    assert not back.has_marker
    assert not back.supervisor.any()  # nor a supervisor mode: unsupervised


def test_full_records_still_read(records: dict[str, TrajectoryRecord]) -> None:
    record = records["mujoco"]
    back = decode_record(record.to_bytes(), None, "test")
    np.testing.assert_array_equal(back.tip_pos_m, record.tip_pos_m)


def test_bad_input(records: dict[str, TrajectoryRecord], kinematics: Kinematics) -> None:
    blob = encode_record(records["mujoco"])
    with pytest.raises(InputError, match="needs the robot model"):
        decode_record(blob, None, "run/results.sqlite:c1/virtual")
    with pytest.raises(InputError, match="junk: not a trajectory record"):
        decode_record(b"no npz here", kinematics, "junk")
    # the tips are rebuilt with the model's needle: a record of another needle would come back with wrong tips
    longer = dataclasses.replace(records["mujoco"], needle_length_m=kinematics.needle_length_m + 0.01)
    with pytest.raises(InputError, match=r"c1/virtual: needle length 0\.\d+ m differs from the robot model's"):
        decode_record(encode_record(longer), kinematics, "run/results.sqlite:c1/virtual")


def _tampered(blob: bytes, **arrays: np.ndarray) -> bytes:
    """``blob`` with some of its stored arrays replaced (as a damaged or hand-edited results store holds them)."""
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        stored = {name: npz[name] for name in npz.files}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **(stored | arrays))
    return buffer.getvalue()


def test_a_tampered_store_is_refused_naming_what_is_wrong(
    records: dict[str, TrajectoryRecord], kinematics: Kinematics
) -> None:
    """A fifth hostile trial's findings: three joint columns of seven were a traceback in forward kinematics (in
    ``cosim export`` and ``export-crtk``), and times scaled by 1e300 were taken."""
    record = records["emulated"]
    blob = encode_record(record)
    with np.load(io.BytesIO(blob), allow_pickle=False) as npz:
        q = npz["q_setpoint"]
    with pytest.raises(InputError, match=r"run:c/physical: not a trajectory record \(q_setpoint has shape \(\d+, 3\)"):
        decode_record(_tampered(blob, q_setpoint=q[:, :3]), kinematics, "run:c/physical")
    with pytest.raises(InputError, match=r"t_s holds 1e\+299 s at sample 1; expected times within 1e\+10 s"):
        dataclasses.replace(record, t_s=record.t_s * 1e300)  # as a full record in the store or an .npz holds them


def test_stored_entries_are_bounded_when_unpacked_and_unknown_ones_never_unpacked(
    records: dict[str, TrajectoryRecord], kinematics: Kinematics, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A damaged results database's blob with an extra entry of zeros was unpacked whole (as a record file was)."""
    from cosim_validation.common.record import trajectory_record

    record = records["mujoco"]
    with np.load(io.BytesIO(encode_record(record))) as npz:
        arrays = {name: npz[name] for name in npz.files}
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays, junk=np.zeros(2_000_000))  # 16 MB of zeros, some 16 KB packed
    ours = sum(a.nbytes for a in arrays.values())
    monkeypatch.setattr(trajectory_record, "MAX_UNPACKED_BYTES", ours + 100_000)
    back = decode_record(buffer.getvalue(), kinematics, "results.sqlite")  # the junk is not unpacked
    assert back.n_samples == record.n_samples
    monkeypatch.setattr(trajectory_record, "MAX_UNPACKED_BYTES", ours // 2)
    with pytest.raises(InputError, match=r"results.sqlite: not a trajectory record it can read: its arrays unpack to"):
        decode_record(buffer.getvalue(), kinematics, "results.sqlite")
