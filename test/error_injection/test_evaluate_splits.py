"""``cosim errors evaluate``: gaps side by side, a warning when injection is worse, held-out splits over seeds."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.dataset_io import write_parquet
from cosim_validation.error_injection.evaluation import Evaluation
from cosim_validation.error_injection.features import FeatureSpec
from cosim_validation.error_injection.mlp import Network
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.error_injection.splits import Split, held_out_rows, parse_split
from cosim_validation.robots.model import Kinematics
from test.error_injection.synthetic import synthetic_dataset


@pytest.fixture(scope="module")
def dataset(kinematics: Kinematics) -> ErrorDataset:
    return synthetic_dataset(kinematics, 600, 200, seed=3)


@pytest.fixture(scope="module")
def dataset_file(dataset: ErrorDataset, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("splits") / "d.parquet"
    write_parquet(dataset, path)
    return path


def constant_offset_model(kinematics: Kinematics, offset: float) -> ErrorModel:
    """NN1 of every joint ``offset`` [rad] whatever the input, NN2 zero: a model that is plainly wrong."""
    n = kinematics.n_joints
    nets = []
    for kind, bias in (("OC", offset), ("OC", 0.0)):
        spec = FeatureSpec(kind, n)
        weights = (np.zeros((n, 2)), np.zeros((2, n)))
        biases = (np.zeros(2), np.full(n, bias))
        nets.append(Network(spec, weights, biases, np.zeros(n), np.ones(n), np.zeros(n), np.ones(n)))
    return ErrorModel(RobotIdentity.of(kinematics), nets[0], nets[1], "0" * 64)


def test_a_model_that_makes_the_twin_worse_is_named_in_a_warning(
    kinematics: Kinematics, dataset_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "wrong.npz"
    constant_offset_model(kinematics, 0.02).save(model)
    assert main(["errors", "evaluate", str(dataset_file), "--model", str(model)]) == 0
    out = capsys.readouterr().out
    assert "200 held-out samples" in out
    warnings = [line for line in out.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 2
    assert "position gap is worse" in warnings[0]
    assert "rotation gap is worse" in warnings[1]
    assert "cut" not in out  # no ratio that reads as a gain
    assert "tip rotation error with: KS" in out
    assert main(["errors", "evaluate", str(dataset_file), "--model", str(model), "--json", "--set", "train"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["worse_with_injection"] == ["position", "rotation"]
    assert result["with_over_without"]["rotation_deg"] > 1.0
    assert len(result["warnings"]) == 2
    assert result["set"] == "train"


def test_training_rows_are_not_called_held_out(
    kinematics: Kinematics, dataset_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "zero.npz"
    constant_offset_model(kinematics, 0.0).save(model)
    assert main(["errors", "evaluate", str(dataset_file), "--model", str(model), "--set", "train"]) == 0
    out = capsys.readouterr().out
    assert "600 training samples (not held out)" in out
    assert "held-out samples" not in out
    assert "warning:" not in out  # zero offsets: the gaps are equal, not worse


def test_a_prismatic_joint_error_is_in_mm() -> None:
    rng = np.random.default_rng(0)
    gap = {"without": rng.random(50), "with": rng.random(50)}
    tip = {"real": rng.random(50), "without": np.zeros(50), "with": rng.random(50)}
    errors = {"real": rng.normal(size=(50, 2)), "with": rng.normal(size=(50, 2))}
    distances = Evaluation(gap, gap, errors, tip, tip, ("rad", "m")).distances()
    assert distances["joint 1 controller error with"]["unit"] == "mrad"
    assert distances["joint 2 controller error with"]["unit"] == "mm"
    assert distances["tip rotation error with"]["unit"] == "deg"


def test_the_splits_hold_out_what_they_say(dataset: ErrorDataset) -> None:
    repeated = replace(dataset, q_setpoint=np.repeat(dataset.q_setpoint[::2], 2, axis=0)[: dataset.n_rows])
    held, _ = held_out_rows(repeated, Split("time", 0.7), 0)
    first = int(np.argmax(held))
    assert not held[:first].any()
    assert held[first:].all()
    assert (repeated.q_setpoint[first] != repeated.q_setpoint[first - 1]).any()  # a pair of repeats is not cut
    for seed in range(4):
        held, what = held_out_rows(dataset, Split("region", 0.3), seed)
        joint = next(j for j, name in enumerate(dataset.robot.joint_names) if f"joint {name} " in what)
        q = dataset.q_setpoint[:, joint]
        low, high = q[~held].min(), q[~held].max()
        assert ((q[held] > high) | (q[held] < low)).all()  # outside the training box
        assert 0.25 < held.mean() < 0.35
    held, what = held_out_rows(dataset, Split("segment", 0.3), 0)
    assert what in {"segment 0 held out", "segment 1 held out"}
    for segment in (0, 1):
        assert len(set(held[dataset.segment == segment])) == 1


def test_a_split_over_seeds_gives_the_spread(dataset_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["errors", "evaluate", str(dataset_file), "--split", "region", "--seeds", "2", "--max-epochs", "15"]
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [r["seed"] for r in result["runs"]] == [0, 1]
    for key in ("translation_mm", "rotation_deg"):
        row = result["over_seeds"][key]["with_over_without"]
        values = [r["with_over_without"][key] for r in result["runs"]]
        assert row["min"] == min(values)
        assert row["max"] == max(values)
        assert row["mean"] == pytest.approx(np.mean(values))
    assert {"tip rotation error with", "tip position error with"} <= set(result["over_seeds"])
    assert all(r["samples"] == 240 for r in result["runs"])  # 0.3 of 800 rows


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--split", "random"], "--split 'random': expected time:F, region[:F] or segment[:F]"),
        (["--split", "time:1.5"], "the fraction must be a number in (0, 1)"),
        (["--split", "time:0"], "the fraction must be a number in (0, 1)"),
        (["--split", "region:x"], "the fraction must be a number in (0, 1)"),
        (["--split", "time"], "give the training fraction"),
        (["--split", "time:0.1"], "--split time:0.1: leaves 80 training rows, at least 200 are needed"),
        (["--split", "region:0.99"], "leaves 8 training rows"),
        (["--split", "region", "--seeds", "0"], "--seeds: expected 1..100, got 0"),
        (["--split", "region", "--seeds", "1000000000"], "--seeds: expected 1..100"),  # it never ended
        (["--split", "region", "--model", "m.npz"], "--model: not with --split"),
        (["--split", "region", "--max-epochs", "0"], "argument --max-epochs: expected an integer 1 to 100000, got 0"),
        ([], "give --model MODEL, or --split"),
    ],
)
def test_bad_split_input_is_one_error_line(
    dataset_file: Path, options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["errors", "evaluate", str(dataset_file), *options]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ")
    assert captured.err.count("\n") == 1
    assert message in captured.err
    assert main(["errors", "evaluate", str(dataset_file), *options, "--json"]) == 1
    assert message in json.loads(capsys.readouterr().out)["error"]["message"]


def test_parse_split_defaults() -> None:
    assert parse_split("region") == Split("region", 0.3)
    assert parse_split("segment:0.5") == Split("segment", 0.5)
    assert parse_split("time:0.7").text == "time:0.7"
    assert parse_split("time:0.9999999").text == "time:0.9999999"  # every digit given (it read time:1)
