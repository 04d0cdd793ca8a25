"""cosim doctor finds every component here, and names what is missing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cosim_validation.cli.main import main


@pytest.mark.ros  # the doctor asks the ROS graph for a controller manager and move_group
def test_doctor_json_reports_every_component(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    names = {c["name"] for c in report["components"]}
    assert code == 0, report["missing"]
    assert report["ok"] is True
    for required in (
        "python",
        "rclpy",
        "rmw",
        "cosim_validation_interfaces",
        "mujoco",
        "numba",
        "open3d",
        "trimesh",
        "pinocchio",
    ):
        assert required in names
    by_name = {c["name"]: c for c in report["components"]}
    assert by_name["rmw"]["version"].startswith("rmw_")
    assert by_name["ament index"]["detail"].endswith("share/cosim_validation")
    assert by_name["session discovery"]["version"] == "LOCALHOST"
    assert all(c["version"] for c in report["components"] if c["found"])


@pytest.mark.ros  # the doctor asks the ROS graph for a controller manager and move_group
def test_doctor_fails_naming_the_interfaces_when_their_prefix_is_gone() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in env.get("PYTHONPATH", "").split(os.pathsep) if ".ros" not in p)
    out = subprocess.run(
        [sys.executable, "-m", "cosim_validation.cli.main", "doctor"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert out.returncode == 1
    assert "error: missing required components: cosim_validation_interfaces" in out.stderr
    assert "make setup" in out.stdout


def test_unknown_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """A usage error is one error line and exit code 1 like any bad input (argparse's own: a usage block, 2)."""
    assert main(["no-such-command"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: cosim: argument COMMAND: invalid choice: 'no-such-command'")
    assert err.count("\n") == 1


@pytest.mark.ros  # the doctor asks the ROS graph for a controller manager and move_group
def test_doctor_reports_the_domain_a_session_would_lease(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The lowest free session domain that is not the caller's own; a domain another session holds is skipped."""
    from cosim_validation.live.session.discovery_scope import LOCK_DIR_ENV, DomainLease

    monkeypatch.setenv(LOCK_DIR_ENV, str(tmp_path))
    monkeypatch.setenv("ROS_DOMAIN_ID", "1")
    with DomainLease.acquire() as held:  # another session, in domain 2
        main(["doctor", "--json"])
    by_name = {c["name"]: c for c in json.loads(capsys.readouterr().out)["components"]}
    assert held.domain_id == 2
    assert by_name["session domain"]["version"] == "3"
    assert "not this shell's 1" in by_name["session domain"]["detail"]


@pytest.mark.ros  # the doctor asks the ROS graph for a controller manager and move_group
def test_doctor_json_lists_the_robots_with_their_joint_types(capsys: pytest.CaptureFixture[str]) -> None:
    main(["doctor", "--json"])
    robots = {r["name"]: r for r in json.loads(capsys.readouterr().out)["robots"]}
    assert set(robots) == {"xmate_er3_pro", "dvrk_psm", "raven2"}
    assert [j["type"] for j in robots["xmate_er3_pro"]["joints"]] == ["revolute"] * 7
    for name in ("dvrk_psm", "raven2"):
        joints = robots[name]["joints"]
        assert [j["unit"] for j in joints] == ["rad", "rad", "m", "rad", "rad", "rad"]
        assert joints[2]["name"] == "insertion"


def study(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, dict[str, object]]:
    """``cosim doctor --json --config config/needle_insertion.yaml EXTRA``: its case-study findings by name."""
    capsys.readouterr()
    assert main(["doctor", "--json", "--config", "config/needle_insertion.yaml", *extra]) == 0
    found = json.loads(capsys.readouterr().out)["case_study"]
    return {f["name"]: f for f in found}


@pytest.mark.ros  # the doctor asks the ROS graph for a controller manager and move_group
@pytest.mark.slow
def test_doctor_checks_a_case_study_as_a_campaign_would(capsys: pytest.CaptureFixture[str]) -> None:
    shipped = study(capsys, "--backends", "virtual,physical")
    assert (shipped["controller"]["version"], shipped["controller"]["detail"]) == ("straight", "built-in")
    assert shipped["robots"]["detail"] == "virtual: mujoco, physical: emulated"
    assert "heart (obstacle)" in str(shipped["anatomy"]["detail"])
    assert "9 properties" in str(shipped["properties"]["detail"])
    samples = "test.controllers.plugin_samples"
    closed = study(capsys, "--controller", f"{samples}:make_replay")["controller"]
    assert closed["detail"] == "closed-loop plugin"
    assert study(capsys, "--controller", f"{samples}:make_planning")["controller"]["detail"] == "planning plugin"


@pytest.mark.ros  # the doctor asks the ROS graph for a controller manager and move_group
def test_doctor_names_what_a_run_of_the_case_study_would_refuse(capsys: pytest.CaptureFixture[str]) -> None:
    samples = "test.controllers.plugin_samples"
    capsys.readouterr()
    code = main(["doctor", "--config", "config/needle_insertion.yaml", "--controller", f"{samples}:make_raising"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1, err
    assert err[0].startswith(f"error: --controller '{samples}:make_raising'"), err
    assert "raised ValueError: gain must be positive" in err[0]
    assert main(["doctor", "--config", "config/needle_insertion.yaml", "--backends", "bogus"]) == 1
    assert "bogus" in capsys.readouterr().err


@pytest.mark.ros
@pytest.mark.parametrize(
    ("before", "after", "says"),
    [
        ("target: left_lung ", "target: heart ", "testgen.target: model 'heart' has role 'obstacle', not 'target'"),
        ("near: heart, within_m", "near: spleen, within_m", "testgen.regions.near_heart.near:"),
    ],
    ids=["target_is_obstacle", "region_near_unknown"],
)
def test_doctor_reads_the_testgen_section(
    before: str, after: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Names cosim testgen (and a session without --suite) would refuse: doctor said "ok" to them."""
    shutil.copytree("config", tmp_path / "config")  # its relative paths (properties, machines) hold
    config = tmp_path / "config" / "needle_insertion.yaml"
    shipped = config.read_text()
    assert before in shipped
    config.write_text(shipped.replace(before, after, 1))
    capsys.readouterr()
    assert main(["doctor", "--config", str(config)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"error: {config}: "), err
    assert says in err[0], err
