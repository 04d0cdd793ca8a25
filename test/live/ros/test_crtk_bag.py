"""A run's record as a CRTK-style MCAP or the dataset CSV and back (issue 17 item 5): ``cosim export-crtk`` then
``cosim import-crtk`` gives the rows of the record itself (setpoint and measured joints, marker pose and
registration error), as an error dataset ``cosim errors`` reads; the CSV may give the marker's orientation as a
rotation vector."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.config import load_config, package_root
from cosim_validation.error_injection.dataset import MARKER_QUATERNION, MARKER_ROTVEC, ErrorDataset
from cosim_validation.error_injection.dataset_io import dataset_of_record, read_parquet
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.live.ros.bag import topics_of
from cosim_validation.robots.model import RobotConfig
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from cosim_validation.runs.campaign.results_db import ResultsDB

CONFIG = package_root() / "config" / "needle_insertion.yaml"
JS, PS, TM = (
    "sensor_msgs/msg/JointState",
    "geometry_msgs/msg/PoseStamped",
    "cosim_validation_interfaces/msg/TrackedMarker",
)


@pytest.fixture(scope="module")
def recorded(reference: CampaignOutcome) -> tuple[str, ErrorDataset]:
    """A completed case of the reference campaign and its physical robot's record as dataset rows."""
    kinematics = RobotConfig.from_config(load_config(CONFIG)["robot"]).kinematics
    units = tuple(kinematics.chain.joint_unit(j) for j in range(kinematics.n_joints))
    with ResultsDB.open(reference.out_dir / "results.sqlite") as db:
        test_id = next(c.test_id for c in db.cases() if c.outcome == "completed")
        record = db.trajectory(test_id, "physical", kinematics)
    return test_id, dataset_of_record(record, RobotIdentity.of(kinematics), units)


def _same_rows(got: ErrorDataset, want: ErrorDataset, time_tolerance_s: float, quat_tolerance: float = 0.0) -> None:
    assert got.robot == want.robot
    assert got.joint_units == want.joint_units
    np.testing.assert_array_equal(got.q_setpoint, want.q_setpoint)
    np.testing.assert_array_equal(got.q_measured, want.q_measured)
    np.testing.assert_allclose(got.time_s, want.time_s - want.time_s[0], atol=time_tolerance_s, rtol=0)
    np.testing.assert_array_equal(got.marker_seen, want.marker_seen)
    seen = want.marker_seen
    np.testing.assert_array_equal(got.marker_pos_m[seen], want.marker_pos_m[seen])
    np.testing.assert_array_equal(got.marker_error_m[seen], want.marker_error_m[seen])
    np.testing.assert_allclose(got.marker_quat_wxyz[seen], want.marker_quat_wxyz[seen], atol=quat_tolerance, rtol=0)


def test_a_record_goes_out_as_a_crtk_bag_and_back(
    recorded: tuple[str, ErrorDataset], reference: CampaignOutcome, tmp_path: Path
) -> None:
    test_id, want = recorded
    assert want.marker_seen.any()
    assert (~want.marker_seen).any()  # dropouts and samples out of view travel as unseen markers
    bag, dataset = tmp_path / "run.mcap", tmp_path / "run.parquet"
    assert main(["export-crtk", str(reference.out_dir), test_id, "--namespace", "/ER3", "-o", str(bag)]) == 0
    n = want.n_rows
    assert topics_of(bag) == {
        "/ER3/setpoint_js": (JS, n),
        "/ER3/measured_js": (JS, n),
        "/ER3/measured_cp": (PS, n),
        "/tracker/marker/measured_cp": (PS, int(want.marker_seen.sum())),
        "/tracker/marker": (TM, n),
    }
    assert main(["import-crtk", str(bag), "--config", str(CONFIG), "-o", str(dataset)]) == 0
    _same_rows(read_parquet(dataset), want, time_tolerance_s=1e-9)  # stamps are whole nanoseconds


