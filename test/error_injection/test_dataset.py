"""The error dataset: Parquet round trip with its robot, the documented CSV import, bad rows dropped and counted."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.dataset_cleaning import clean
from cosim_validation.error_injection.dataset_io import METADATA_KEY, read_csv, read_parquet, write_parquet
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.robots.model import Kinematics


def _dataset(kinematics: Kinematics, n: int = 12) -> ErrorDataset:
    rng = np.random.default_rng(0)
    j = kinematics.n_joints
    quat = rng.normal(size=(n, 4))
    return ErrorDataset(
        RobotIdentity.of(kinematics),
        ("rad",) * j,
        np.array(["train"] * (n - 4) + ["test"] * 4),
        np.repeat(np.arange(3), [5, 3, n - 8]).astype(np.int64),
        0.1 * np.arange(n),
        rng.normal(size=(n, j)),
        rng.normal(size=(n, j)),
        rng.normal(size=(n, 3)),
        quat / np.linalg.norm(quat, axis=1, keepdims=True),
        np.full(n, 1e-4),
        {"source": "test"},
    )


def test_parquet_round_trip_keeps_rows_units_and_robot(kinematics: Kinematics, tmp_path: Path) -> None:
    data = _dataset(kinematics)
    path = tmp_path / "d.parquet"
    write_parquet(data, path)
    back = read_parquet(path)
    assert back.robot == data.robot
    assert back.meta == {"source": "test"}
    assert back.content_hash() == data.content_hash()
    np.testing.assert_array_equal(back.q_measured, data.q_measured)
    names = pq.read_schema(path).names
    assert "setpoint_joint1_rad" in names
    assert "marker_registration_error_m" in names
    assert "time_s" in names
    assert METADATA_KEY in (pq.read_schema(path).metadata or {})
    assert len(back.of_set("test").time_s) == 4


def test_the_content_hash_changes_with_any_value(kinematics: Kinematics) -> None:
    data = _dataset(kinematics)
    changed = data.q_setpoint.copy()
    changed[3, 2] += 1e-12
    assert replace(data, q_setpoint=changed).content_hash() != data.content_hash()


def _csv(kinematics: Kinematics, tmp_path: Path, drop: str | None = None, text: str | None = None) -> Path:
    columns = _dataset(kinematics).columns()
    columns.pop("set")
    if drop:
        columns.pop(drop)
    lines = [",".join(columns)]
    for i in range(12):
        cells = ["" if name.startswith("marker_") and i == 4 else repr(float(v[i])) for name, v in columns.items()]
        if text and i == 2:
            cells[list(columns).index(text)] = "abc"
        lines.append(",".join(cells))
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_the_documented_csv_imports_with_empty_cells_as_dropouts(kinematics: Kinematics, tmp_path: Path) -> None:
    robot = RobotIdentity.of(kinematics)
    data = read_csv(_csv(kinematics, tmp_path), robot, ("rad",) * kinematics.n_joints)
    assert (data.set_name == "train").all()
    assert not data.marker_seen[4]
    assert data.marker_seen.sum() == 11
    np.testing.assert_array_equal(data.q_setpoint, _dataset(kinematics).q_setpoint)


@pytest.mark.parametrize(
    ("drop", "text", "message"),
    [
        ("measured_joint3_rad", None, "column 'measured_joint3_rad' missing"),
        (None, "setpoint_joint2_rad", "column 'setpoint_joint2_rad': expected numbers, found text"),
        ("marker_qw", None, "column 'marker_qw' missing"),
    ],
)
def test_bad_csv_names_the_column(
    kinematics: Kinematics, tmp_path: Path, drop: str | None, text: str | None, message: str
) -> None:
    path = _csv(kinematics, tmp_path, drop, text)
    with pytest.raises(DatasetError, match=f"^{re.escape(str(path))}: {message}") as caught:
        read_csv(path, RobotIdentity.of(kinematics), ("rad",) * kinematics.n_joints)
    assert str(caught.value).count(str(path)) == 1  # once (a joint column missing named the file twice)


def test_empty_or_foreign_files_are_one_error(kinematics: Kinematics, tmp_path: Path) -> None:
    empty = tmp_path / "e.csv"
    empty.write_text("")
    with pytest.raises(DatasetError, match="cannot read the CSV"):
        read_csv(empty, RobotIdentity.of(kinematics), ("rad",) * kinematics.n_joints)
    other = tmp_path / "o.parquet"
    other.write_bytes(b"PAR1 not really")
    with pytest.raises(DatasetError, match="cannot read an error dataset"):
        read_parquet(other)
    with pytest.raises(DatasetError, match="cannot read an error dataset"):
        read_parquet(tmp_path / "missing.parquet")


def test_cleaning_drops_and_counts_every_kind_of_bad_row(kinematics: Kinematics) -> None:
    data = _dataset(kinematics)
    data.q_measured[2, 0] = np.nan  # dropped; the history restarts after it
    data.marker_pos_m[6] = np.nan  # a dropout: joints kept, no actual pose
    data.marker_error_m[7] = 2e-3  # registration error above 0.5 mm
    cleaned = clean(data)
    assert cleaned.counts == {
        "rows": 12,
        "nan_joints": 1,
        "marker_dropouts": 1,
        "registration_error_above": 1,
        "tracked": 9,
    }
    assert cleaned.dataset.n_rows == 11
    np.testing.assert_array_equal(cleaned.dataset.segment, [0, 0, 1, 1, 2, 2, 2, 3, 3, 3, 3])
    assert "1 dropped (joints not finite)" in cleaned.describe()


def test_columns_the_format_does_not_have_are_named_in_one_warning(kinematics: Kinematics, tmp_path: Path) -> None:
    """A misspelt optional column (``segmnet``) and a note column were dropped without a word."""
    path = _csv(kinematics, tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0] + ",segmnet,note", *(line + ",1,x" for line in lines[1:])]) + "\n")
    told: list[str] = []
    data = read_csv(path, RobotIdentity.of(kinematics), ("rad",) * kinematics.n_joints, told.append)
    assert data.n_rows == 12
    assert told == [f"{path}: columns 'segmnet', 'note' not read (not a column of this format)"]
    told.clear()
    read_csv(_csv(kinematics, tmp_path), RobotIdentity.of(kinematics), ("rad",) * kinematics.n_joints, told.append)
    assert told == []  # every column read: nothing said


def test_the_import_says_which_columns_it_did_not_read(
    kinematics: Kinematics, tmp_path: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cosim_validation.cli.main import main

    path = _csv(kinematics, tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0] + ",note", *(line + ",x" for line in lines[1:])]) + "\n")
    out = tmp_path / "d.parquet"
    config = str(repo_root / "config" / "needle_insertion.yaml")
    assert main(["import-crtk", str(path), "--config", config, "-o", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err == f"warning: {path}: column 'note' not read (not a column of this format)\n"
    assert json.loads(captured.out)["rows"] == 12  # the JSON document on stdout is whole
    assert read_parquet(out).n_rows == 12
