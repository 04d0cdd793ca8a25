"""``cosim testgen``: the metrics table, JSON, the suite file, and bad input without half-written files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.testgen import Suite


def test_grid_run_prints_the_table_and_writes_the_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "suite.parquet"
    code = main(
        ["testgen", "--method", "grid", "--granularity-mm", "20", "--per-cube", "2", "--seed", "5", "-o", str(out)]
    )
    text = capsys.readouterr().out
    assert code == 0
    suite = Suite.read(out)
    assert f"suite {suite.suite_id}: {len(suite)} cases in region 'left_lung'" in text
    for row in ("non-empty cubes", "points generated", "coverage [%]", "max cases in one cube", "full share [%]"):
        assert row in text
    assert suite.metadata["generator"] == "grid"
    assert suite.metadata["seed"] == 5
    assert suite.metadata["granularity_m"] == pytest.approx(0.02)
    assert {m["name"] for m in suite.metadata["models"]} == {"left_lung", "right_lung", "heart", "torso"}
    assert suite.metadata["config"]["testgen"]["target"] == "left_lung"


def test_random_run_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "random.parquet"
    code = main(
        [
            "testgen",
            "--method",
            "random",
            "--granularity-mm",
            "20",
            "--count",
            "300",
            "--region",
            "near_heart",
            "-o",
            str(out),
            "--json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["metrics"]["valid_cases"] == 300 == len(Suite.read(out))
    assert report["region"]["near"] == "heart"
    assert 0 < report["metrics"]["coverage"] <= 1
    assert np.isfinite(report["metrics"]["points_generated"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--granularity-mm", "0"], "--granularity-mm: expected a cube edge > 0 mm, got 0.0"),
        (["--granularity-mm", "900"], "is larger than region 'left_lung'"),
        (["--granularity-mm", "20", "--per-cube", "0"], "--per-cube: expected an integer >= 1, got 0"),
        (["--granularity-mm", "20", "--region", "spleen"], "unknown region 'spleen'"),
        (["--granularity-mm", "20", "--config", "no/such.yaml"], "no/such.yaml: file not found"),
    ],
)
def test_bad_input_is_one_error_line_and_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    out = tmp_path / "suite.parquet"
    assert main(["testgen", *args, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
