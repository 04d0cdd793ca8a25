"""MoveIt 2's move_group as the planner under test in a live session: the controller node plans every case through
the emulated move_group (a separate process in the test's ROS domain, reached by ``controllers.moveit.domain_id``
while the session's nodes run on a domain of their own), and the session gives each case the outcome, verdicts and
KPIs of a campaign over the same cases with the same configuration."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root
from cosim_validation.testgen import Suite
from test.live.moveit.test_moveit_controller import write_config
from test.live.same_results import assert_same_results

pytestmark = [pytest.mark.ros, pytest.mark.slow]

CASES = 2


def _graph(folder: Path, case: Path) -> Path:
    """The shipped session graph with every node's ``config`` the MoveIt case study."""
    graph = yaml.safe_load((package_root() / "config" / "digital_twin.yaml").read_text())
    for node in graph["nodes"]:
        if node.get("parameters", {}).get("config") == "config/needle_insertion.yaml":
            node["parameters"]["config"] = str(case)
    path = folder / "graph.yaml"
    path.write_text(yaml.safe_dump(graph, sort_keys=False))
    return path


def _first_cases(source: Path, path: Path) -> Path:
    full = Suite.read(source)
    rows = list(range(CASES))
    keep = {k: v for k, v in full.metadata.items() if k not in ("format", "frame_id", "unit", "suite_id")}
    Suite.build(full.source_m[rows], full.target_m[rows], full.cube_index[rows], full.target_depth_m[rows], keep).write(
        path
    )
    return path


def test_a_session_planned_by_move_group_equals_its_campaign(
    move_group: Path,
    suites: tuple[Path, Path],
    tmp_path: Path,
    node_env: dict[str, str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    case = write_config(tmp_path, domain_id=int(node_env["ROS_DOMAIN_ID"]))
    suite = _first_cases(suites[1], tmp_path / "two.parquet")
    session = ["session", "--config", str(_graph(tmp_path, case)), "--suite", str(suite), "--cases", "0"]
    assert main([*session, "--out", str(tmp_path / "session")]) == 0
    campaign = ["campaign", "--config", str(case), "--suite", str(suite), "--backends", "virtual,physical"]
    assert main([*campaign, "--workers", "1", "--out", str(tmp_path / "campaign")]) == 0
    capsys.readouterr()
    live_cases = assert_same_results(tmp_path / "session", tmp_path / "campaign")
    assert len(live_cases) == CASES
    assert {controller for _, _, controller in live_cases.values()} == {"moveit"}
    assert "completed" in {outcome for outcome, _, _ in live_cases.values()}, live_cases
    # move_group planned every case twice, for the session's controller node and for the campaign: each answer is a
    # line of the stand-in's log
    answers = [line for line in move_group.read_text().splitlines() if "[move_group]: plan_kinematic_path:" in line]
    assert len(answers) >= 2 * CASES, answers
