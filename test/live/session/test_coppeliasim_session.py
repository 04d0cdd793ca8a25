"""CoppeliaSim as the virtual robot of a live session, by one switch in the graph (the virtual driver node's
``backend: coppeliasim``), played by the stand-in (a separate process speaking the ZeroMQ remote API, driven by the
official client): the session gives its case the outcome, verdicts and KPIs of a campaign whose virtual robot is
the same CoppeliaSim (``campaign.robots.virtual: coppeliasim``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root
from cosim_validation.runs.campaign.results_db import ResultsDB
from test.live.same_results import assert_same_results
from test.live.session.test_live_equals_batch import CASES, _grid_suite
from test.robots.virtual.coppeliasim_process import standin, with_coppeliasim
from test.robots.virtual.plans import CONFIG_PATH, shipped_config_dict

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def _configs(folder: Path, port: int) -> tuple[Path, Path]:
    """The case study with CoppeliaSim (10 ms steps) as the virtual robot, and the session graph reading it."""
    data = with_coppeliasim(shipped_config_dict(), port, time_step_s=0.01, connect_timeout_s=5.0)
    data["campaign"]["robots"]["virtual"] = "coppeliasim"
    data["campaign"]["properties"] = str(package_root() / "config" / data["campaign"]["properties"])
    data["robot"]["urdf"] = str((CONFIG_PATH.parent / data["robot"]["urdf"]).resolve())
    case = folder / "case.yaml"
    case.write_text(yaml.safe_dump(data, sort_keys=False))
    graph = yaml.safe_load((package_root() / "config" / "digital_twin.yaml").read_text())
    for node in graph["nodes"]:
        parameters = node.get("parameters", {})
        if parameters.get("config") == "config/needle_insertion.yaml":
            parameters["config"] = str(case)
        if node["name"] == "virtual_driver":
            parameters["backend"] = "coppeliasim"  # the one switch of the graph
    path = folder / "graph.yaml"
    path.write_text(yaml.safe_dump(graph, sort_keys=False))
    return path, case


def test_a_session_on_coppeliasim_equals_its_campaign(
    tmp_path: Path, repo_root: Path, node_env: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _grid_suite(tmp_path / "one.parquet", repo_root, CASES[:1])
    with standin(CONFIG_PATH) as port:
        graph, case = _configs(tmp_path, port)
        session = ["session", "--config", str(graph), "--suite", str(suite), "--cases", "0"]
        assert main([*session, "--out", str(tmp_path / "session")]) == 0
        campaign = ["campaign", "--config", str(case), "--suite", str(suite), "--backends", "virtual,physical"]
        assert main([*campaign, "--workers", "1", "--out", str(tmp_path / "campaign")]) == 0
    capsys.readouterr()
    # the stand-in's arm is MuJoCo's, so equal verdicts alone would not tell the engines apart: the driver says
    driver_log = (tmp_path / "session" / "logs" / "virtual_driver.log").read_text()
    assert "virtual robot: backend 'coppeliasim'" in driver_log, driver_log
    live_cases = assert_same_results(tmp_path / "session", tmp_path / "campaign")
    assert [outcome for outcome, _, _ in live_cases.values()] == ["completed"]
    with ResultsDB.open(tmp_path / "campaign" / "results.sqlite") as db:
        assert db.meta()["backends"] == ["coppeliasim", "emulated"]
