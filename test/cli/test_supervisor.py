"""``cosim supervisor check|replay|show``: exit codes, printed counterexamples, JSON, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cosim_validation.cli.main import main

BROKEN = Path(__file__).resolve().parents[1] / "supervisor" / "broken"


def test_check_passes_on_the_shipped_machine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            ["supervisor", "check", "--out", str(tmp_path), "--goal", "stopped_left_only_by_recovery_or_teleoperation"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "stopped_left_only_by_recovery_or_teleoperation  holds" in out
    assert "1 of 1 goals hold" in out
    assert (tmp_path / "model.pml").is_file()
    assert (tmp_path / "needle_insertion.smv").is_file()


def test_check_prints_a_counterexample_that_replay_reproduces(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    machine = str(BROKEN / "ignores_force_limit.yaml")
    assert main(["supervisor", "check", machine, "--out", str(tmp_path), "--goal", "motion_stops_on_exception"]) == 2
    out = capsys.readouterr().out
    assert "motion_stops_on_exception: VIOLATED" in out
    assert "e_ForceLimit" in out
    assert "same states and transitions; the runtime's run violates the goal: yes" in out
    trace = tmp_path / "motion_stops_on_exception.trace.yaml"
    assert f"replay: cosim supervisor replay {machine} {trace}" in out
    assert main(["supervisor", "replay", machine, str(trace)]) == 0
    replayed = capsys.readouterr().out
    assert "same states as the trace" in replayed
    # the same events on the shipped machine: the force limit stops the robot, so the states differ
    assert main(["supervisor", "replay", "config/supervisor/needle_insertion.yaml", str(trace)]) == 2
    assert "AutonomousMode.TaskStopped" in capsys.readouterr().out


def test_check_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    machine = str(BROKEN / "teleoperation_retracts.yaml")
    goal = "no_autonomous_motion_in_teleoperation"
    assert main(["supervisor", "check", machine, "--out", str(tmp_path), "--goal", goal, "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["all_hold"] is False
    assert data["priority"] == "outer_first"
    (result,) = data["goals"]
    assert result["goal"] == goal
    assert result["holds"] is False
    assert result["spin_reproduced_state_for_state"] is True
    assert result["runtime_violates_goal"] is True
    assert result["counterexample"]["steps"][0]["events"] == ["e_TeleoperationReq"]
    assert Path(result["trace_file"]).is_file()


def test_replay_of_a_hand_written_trace_and_a_wrong_expectation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trace = tmp_path / "t.yaml"
    task = "AutonomousMode.InsertionTask"
    steps = [
        {"events": ["e_TaskConfigured"], "state": f"{task}.MoveToSource"},
        {"events": ["e_NeedleLost", "e_SourceReached"], "state": f"{task}.Approach"},
    ]
    trace.write_text(yaml.safe_dump({"steps": steps}))
    assert main(["supervisor", "replay", "config/supervisor/needle_insertion.yaml", str(trace)]) == 2
    out = capsys.readouterr().out
    assert "AutonomousMode.TaskStopped" in out
    assert "<- differs" in out
    assert main(["supervisor", "replay", "config/supervisor/needle_insertion.yaml", str(trace), "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["mismatches"] == [1]
    assert data["steps"][1]["state"] == "AutonomousMode.TaskStopped"


def test_show(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["supervisor", "show"]) == 0
    out = capsys.readouterr().out
    assert "priority outer_first; initial leaf AutonomousMode.InsertionTask.Configure" in out
    assert "      Inject  [motion]  stage=injection  entry: run_injection" in out
    assert main(["supervisor", "show", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["states"]["Completed"]["final"] is True
    assert len(data["transitions"]) == 11


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["supervisor", "show", "missing.yaml"], "missing.yaml: file not found"),
        (["supervisor", "replay", "config/supervisor/needle_insertion.yaml", "nope.yaml"], "nope.yaml: file not found"),
        (["supervisor", "check", "--goal", "no_such_goal"], "unknown goal 'no_such_goal'"),
        (["supervisor", "check", "--goals", "config/supervisor/needle_insertion.yaml"], "unknown key"),
    ],
)
def test_bad_input_is_one_error_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if argv[1] == "check":
        argv = [*argv, "--out", str(tmp_path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ")
    assert message in err
    assert "Traceback" not in err
    assert main([*argv, "--json"]) == 1
    captured = capsys.readouterr()
    assert message in json.loads(captured.out)["error"]["message"]  # the error object of every subcommand
    assert captured.err == ""


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        ({"steps": [{"events": ["e_Teleport"]}]}, "steps[0]: machine 'needle_insertion' has no event 'e_Teleport'"),
        # each was replayed and reported DIFFERENT, as if the machine were wrong
        (
            {"steps": [{"events": [], "guards": {"bogus_guard": True}}]},
            "steps[0]: machine 'needle_insertion' has no input guard 'bogus_guard'; input guards: ",
        ),
        ({"initial": "Nowhere", "steps": []}, "initial: machine 'needle_insertion' has no leaf state 'Nowhere'"),
        # it named cycle_start's range (0..0) for 1, and took 0 as a cycle of no steps
        ({"cycle_start": 1, "steps": []}, "cycle_start: a cycle repeats steps, and the trace has none"),
        ({"cycle_start": 0, "steps": []}, "cycle_start: a cycle repeats steps, and the trace has none"),
        (
            {"steps": [{"events": [], "state": "AutonomousMode"}]},
            "steps[0]: machine 'needle_insertion' has no leaf state 'AutonomousMode'",
        ),
        (
            {"steps": [{"events": [], "transition": "t_warp"}]},
            "steps[0]: machine 'needle_insertion' has no transition 't_warp'",
        ),
    ],
)
def test_replay_rejects_a_name_the_machine_does_not_have(
    trace: dict[str, object], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(yaml.safe_dump(trace))
    assert main(["supervisor", "replay", "config/supervisor/needle_insertion.yaml", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}: {message}")
    assert err.count("\n") == 1


@pytest.mark.parametrize("existed", [False, True])
def test_a_check_interrupted_half_way_leaves_no_folder_it_made(
    existed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C while SPIN compiles: the models and the verifier's sources written so far went with a folder the check
    made (it was left holding them); a folder that was there before stays (every check rewrites its files)."""
    import cosim_validation.monitor.statechart.checker as checker

    def interrupted(machine: object, goals: object, out_dir: Path, only: object = None) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "model.pml").write_text("half")
        (out_dir / "pan.c").write_text("half")
        raise KeyboardInterrupt

    monkeypatch.setattr(checker, "check_goals", interrupted)
    out = tmp_path / "mc"
    if existed:
        out.mkdir()
        (out / "kept.txt").write_text("from before")
    assert main(["supervisor", "check", "--out", str(out)]) == 130
    assert "error: interrupted" in capsys.readouterr().err
    assert out.exists() == existed
    if existed:
        assert (out / "kept.txt").read_text() == "from before"
