"""A campaign whose virtual robot is CoppeliaSim (one configuration switch), played by the stand-in, gives verdicts:
the same as MuJoCo's, since the stand-in's arm is the MuJoCo arm. With CoppeliaSim absent the campaign stops at
once with one ``error:`` line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from cosim_validation.cli.main import main
from cosim_validation.common.config import package_root
from cosim_validation.runs.campaign.campaign_runner import CampaignRequest, run_campaign
from test.robots.virtual.coppeliasim_process import with_coppeliasim
from test.robots.virtual.plans import shipped_config_dict
from test.runs.campaign.run_rows import stored_rows


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three random cases next to the heart at 90 mm (some hit it with the straight controller, some miss)."""
    from cosim_validation.anatomy import load_anatomy
    from cosim_validation.common.config import load_config
    from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config

    config = load_config(package_root() / "config" / "needle_insertion.yaml")
    request = TestgenRequest("random", 0.09, 2, count=3, region="heart_side_7pct", seed=2)
    cases, _ = generate_suite(load_anatomy(config["anatomy"]), load_testgen_config(config["testgen"]), request)
    path = tmp_path_factory.mktemp("suite") / "random.parquet"
    cases.write(path)
    return path


def _write_config(folder: Path, virtual: str, port: int) -> Path:
    data: dict[str, Any] = with_coppeliasim(shipped_config_dict(), port, time_step_s=0.01, connect_timeout_s=0.5)
    data["campaign"]["robots"]["virtual"] = virtual  # the one switch
    data["campaign"]["properties"] = str(package_root() / "config" / data["campaign"]["properties"])
    path = folder / f"{virtual}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _run(config: Path, suite: Path, out: Path) -> dict[str, Any]:
    request = CampaignRequest(config_path=config, suite_paths=(suite,), out_dir=out, backends=("virtual",), workers=1)
    outcome = run_campaign(request, progress_stream=None)
    assert (outcome.total, outcome.ran) == (3, 3)
    return stored_rows(out)


@pytest.mark.slow
def test_coppeliasim_campaign_gives_mujocos_verdicts(coppeliasim_port: int, suite: Path, tmp_path: Path) -> None:
    rows = {
        engine: _run(_write_config(tmp_path, engine, coppeliasim_port), suite, tmp_path / engine)
        for engine in ("mujoco", "coppeliasim")
    }
    coppelia = rows["coppeliasim"]
    assert {backend for backend, *_ in coppelia["records"].values() if backend != "plan"} >= {"coppeliasim"}
    assert [c.outcome for c in coppelia["cases"]] == [c.outcome for c in rows["mujoco"]["cases"]]
    verdicts = {(v.test_id, v.property, v.robot): v.status for v in coppelia["verdicts"]}
    assert verdicts, "no verdicts stored"
    assert set(verdicts.values()) <= {"holds", "violated", "inconclusive", "not_applicable"}
    assert verdicts == {(v.test_id, v.property, v.robot): v.status for v in rows["mujoco"]["verdicts"]}


def test_campaign_without_coppeliasim_is_one_error_line(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test.robots.virtual.test_coppeliasim_backend import free_port

    port = free_port()
    config = _write_config(tmp_path, "coppeliasim", port)
    code = main(
        [
            "campaign",
            "--config",
            str(config),
            "--suite",
            str(suite),
            "--backends",
            "virtual",
            "--workers",
            "1",
            "--out",
            str(tmp_path / "run"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1
    assert err[0].startswith("error: ")
    assert f"no CoppeliaSim answered at tcp://127.0.0.1:{port}" in err[0]
