"""``cosim errors calibrate|train|evaluate`` on a dataset file; bad input is one error line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.error_injection.dataset_io import write_parquet
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.robots.model import Kinematics
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome
from test.error_injection.synthetic import synthetic_dataset


@pytest.fixture(scope="module")
def dataset_file(kinematics: Kinematics, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("errors") / "er3pro.parquet"
    write_parquet(synthetic_dataset(kinematics, 1200, 300, seed=5), path)
    return path


def test_train_then_evaluate_writes_the_model_and_the_page(
    dataset_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "m.npz"
    assert main(["errors", "train", str(dataset_file), "-o", str(model), "--max-epochs", "60", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "calibration (kinematic, 1200 poses)" in out
    assert "held at nominal (not identifiable from the data): offset joint1, offset joint7" in out
    assert f"wrote {model}" in out
    assert ErrorModel.load(model).meta["nn1"]["settings"]["seed"] == 2
    page = tmp_path / "report.html"
    assert main(["errors", "evaluate", str(dataset_file), "--model", str(model), "--html", str(page), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["samples"] == 300
    assert set(result["table"]) == {f"{w} {c}" for w in ("translation_mm", "rotation_deg") for c in ("without", "with")}
    assert result["improvement"]["translation_mm"] > 1.0
    assert "Table II" in page.read_text()
    assert "data:image/png;base64," in page.read_text()


def test_calibrate_prints_the_transforms(dataset_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["errors", "calibrate", str(dataset_file), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert len(result["X_tip_marker"]) == 4
    assert result["calibration"]["translation_mean_mm"] < 2.0
    # --json before the action, as `cosim errors --help` shows it: the same document on stdout (it printed the text
    # report on stderr and nothing on stdout)
    assert main(["errors", "--json", "calibrate", str(dataset_file)]) == 0
    assert json.loads(capsys.readouterr().out) == result


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["errors", "train", "missing.parquet", "-o", "m.npz"], "missing.parquet: cannot read an error dataset"),
        (["errors", "evaluate", "d.txt", "--model", "m.npz"], "d.txt: expected a .parquet or .csv dataset"),
        (["errors", "calibrate", "x.parquet", "--max-registration-error-mm", "0"], "expected a number > 0"),
        (["errors", "calibrate", "x.parquet", "--max-registration-error-mm", "1e300"], "at most 100000 (100 m)"),
        # it named the settings' field and printed their whole repr
        (["errors", "collect", "--goals", "0", "-o", "d.parquet"], "--goals: collection settings: goals out of range"),
        (["errors", "frobnicate"], "invalid choice"),
        # refused where it is read, naming the option (0 was refused by the training, without naming it)
        (["errors", "train", "d.parquet", "-o", "m.npz", "--max-epochs", "0"], "--max-epochs: expected an integer 1"),
    ],
)
def test_bad_input_is_one_error_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err
    assert err.count("\n") == 1


def test_a_model_for_another_robot_is_refused_by_evaluate(
    dataset_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = tmp_path / "cut.npz"
    cut.write_bytes(b"PK\x03\x04 truncated")
    assert main(["errors", "evaluate", str(dataset_file), "--model", str(cut), "--json"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert "not an intact error model" in error["message"]


def test_a_run_becomes_a_dataset_of_its_stored_trajectories(
    reference: CampaignOutcome, kinematics: Kinematics, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``collect --from-run``: every sample of the robot's trajectory of every case, a segment per case, the
    named cases held out; the rows are the stored records' own values."""
    from cosim_validation.error_injection.dataset_io import read_parquet
    from cosim_validation.runs.campaign.results_db import ResultsDB

    with ResultsDB.open(reference.out_dir / "results.sqlite") as db:
        records = list(db.trajectories("physical", kinematics))
    held_out = records[-1].test_id
    out = tmp_path / "run.parquet"
    argv = ["errors", "collect", "--from-run", str(reference.out_dir), "--test-cases", held_out, "-o", str(out)]
    assert main([*argv, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    dataset = read_parquet(out)
    assert printed["rows"] == {"train": sum(r.n_samples for r in records[:-1]), "test": records[-1].n_samples}
    assert dataset.meta["cases"] == [r.test_id for r in records]
    for segment, record in enumerate(records):
        rows = dataset.rows(dataset.segment == segment)
        assert set(rows.set_name) == {"test" if record.test_id == held_out else "train"}
        np.testing.assert_array_equal(rows.q_setpoint, record.q_setpoint)
        np.testing.assert_array_equal(rows.q_measured, record.q_measured)
        np.testing.assert_array_equal(rows.marker_error_m, record.marker_error_m)
    assert dataset.marker_seen.any()


def test_too_few_poses_for_the_kinematic_calibration_is_one_error_line(
    kinematics: Kinematics, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "small.parquet"
    write_parquet(synthetic_dataset(kinematics, 40, 10, seed=6), path)
    assert main(["errors", "calibrate", str(path)]) == 1
    err = capsys.readouterr().err
    assert err == (
        f"error: {path}: kinematic calibration: 40 tracked poses for 35 parameters (7 joint offsets, 7 ratios, "
        "2 couplings, 7 lost motions, X and Y); at least 70 are needed (2 per parameter)\n"
    )
    assert main(["errors", "calibrate", str(path), "--hand-eye-only", "--json"]) == 0  # X and Y alone: 10 poses
    result = json.loads(capsys.readouterr().out)
    assert "kinematic_calibration" not in result
    assert result["calibration"]["method"] == "shah+refined"


def test_too_few_rows_to_train_names_the_dataset(
    kinematics: Kinematics, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said only ``error: NN1 (training rows): 150 usable rows, at least 200 ...``, naming no file."""
    small = tmp_path / "small.parquet"
    write_parquet(synthetic_dataset(kinematics, 150, 50, seed=4), small)
    model = tmp_path / "m.npz"
    assert main(["errors", "train", str(small), "-o", str(model), "--max-epochs", "5"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {small}: NN1 (training rows): 150 usable rows, at least 200")
    assert err.count("\n") == 1
    assert not model.exists()
