"""RQ3's third row: the same cases on the virtual robot behind the ``errors`` filter, beside virtual and physical."""

from __future__ import annotations

from pathlib import Path

import pytest

from cosim_validation.common.config import load_config
from cosim_validation.common.exceptions import CosimError
from cosim_validation.robots.model import RobotConfig
from cosim_validation.runs.campaign.campaign_runner import CampaignOutcome, run_campaign
from cosim_validation.runs.experiment.experiment_specs import experiment_spec
from cosim_validation.runs.experiment.research_questions import RunOptions, check_errors_model, errors_request
from cosim_validation.runs.experiment.rq3_errors import ERRORS_RUN, GOAL_SHARE, INJECTED_ROW, table_4_with_errors
from test.error_injection.synthetic import train_synthetic_model
from test.runs.campaign.run_fixtures import CONFIG, request_for


def test_table_4_gets_the_injected_row_over_the_same_cases(
    reference: CampaignOutcome, suites: tuple[Path, Path], tmp_path: Path
) -> None:
    kinematics = RobotConfig.from_config(load_config(CONFIG)["robot"]).kinematics
    model = tmp_path / "synthetic.npz"
    train_synthetic_model(kinematics).save(model)
    options = RunOptions(CONFIG, tmp_path, workers=1, errors_model=model)
    request = errors_request(request_for(suites[1:], tmp_path / "unused"), options)
    assert request.out_dir == tmp_path / ERRORS_RUN
    assert request.backends == ("virtual",)
    assert [f.text for f in request.filters] == [f"errors:model={model}"]
    run_campaign(request, progress_stream=None)
    answer = table_4_with_errors(reference.out_dir, tmp_path / ERRORS_RUN)
    assert answer["cases"] > 0
    rows = {row["robot"]: row for row in answer["rows"]}
    assert list(rows) == ["virtual", "physical", INJECTED_ROW]
    assert {row["n_cases"] for row in rows.values()} == {answer["cases"]}  # the same cases in every row
    # the synthetic errors are millimetres; the plain simulator follows its plan to hundredths of a millimetre
    assert rows[INJECTED_ROW]["tip_mm"]["mean"] > 10 * rows["virtual"]["tip_mm"]["mean"]
    for label in ("virtual", INJECTED_ROW):
        for stat, goal in answer["goal"][label].items():
            physical = rows["physical"]["tip_mm"][stat]
            assert goal["physical_mm"] == physical
            assert goal["relative"] == pytest.approx(abs(rows[label]["tip_mm"][stat] - physical) / physical)
            assert goal["within"] == (goal["relative"] <= GOAL_SHARE)
    assert not answer["goal"]["virtual"]["mean"]["within"]  # the plain simulator under-predicts the physical arm


def test_errors_is_refused_outside_rq3_and_for_a_missing_model(tmp_path: Path) -> None:
    with pytest.raises(CosimError, match="--errors applies to rq3 only"):
        check_errors_model(experiment_spec("rq1", True), RunOptions(CONFIG, tmp_path, errors_model=tmp_path / "m.npz"))
    with pytest.raises(CosimError, match=r"m\.npz"):
        check_errors_model(experiment_spec("rq3", True), RunOptions(CONFIG, tmp_path, errors_model=tmp_path / "m.npz"))
