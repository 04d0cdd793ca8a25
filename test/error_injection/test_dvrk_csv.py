"""The dVRK collection CSV import: numbered joints (insertion in m), rotation vectors, no time column."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.spatial.transform import Rotation

from cosim_validation.cli.main import main
from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.error_injection.dvrk_csv import expected_columns, is_dvrk_csv, read_dvrk_csv
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.robot_identity import RobotIdentity, joint_units
from cosim_validation.robots.model import Kinematics, RobotConfig

PSM_CONFIG = "config/dvrk_psm_insertion.yaml"


@pytest.fixture(scope="module")
def psm() -> Kinematics:
    return RobotConfig.from_config(load_case_config(resolve_resource(PSM_CONFIG))["robot"]).kinematics


def dvrk_frame(kinematics: Kinematics, n_rows: int, seed: int) -> pd.DataFrame:
    """Rows as a dVRK calibration script writes them, the marker unseen on row 2."""
    rng = np.random.default_rng(seed)
    middle = 0.5 * (kinematics.q_lower + kinematics.q_upper)
    q_s = middle + 0.1 * (kinematics.q_upper - kinematics.q_lower) * rng.uniform(-1, 1, (n_rows, kinematics.n_joints))
    q_m = q_s + 1e-4 * rng.normal(size=q_s.shape)
    columns: dict[str, np.ndarray] = {}
    for kind, q in (("setpoint", q_s), ("measured", q_m)):
        columns |= {f"{kind}_q{i + 1}": q[:, i] for i in range(kinematics.n_joints)}
    columns |= dict(zip(("marker_x", "marker_y", "marker_z"), rng.normal(size=(3, n_rows)), strict=True))
    columns |= dict(zip(("marker_rx", "marker_ry", "marker_rz"), rng.uniform(-1, 1, (3, n_rows)), strict=True))
    columns["registration_error"] = np.full(n_rows, 1e-4)
    frame = pd.DataFrame(columns)
    frame.loc[2, ["marker_x", "marker_rx", "registration_error"]] = np.nan  # not seen: an empty registration_error
    return frame


def test_a_dvrk_csv_becomes_a_dataset_in_the_robots_units(psm: Kinematics, tmp_path: Path) -> None:
    frame = dvrk_frame(psm, 20, 0)
    path = tmp_path / "psm.csv"
    frame.to_csv(path, index=False, float_format="%.17g")
    assert is_dvrk_csv(path)
    units = joint_units(psm)
    assert "m" in units  # the insertion joint
    data = read_dvrk_csv(path, RobotIdentity.of(psm), units)
    assert data.n_rows == 20
    np.testing.assert_array_equal(data.q_setpoint[:, units.index("m")], frame[f"setpoint_q{units.index('m') + 1}"])
    np.testing.assert_array_equal(data.q_measured, frame[[f"measured_q{i + 1}" for i in range(psm.n_joints)]])
    expected = Rotation.from_rotvec(np.array(frame[["marker_rx", "marker_ry", "marker_rz"]].to_numpy()[5])).as_quat()
    np.testing.assert_allclose(np.abs(data.marker_quat_wxyz[5] @ np.r_[expected[3], expected[:3]]), 1.0, atol=1e-12)
    assert data.marker_seen.tolist() == [i != 2 for i in range(20)]
    assert set(data.set_name) == {"train"}
    assert (data.time_s == 0.0).all()


def test_q_columns_of_another_joint_count_name_the_robot_and_the_columns(psm: Kinematics, tmp_path: Path) -> None:
    frame = dvrk_frame(psm, 5, 1).drop(columns=[f"{k}_q{psm.n_joints}" for k in ("setpoint", "measured")])
    path = tmp_path / "short.csv"
    frame.to_csv(path, index=False)
    with pytest.raises(DatasetError) as error:
        read_dvrk_csv(path, RobotIdentity.of(psm), joint_units(psm))
    message = str(error.value)
    assert f"joints q1..q{psm.n_joints - 1} ({psm.n_joints - 1} joints)" in message
    assert f"({psm.n_joints} joints)" in message
    assert "/".join(psm.joint_names) in message
    assert f"expected {', '.join(expected_columns(psm.n_joints))}" in message
    assert f"the file has {', '.join(frame.columns)}" in message


def test_a_rotation_vector_of_the_wrong_length_is_one_error_line(
    psm: Kinematics, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "rot2.csv"
    dvrk_frame(psm, 5, 2).drop(columns=["marker_rz"]).to_csv(path, index=False)
    assert main(["errors", "calibrate", str(path), "--config", PSM_CONFIG]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: dVRK collection CSV for robot ")
    assert "a rotation vector of 2 columns (marker_rx, marker_ry)" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [  # each was taken: a residual of 36 km, 1e300 counted as "above threshold", overflow warnings
        ("marker_x", 1e6, "column 'marker_x': 1000000.0 in row 4; expected a position within +-100 m"),
        ("registration_error", -1.0, "column 'registration_error': -1.0 in row 4; expected an error of 0 to 100 m"),
        ("registration_error", 1e300, "column 'registration_error': 1e+300 in row 4; expected an error of 0 to"),
        ("marker_rx", 7.0, "data row 4 (line 5): marker rotation vector [7.0, "),
        ("marker_rx", 1e300, "data row 4 (line 5): marker rotation vector [1e+300, "),
        ("marker_ry", np.nan, "data row 4 (line 5): marker rotation vector ["),  # partly empty: neither seen nor unseen
        # a partly empty position was taken as a marker not seen: the row's other cells were dropped, exit 0
        ("marker_x", np.nan, "columns 'marker_x', 'marker_y', 'marker_z': [nan, "),
    ],
)
def test_the_marker_is_checked_as_in_the_documented_csv(
    column: str, value: float, message: str, psm: Kinematics, tmp_path: Path
) -> None:
    frame = dvrk_frame(psm, 5, 4)
    frame.loc[3, column] = value
    path = tmp_path / "marker.csv"
    frame.to_csv(path, index=False, float_format="%.17g")
    with pytest.raises(DatasetError, match=re.escape(f"{path}: {message}")):
        read_dvrk_csv(path, RobotIdentity.of(psm), joint_units(psm))


def test_text_in_a_joint_column_names_the_column(psm: Kinematics, tmp_path: Path) -> None:
    frame = dvrk_frame(psm, 5, 3)
    frame["measured_q2"] = frame["measured_q2"].astype(object)
    frame.loc[3, "measured_q2"] = "stalled"
    path = tmp_path / "text.csv"
    frame.to_csv(path, index=False)
    expected = "column 'measured_q2': expected finite numbers, found 'stalled' in data row 4 (line 5)"
    with pytest.raises(DatasetError, match=re.escape(expected)):
        read_dvrk_csv(path, RobotIdentity.of(psm), joint_units(psm))


def test_a_teleoperated_trajectory_is_judged_on_its_second_half(
    kinematics: Kinematics, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A user's first try: one dVRK trajectory, train on its first half, judge on the second (``--split time``)."""
    from cosim_validation.error_injection.dataset import MARKER_POSITION
    from test.error_injection.synthetic import synthetic_dataset

    data = synthetic_dataset(kinematics, 500, 300, seed=6)
    n = kinematics.n_joints
    quat = data.marker_quat_wxyz
    rotvec = Rotation.from_quat(np.column_stack((quat[:, 1:], quat[:, :1]))).as_rotvec()
    columns = {f"setpoint_q{i + 1}": data.q_setpoint[:, i] for i in range(n)}
    columns |= {f"measured_q{i + 1}": data.q_measured[:, i] for i in range(n)}
    columns |= dict(zip(("marker_x", "marker_y", "marker_z"), data.marker_pos_m.T, strict=True))
    columns |= dict(zip(("marker_rx", "marker_ry", "marker_rz"), rotvec.T, strict=True))
    path = tmp_path / "teleop.csv"
    pd.DataFrame(columns | {"registration_error": data.marker_error_m}).to_csv(path, index=False, float_format="%.17g")
    assert MARKER_POSITION[0] not in pd.read_csv(path).columns  # the dVRK names, not the dataset's
    argv = ["errors", "evaluate", str(path), "--split", "time:0.5", "--max-epochs", "10"]
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    (run,) = result["runs"]
    assert run["held_out"] == "rows after the first 50% held out"
    assert run["samples"] == 400
    assert run["training_rows"] == 400
    worse = result["over_seeds"]["worse_with_injection"]
    assert len(result["warnings"]) == sum(
        result["over_seeds"][k]["seeds_worse"] for k in ("translation_mm", "rotation_deg")
    )
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "400 held-out samples" in out
    assert out.count("warning:") == len(result["warnings"]) >= len(worse)


def test_a_column_the_dvrk_format_does_not_have_is_named(psm: Kinematics, tmp_path: Path) -> None:
    frame = dvrk_frame(psm, 6, 2).assign(timestamp=np.arange(6.0))
    path = tmp_path / "psm.csv"
    frame.to_csv(path, index=False)
    told: list[str] = []
    read_dvrk_csv(path, RobotIdentity.of(psm), joint_units(psm), told.append)
    assert told == [f"{path}: column 'timestamp' not read (not a column of this format)"]
    told.clear()
    dvrk_frame(psm, 6, 2).to_csv(path, index=False)
    read_dvrk_csv(path, RobotIdentity.of(psm), joint_units(psm), told.append)
    assert told == []
