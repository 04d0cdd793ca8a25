"""Experiment definitions follow seed 000, and bad requests are refused with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.exceptions import InputError
from cosim_validation.runs.experiment.experiment_specs import experiment_spec


def test_full_definitions_follow_seed_000() -> None:
    assert experiment_spec("rq1", False).granularities_m == (0.04, 0.03, 0.02)
    assert experiment_spec("rq1", False).per_cube == 3  # three targets per discretized area (5.2.2)
    assert experiment_spec("rq2", False).granularities_m == (0.02, 0.01, 0.005, 0.002)
    assert experiment_spec("rq2", False).region == "heart_side_7pct"
    rq3 = experiment_spec("rq3", False)
    assert rq3.min_clean >= 50
    assert rq3.backends == ("virtual", "physical")


def test_other_granularities() -> None:
    assert experiment_spec("rq2", False, (10.0, 20.0)).granularities_m == (0.02, 0.01)


@pytest.mark.parametrize(
    ("name", "granularities", "message"),
    [
        ("rq4", None, "unknown experiment 'rq4'; expected one of: rq1, rq2, rq3, adaptive"),
        ("rq3", (10.0,), "rq3 has no granularities"),
        ("rq1", (10.0, -2.0), r"expected numbers > 0, got \[10.0, -2.0\]"),
    ],
)
def test_bad_requests(name: str, granularities: tuple[float, ...] | None, message: str) -> None:
    with pytest.raises(InputError, match=message):
        experiment_spec(name, False, granularities)


def test_cli_errors(tmp_path: object, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["experiment", "rq1", "--granularities-mm", "20,abc", "--out", str(tmp_path)]) == 1
    assert "error: --granularities-mm: expected comma-separated numbers, got '20,abc'" in capsys.readouterr().err
    assert main(["experiment", "adaptive", "--granularities-mm", "20", "--out", str(tmp_path)]) == 1
    assert "applies to rq1 and rq2 only" in capsys.readouterr().err


def test_output_directories_are_checked_before_any_work(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A wrong --out is refused at once, before suites are generated (nothing is written)."""
    a_file = tmp_path / "file"
    a_file.write_text("")
    for name in ("rq2", "adaptive"):
        assert main(["experiment", name, "--quick", "--out", str(a_file)]) == 1
        assert f"error: --out {str(a_file)!r} is a file, expected a directory" in capsys.readouterr().err
    empty = tmp_path / "empty"
    assert main(["experiment", "rq2", "--quick", "--resume", "--out", str(empty)]) == 1
    assert "nothing to resume (no run/results.sqlite); run without --resume" in capsys.readouterr().err
    assert not empty.exists()
    used = tmp_path / "used"
    (used / "run").mkdir(parents=True)
    (used / "run" / "results.sqlite").write_bytes(b"")
    (used / "adaptive" / "round-0").mkdir(parents=True)
    (used / "adaptive" / "round-0" / "results.sqlite").write_bytes(b"")
    for name in ("rq1", "adaptive"):
        assert main(["experiment", name, "--quick", "--out", str(used)]) == 1
        err = capsys.readouterr().err
        assert "already holds files" in err
        assert "--resume" in err
    assert sorted(p.name for p in used.iterdir()) == ["adaptive", "run"]  # no suites were made
