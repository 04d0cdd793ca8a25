"""The error model file: round trip, no pickle, a truncated or edited file and another robot's model refused."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.error_injection.error_types import ModelFileError
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.robots.model import Kinematics


def test_a_model_round_trips_exactly(synthetic_model: ErrorModel, tmp_path: Path) -> None:
    path = tmp_path / "m.npz"
    synthetic_model.save(path)
    back = ErrorModel.load(path)
    assert back.robot == synthetic_model.robot
    assert back.training_data_hash == synthetic_model.training_data_hash
    assert back.meta == synthetic_model.meta
    x = np.random.default_rng(0).normal(size=(50, synthetic_model.nn1.features.n_features))
    np.testing.assert_array_equal(back.nn1.predict(x), synthetic_model.nn1.predict(x))
    assert back.nn2.features == synthetic_model.nn2.features
    with np.load(path, allow_pickle=False) as npz:  # plain arrays only: loading without pickle works
        assert {"header", "nn1.w0", "nn2.y_std"} <= set(npz.files)


@pytest.mark.parametrize("keep", [0.0, 0.3, 0.9, 0.999])
def test_a_truncated_model_is_one_clear_error(synthetic_model: ErrorModel, tmp_path: Path, keep: float) -> None:
    data = synthetic_model.to_bytes()
    path = tmp_path / "cut.npz"
    path.write_bytes(data[: int(keep * len(data))])
    with pytest.raises(ModelFileError, match=str(path)):
        ErrorModel.load(path)


def _rewritten(data: bytes, edit: dict[str, object] | None = None, drop: str | None = None) -> bytes:
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files if name != drop}
    if "header" in arrays:
        header = json.loads(arrays["header"].tobytes().decode()) | (edit or {})
        arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("edit", "drop", "message"),
    [
        ({"format": "other"}, None, "format 'other'"),
        ({"version": 9}, None, "version 9"),
        (None, "nn2.w1", "entry 'nn2.w1' missing"),
        (None, "header", "no 'header' entry"),
        ({"robot": {"joint_names": [], "model_hash": "x"}}, None, "robot.joint_names"),
        ({"training_data_hash": ""}, None, "training_data_hash"),
    ],
)
def test_an_edited_model_names_what_is_wrong(
    synthetic_model: ErrorModel, edit: dict[str, object] | None, drop: str | None, message: str
) -> None:
    with pytest.raises(ModelFileError, match=message):
        ErrorModel.from_bytes(_rewritten(synthetic_model.to_bytes(), edit, drop), "m.npz")


def test_a_pickled_entry_is_refused(synthetic_model: ErrorModel) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(synthetic_model.to_bytes())) as src, zipfile.ZipFile(buffer, "w") as dst:
        for item in src.namelist():
            dst.writestr(item, src.read(item))
        evil = io.BytesIO()
        np.save(evil, np.array([{"a": 1}], dtype=object), allow_pickle=True)
        dst.writestr("nn1.extra.npy", evil.getvalue())
    with pytest.raises(ModelFileError, match=r"m\.npz: not an intact error model") as caught:
        ErrorModel.from_bytes(buffer.getvalue(), "m.npz")  # never unpickled
    assert "pickled objects, which are never loaded" in str(caught.value)
    assert "allow_pickle" not in str(caught.value)  # numpy's advice to load pickles is not ours to give


@pytest.mark.parametrize(
    "data",
    [b"a model, I promise\n", b"\x93NUMPY\x01\x00v\x00{'descr': '|O', 'fortran_order': False, 'shape': (1,), }"],
    ids=["text", "npy-of-objects"],
)
def test_a_file_that_is_no_archive_is_refused_as_such(data: bytes) -> None:
    with pytest.raises(ModelFileError, match=r"m\.npz: not an error model \(not an \.npz archive") as caught:
        ErrorModel.from_bytes(data, "m.npz")
    assert "allow_pickle" not in str(caught.value)


def test_a_model_for_another_robot_is_refused(synthetic_model: ErrorModel, kinematics: Kinematics) -> None:
    synthetic_model.check_robot(RobotIdentity.of(kinematics))
    longer_needle = kinematics.with_needle_length(kinematics.needle_length_m + 0.01)
    with pytest.raises(ModelFileError, match="made for another robot model"):
        synthetic_model.check_robot(RobotIdentity.of(longer_needle))
    fewer = RobotIdentity(kinematics.joint_names[:-1], synthetic_model.robot.model_hash)
    with pytest.raises(ModelFileError, match="made for a robot with joints"):
        synthetic_model.check_robot(fewer)


def test_a_model_whose_offsets_make_no_physical_sense_is_refused(synthetic_model: ErrorModel) -> None:
    """Weights scaled by 1e200: the model was taken, and every case run with it failed on joint values of 1e192
    rad, as an internal error of the case."""
    arrays = dict(np.load(io.BytesIO(synthetic_model.to_bytes()), allow_pickle=False))
    arrays["nn1.w1"] = arrays["nn1.w1"] * 1e200
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    with pytest.raises(ModelFileError, match=r"m\.npz: nn1: offsets of .* on its own training data, where an arm's "):
        ErrorModel.from_bytes(buffer.getvalue(), "m.npz")
