"""``cosim run-case``: plan, execute on a backend, per-stage numbers; refusals and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cosim_validation.cli.main import main
from test.controllers.planning.setup_fixtures import CONFIG_PATH

TARGET = ["0.44", "0.02", "0.03"]
BEHIND_HEART = ["0.459", "0.0746", "-0.0076"]


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["run-case", "--config", str(CONFIG_PATH), *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_report_per_stage(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--target", *TARGET, "--backend", "mujoco", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["outcome"] == "executed"
    assert report["backend"] == "mujoco"
    assert report["controller"] == "straight"
    assert [s["stage"] for s in report["stages"]] == ["initialization", "approach", "injection", "extraction", "reset"]
    injection = report["stages"][2]
    assert injection["goal"] == "target"
    assert injection["goal_error_m"] < 1e-3  # the virtual robot tracks the plan to well under a millimetre
    assert all(0 <= s["tip_deviation_mean_m"] <= s["tip_deviation_max_m"] for s in report["stages"])
    assert all(s["forbidden_region"] == "heart" and s["forbidden_distance_m"] > 0 for s in report["stages"])
    assert sum(s["duration_s"] for s in report["stages"]) == pytest.approx(report["duration_s"])


def test_text_table_and_validator_stop(capsys: pytest.CaptureFixture[str]) -> None:
    """Behind the heart the straight needle would enter it: the validator stops the robot during the injection,
    as it does in a campaign and in a live session; the stages after the stop never ran."""
    code, out, _ = _run(capsys, "--target", *BEHIND_HEART, "--backend", "mujoco", "--validate")
    assert code == 0
    assert "stopped_by_validator" in out
    assert "the state validator refused setpoint" in out
    assert "(injection): needle" in out
    assert "targeting error" not in out  # the injection never reached the target
    for stage in ("initialization", "approach", "injection"):
        assert stage in out
    for stage in ("extraction", "reset"):
        assert stage not in out
    code, out, _ = _run(capsys, "--target", *BEHIND_HEART, "--backend", "mujoco", "--validate", "--json")
    report = json.loads(out)
    assert report["outcome"] == "stopped_by_validator"
    assert 0 < report["validator_stop_sample"] < report["samples"]
    assert [s["stage"] for s in report["stages"]] == ["initialization", "approach", "injection"]


def test_a_validator_stop_under_the_supervisor_is_the_validators(capsys: pytest.CaptureFixture[str]) -> None:
    """The same stop with the task supervisor on: the validator, not the supervisor or the controller, is named."""
    args = ["--target", *BEHIND_HEART, "--backend", "mujoco", "--validate", "--supervisor"]
    code, out, _ = _run(capsys, *args, "--json")
    assert code == 0
    report = json.loads(out)
    assert report["outcome"] == "stopped_by_validator"
    assert report["message"].startswith("the state validator refused setpoint")
    assert report["validator_stop_sample"] == report["samples"] > 0  # the refused setpoint was never streamed
    code, out, _ = _run(capsys, *args)
    assert "stopped by the validator: the state validator refused setpoint" in out
    assert "supervisor    0.1 s" in out  # the supervisor's transitions are printed
    assert "stopped by the supervisor" not in out


def test_guarded_refusal_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    """A lung target 4.9 mm from the heart: no needle keeps the 10 mm clearance, the guarded controller refuses."""
    code, out, _ = _run(capsys, "--target", "0.4775", "0.0699", "0.0909", "--controller", "guarded", "--json")
    assert code == 2
    report = json.loads(out)
    assert report["outcome"] == "refused"
    assert report["reason"] == "clearance"
    assert "needle path within the clearance of a forbidden region" in report["message"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--target", "nan", "0", "0"], "--target: expected a coordinate within +-10 m of the base, got nan"),
        (["--target", "0.45", "0", "0.7"], "outside every target model"),
        (["--target", "0.516", "0.024", "0.1"], "inside the forbidden region 'heart'"),
        (["--target", *TARGET, "--source", "0.45", "0", "0.15"], "must be outside the body"),
        (["--target", *TARGET, "--backend", "gazebo"], "unknown backend 'gazebo'"),
        (["--target", *TARGET, "--controller", "wild"], "unknown controller 'wild'"),
    ],
)
def test_bad_input_is_one_error_line(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, _, err = _run(capsys, *args)
    assert code == 1
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err


@pytest.mark.parametrize("supervised", [False, True], ids=["alone", "supervised"])
def test_a_closed_loop_fault_is_an_abort_not_a_validator_stop(
    supervised: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A closed-loop controller that raises at 2 s: the case is ``aborted`` with the controller's error, stopped at
    the period it raised, and neither the state validator nor the supervisor is blamed."""
    from test.assembly.test_plugin_campaigns import SAMPLES, write_config

    faulty = {"plugin": f"{SAMPLES}:make_faulty", "options": {"faults": ["raise"], "after_s": 2.0}}
    config = write_config(tmp_path, faulty)
    extra = ["--supervisor"] if supervised else []
    code = main(["run-case", "--config", str(config), "--target", *TARGET, "--backend", "mujoco", *extra])
    out, _ = capsys.readouterr()
    assert code == 3  # a script sees the abort (it exited 0, as an executed case)
    assert ": aborted, " in out.splitlines()[0]
    assert "controller error: step raised RuntimeError: the servo lost its marker" in out
    assert "validator" not in out
    assert "stopped by the supervisor" not in out
    assert "targeting error" not in out
    code = main(["run-case", "--config", str(config), "--target", *TARGET, "--backend", "mujoco", "--json", *extra])
    report = json.loads(capsys.readouterr().out)
    assert code == 3
    assert report["outcome"] == "aborted"
    assert report["validator_stop_sample"] is None
    if not supervised:
        assert report["stop_sample"] == 20  # periods 0..19 were sent; step 20 (t = 2.0 s) raised