def test_a_tracker_under_another_namespace_is_one_error_naming_its_topics(
    recorded: tuple[str, ErrorDataset], reference: CampaignOutcome, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The import read every row as "marker not seen" and exited 0 when the tracker was not under ``/tracker``."""
    test_id, want = recorded
    bag, dataset = tmp_path / "run.mcap", tmp_path / "run.parquet"
    argv = ["export-crtk", str(reference.out_dir), test_id, "--tracker-namespace", "/optitrack", "-o", str(bag)]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["import-crtk", str(bag), "--config", str(CONFIG), "-o", str(dataset)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"error: {bag}: no marker topic of the tracker namespace '/tracker' (/tracker/marker or "
        "/tracker/marker/measured_cp); the bag has /optitrack/marker, /optitrack/marker/measured_cp: give its "
        "namespace with --tracker-namespace\n"
    )
    assert not dataset.exists()
    argv = ["import-crtk", str(bag), "--config", str(CONFIG), "--tracker-namespace", "/optitrack", "-o", str(dataset)]
    assert main(argv) == 0
    assert read_parquet(dataset).marker_seen.sum() == want.marker_seen.sum()


def test_a_record_goes_out_as_the_dataset_csv_and_back_with_a_rotation_vector_too(
    recorded: tuple[str, ErrorDataset], reference: CampaignOutcome, tmp_path: Path
) -> None:
    from scipy.spatial.transform import Rotation

    test_id, want = recorded
    csv = tmp_path / "run.csv"
    assert main(["export-crtk", str(reference.out_dir), test_id, "-o", str(csv)]) == 0
    assert main(["import-crtk", str(csv), "--config", str(CONFIG), "-o", str(tmp_path / "a.parquet")]) == 0
    _same_rows(read_parquet(tmp_path / "a.parquet"), want, time_tolerance_s=0.0)

    frame = pd.read_csv(csv)
    quat = frame[list(MARKER_QUATERNION)].to_numpy()
    seen = np.isfinite(quat).all(axis=1)
    rotvec = np.full((len(frame), 3), np.nan)
    rotvec[seen] = Rotation.from_quat(quat[seen][:, [1, 2, 3, 0]]).as_rotvec()
    frame = frame.drop(columns=list(MARKER_QUATERNION)).assign(**dict(zip(MARKER_ROTVEC, rotvec.T, strict=True)))
    frame.to_csv(tmp_path / "rotvec.csv", index=False, float_format="%.17g")
    assert (
        main(["import-crtk", str(tmp_path / "rotvec.csv"), "--config", str(CONFIG), "-o", str(tmp_path / "b.parquet")])
        == 0
    )
    # the record keeps quaternions to 9 decimals (not exactly unit): through a rotation vector they come back unit
    _same_rows(read_parquet(tmp_path / "b.parquet"), want, time_tolerance_s=0.0, quat_tolerance=1e-9)


def test_a_crtk_bag_is_no_dashboard_bag(
    recorded: tuple[str, ErrorDataset], reference: CampaignOutcome, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dashboard given a bag of other topics: one error line naming the bag (it named nothing)."""
    test_id, _ = recorded
    bag = tmp_path / "run.mcap"
    assert main(["export-crtk", str(reference.out_dir), test_id, "-o", str(bag)]) == 0
    capsys.readouterr()
    assert main(["dashboard", "--bag", str(bag), "--screenshot", str(tmp_path / "x.png")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {bag}: the bag holds no message of the dashboard's topics (/cosim/...)"]
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [  # a registration error of -1 (a common "unknown") and a zero quaternion were imported as seen markers
        ("marker_error_m", -1.0, "topic '/tracker/marker': column 'registration_error': -1.0 in row 4; expected an"),
        ("marker_quat_wxyz", [0.0] * 4, "topic '/tracker/marker': pose.orientation: norm 0 in row 4; expected a unit"),
    ],
)
def test_a_bag_marker_the_csv_import_would_refuse_is_one_error(
    field: str, value: object, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cosim_validation.live.ros.crtk_bag import export_crtk_bag
    from test.common.record.test_trajectory_record import make_record

    record = make_record(n=6)
    fields = dict(record.__dict__)
    fields["marker_pos_m"] = np.full((6, 3), 0.5)
    fields["marker_quat_wxyz"] = np.tile([1.0, 0.0, 0.0, 0.0], (6, 1))
    fields["marker_error_m"] = np.full(6, 1e-4)
    fields[field] = fields[field].copy()
    fields[field][3] = value
    bag = tmp_path / "theirs.mcap"
    export_crtk_bag(SimpleNamespace(**fields), bag, "/ER3")  # type: ignore[arg-type]
    out = tmp_path / "d.parquet"
    assert main(["import-crtk", str(bag), "--config", str(CONFIG), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bag}: {message}"), err
    assert not out.exists()
