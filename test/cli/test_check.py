"""``cosim check``: verdict tables and JSON for stored records, exit codes, bad input."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from cosim_validation.cli.main import main
from cosim_validation.common.record import Stage, TrajectoryRecord
from test.monitor.properties.traces import TARGET, edited, insertion_case


@pytest.fixture(scope="module")
def case_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("check")
    record, expected = insertion_case()
    record = dataclasses.replace(record, meta={"target_m": TARGET.tolist()})
    tip = record.tip_pos_m.copy()
    tip[record.stage_indices(Stage.INJECTION)[6]] += [0.0, 0.0, 0.012]  # backs out during injection
    bad = edited(record, tip_pos_m=tip)
    files = {"virtual": folder / "virtual.npz", "expected": folder / "expected.npz", "bad": folder / "bad.npz"}
    record.save(files["virtual"])
    expected.save(files["expected"])
    bad.save(files["bad"])
    dataclasses.replace(expected, test_id="another-case").save(folder / "other_plan.npz")
    files["other_plan"] = folder / "other_plan.npz"
    (folder / "junk.npz").write_bytes(b"not an npz")
    files["junk"] = folder / "junk.npz"
    for name, target in (("nan_target", [float("nan")] * 3), ("far_target", [1e300, 0.0, 0.0])):
        files[name] = folder / f"{name}.npz"
        dataclasses.replace(record, meta={"target_m": target}).save(files[name])
    files["no_time"] = folder / "no_time.npz"
    dataclasses.replace(record, t_s=np.full_like(record.t_s, 2.0)).save(files["no_time"])
    files["late_plan"] = folder / "late_plan.npz"
    dataclasses.replace(expected, t_s=expected.t_s + 1e9).save(files["late_plan"])
    for name, source in (("six", record), ("six_plan", expected)):  # a 6-joint arm's records
        files[name] = folder / f"{name}.npz"
        cut = {key: getattr(source, key)[:, :6] for key in ("q_setpoint", "q_measured", "joint_pos_m", "joint_axis")}
        dataclasses.replace(source, joint_names=source.joint_names[:6], **cut).save(files[name])
    return files


def test_nominal_case_passes(case_files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(case_files["expected"]), str(case_files["virtual"])])
    out = capsys.readouterr().out
    assert code == 0
    assert "virtual robot" in out
    assert "expected robot" in out
    assert "tip_follows_plan" in out
    assert "machine:stage_order" in out
    assert "violated" not in out
    assert "unknown" not in out  # the robot's self-collision check comes from the configuration


def test_violations_exit_2_and_are_named(case_files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", str(case_files["bad"]), "--expected", str(case_files["expected"]), "--json"])
    (report,) = json.loads(capsys.readouterr().out)
    assert code == 2
    statuses = {v["property"]: v["status"] for v in report["verdicts"]}
    assert statuses["machine:no_retraction_during_injection"] == "violated"
    assert statuses["tip_follows_plan"] == "violated"
    assert statuses["joints_clear_of_obstacles"] == "holds"
    tip = next(v for v in report["verdicts"] if v["property"] == "tip_follows_plan")
    assert tip["first_violation_stage"] == "injection"
    assert tip["unit"] == "m"
    assert {k["name"] for k in report["kpis"]} >= {"targeting_error", "deviation_frechet", "duration"}


def test_without_plan_or_scene_the_dependent_properties_are_unknown(
    case_files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["check", str(case_files["virtual"]), "--no-scene", "--no-machines", "--no-self-collision", "--json"]
    code = main(argv)
    (report,) = json.loads(capsys.readouterr().out)
    assert code == 0
    reasons = {v["property"]: v["reason"] for v in report["verdicts"] if v["status"] == "unknown"}
    assert "needs the expected trajectory" in reasons["tip_follows_plan"]
    assert "needs obstacles" in reasons["joints_clear_of_obstacles"]
    assert "needs a self-collision model" in reasons["no_self_collision"]
    assert not any(v["property"].startswith("machine:") for v in report["verdicts"])


def test_target_option_overrides_the_record(case_files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    far = (TARGET + np.array([0.01, 0.0, 0.0])).tolist()
    code = main(["check", str(case_files["virtual"]), "--no-scene", "--json", "--target", *map(str, far)])
    (report,) = json.loads(capsys.readouterr().out)
    assert code == 2
    targeting = next(v for v in report["verdicts"] if v["property"] == "targeting_error_bound")
    assert targeting["status"] == "violated"


def test_a_plan_of_another_test_id_is_said_in_a_warning(
    case_files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Not refused: a record imported from a recording carries its file's name as test id."""
    assert main(["check", str(case_files["virtual"]), "--expected", str(case_files["other_plan"])]) in (0, 2)
    err = capsys.readouterr().err
    assert "warning: --expected" in err
    assert "the plan of case 'another-case', but" in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.npz"], "missing.npz: cannot read trajectory record"),
        (["JUNK"], "not a trajectory record"),
        (["VIRTUAL", "--properties", "nope.yaml"], "nope.yaml: file not found"),
        (["VIRTUAL", "--config", "nope.yaml"], "nope.yaml: file not found"),
        # a robot's own record as its plan: judged against itself, "tip_follows_plan holds"
        (["VIRTUAL", "--expected", "VIRTUAL"], "a record of the virtual robot; expected the expected (planned)"),
        (["VIRTUAL", "--target", "1e308", "0", "0"], "--target: expected a coordinate within"),  # numpy overflowed
        # a target stored with the record: the file was not named; 1e300 overflowed the distances to it
        (["NAN_TARGET"], "nan_target.npz: trajectory record 'synthetic': meta 'target_m' is not 3 numbers"),
        (["FAR_TARGET"], "far_target.npz: trajectory record 'synthetic': meta 'target_m' is not 3 numbers within"),
        (["NO_TIME"], "no_time.npz: time does not advance: all 65 samples at t = 2 s"),  # checked as a motion
        # another arm's record: an IndexError traceback, or judged with this arm's kinematics without a word
        (
            ["SIX"],
            "six.npz: the record's joints (joint1, joint2, joint3, joint4, joint5, joint6) are not those of the ",
        ),
        (["VIRTUAL", "--expected", "SIX_PLAN"], "--expected "),
        (["VIRTUAL", "--config", "PSM"], "virtual.npz: the record's joints (joint1, "),
        # a plan of another clock: compared as if at the same times, "tip_follows_plan violated -186 mm"
        (["VIRTUAL", "--expected", "LATE_PLAN"], "late_plan.npz: its times (t = 1000000000.000 .. 1000000006.400 s)"),
    ],
)
def test_bad_input_is_one_error_line(
    args: list[str], message: str, case_files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    named = {"JUNK": "junk", "VIRTUAL": "virtual", "OTHER_PLAN": "other_plan"}
    named |= {"NAN_TARGET": "nan_target", "FAR_TARGET": "far_target", "NO_TIME": "no_time"}
    named |= {"SIX": "six", "SIX_PLAN": "six_plan", "LATE_PLAN": "late_plan"}
    psm = str(Path(__file__).parents[2] / "config" / "dvrk_psm_insertion.yaml")
    argv = [str(case_files[named[a]]) if a in named else psm if a == "PSM" else a for a in args]
    assert main(["check", *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err
    assert err.count("\n") == 1


def test_self_collision_from_the_configured_robot(case_files: dict[str, Path], tmp_path: Path) -> None:
    record = TrajectoryRecord.load(case_files["virtual"])
    q = record.q_measured.copy()
    q[20:23] = [0.0, 0.0, 0.0, 2.09, 0.0, 2.09, 0.0]  # elbow and wrist folded: link7 and the needle hit link2
    folded = tmp_path / "folded.npz"
    edited(record, q_measured=q, q_setpoint=q).save(folded)
    out = tmp_path / "out.json"
    with out.open("w") as stream, contextlib.redirect_stdout(stream):
        code = main(["check", str(folded), "--no-scene", "--no-machines", "--json"])
    (report,) = json.loads(out.read_text())
    verdict = next(v for v in report["verdicts"] if v["property"] == "no_self_collision")
    assert code == 2
    assert verdict["status"] == "violated"
    assert verdict["first_violation_time_s"] == pytest.approx(record.t_s[20])
