"""Loading a user's controller: by import path or entry point, beside the built-in names; every bad plugin is one
error naming the file and the key."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from cosim_validation.cli.main import main
from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.controllers import (
    ENTRY_POINT_GROUP,
    CaseStart,
    ClosedLoopPlugin,
    ControllersConfig,
    InsertionSetup,
    PlanningPlugin,
    StraightController,
)
from cosim_validation.controllers.planning import PlanningError
from test.controllers.planning.setup_fixtures import CONFIG_PATH

SAMPLES = "test.controllers.plugin_samples"
SHIPPED = yaml.safe_load(CONFIG_PATH.read_text())


def section(default: Any) -> ConfigNode:
    """The shipped ``controllers`` section with ``default`` replaced, as read from ``case.yaml``."""
    return ConfigNode({**SHIPPED["controllers"], "default": default}, "case.yaml", "controllers")


def controllers(default: Any) -> ControllersConfig:
    return ControllersConfig.from_config(section(default))


def with_default(setup: InsertionSetup, default: Any) -> InsertionSetup:
    """The built case study with another ``controllers.default``."""
    from dataclasses import replace

    return replace(setup, controllers=controllers(default))


def test_builtin_names_keep_working(insertion_setup: InsertionSetup) -> None:
    assert controllers("straight").plugin is None
    assert isinstance(with_default(insertion_setup, "straight").controller(), StraightController)


def test_import_path_and_mapping_with_options(insertion_setup: InsertionSetup) -> None:
    path = f"{SAMPLES}:make_replay"
    assert controllers(path).plugin is not None
    assert isinstance(with_default(insertion_setup, path).controller(), ClosedLoopPlugin)
    config = controllers({"plugin": path, "options": {"declare": False}, "step_budget_s": 0.02, "time_limit_s": 9})
    spec = config.plugin
    assert spec is not None
    assert config.default == path
    assert (spec.options, spec.step_budget_s, spec.time_limit_s) == ({"declare": False}, 0.02, 9.0)
    controller = with_default(insertion_setup, {"plugin": path, "options": {"declare": False}}).controller()
    assert isinstance(controller, ClosedLoopPlugin)
    assert controller.inner.declare is False
    planning = with_default(insertion_setup, f"{SAMPLES}:make_planning").controller()
    assert isinstance(planning, PlanningPlugin)
    assert planning.name == f"{SAMPLES}:make_planning"


def test_entry_point_of_an_installed_package(
    insertion_setup: InsertionSetup, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A package's dist-info on the path registers ``my_replay`` in the group (what ``pip install`` writes)."""
    info = tmp_path / "my_controllers-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-controllers\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\nmy_replay = {SAMPLES}:make_replay\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = controllers("my_replay")
    assert config.plugin is not None
    assert config.plugin.target == f"{SAMPLES}:make_replay"
    assert isinstance(with_default(insertion_setup, "my_replay").controller(), ClosedLoopPlugin)
    assert controllers({"entry_point": "my_replay"}).plugin is not None


@pytest.mark.parametrize(
    ("default", "key", "expected"),
    [
        ("no_such_package.servo:make", "controllers.default", "cannot import module 'no_such_package.servo'"),
        (f"{SAMPLES}:make_missing", "controllers.default", "has no attribute 'make_missing'"),
        (f"{SAMPLES}:NOT_CALLABLE", "controllers.default", "is a int, not a callable make_controller"),
        ("careful", "controllers.default", "unknown controller 'careful'; expected one of: straight, guarded"),
        ({"plugin": "no_colon"}, "controllers.default.plugin", "expected an import path 'package.module:attribute'"),
        ({"entry_point": "not_installed"}, "controllers.default.entry_point", "no entry point 'not_installed'"),
        ({"plugin": f"{SAMPLES}:make_replay", "entry_point": "x"}, "controllers.default", "exactly one of"),
        ({"options": {}}, "controllers.default", "exactly one of"),
        ({"plugin": f"{SAMPLES}:make_replay", "gain": 1}, "controllers.default.gain", "unknown key"),
        ({"plugin": f"{SAMPLES}:make_replay", "options": [1]}, "controllers.default.options", "mapping of options"),
        ({"plugin": f"{SAMPLES}:make_replay", "time_limit_s": 0}, "controllers.default.time_limit_s", "> 0"),
    ],
)
def test_bad_names_fail_at_config_load(default: Any, key: str, expected: str) -> None:
    with pytest.raises(ConfigError) as caught:
        controllers(default)
    message = str(caught.value)
    assert "case.yaml" in message, message
    assert key in message, message
    assert expected in message, message


@pytest.mark.parametrize(
    ("factory", "expected"),
    [
        ("make_raising", "make_raising(options, context) raised ValueError: gain must be positive"),
        ("make_nothing", "returned a object, which has neither plan_case(source, target, seed)"),
        ("make_step_only", "returned a StepOnly, which has neither plan_case"),
        ("make_start_property_raising", "NotReady whose attribute 'start' raised ValueError: property start not ready"),
        ("make_getattr_raising", "Strict whose attribute 'start' raised RuntimeError: no start here"),
    ],
)
def test_bad_factories_fail_when_the_case_study_is_built(
    insertion_setup: InsertionSetup, factory: str, expected: str
) -> None:
    setup = with_default(insertion_setup, {"plugin": f"{SAMPLES}:{factory}"})
    with pytest.raises(ConfigError) as caught:
        setup.controller()
    message = str(caught.value)
    assert "case.yaml" in message, message
    assert "controllers.default.plugin" in message, message
    assert expected in message, message


def test_a_plugin_named_on_the_command_line_is_checked(insertion_setup: InsertionSetup) -> None:
    with pytest.raises(InputError, match=r"--controller 'test\.controllers\.plugin_samples:make_raising': .* raised"):
        insertion_setup.controller(f"{SAMPLES}:make_raising")
    with pytest.raises(InputError, match="unknown controller 'nope'; expected one of: straight"):
        insertion_setup.controller("nope")


@pytest.mark.parametrize(
    ("mode", "reason", "expected"),
    [
        ("raise", "controller_error", "plan_case raised KeyError: 'lookup table'"),
        ("not_a_plan", "bad_plan", "plan_case returned a list, not a Plan"),
        ("nan", "bad_plan", "the plan holds NaN"),
        ("hour_long", "bad_plan", "s; a case may last at most 3600 s"),  # the run streamed for ever
        ("before_start", "bad_plan", "the plan starts at t = -100 s; its times count from the case's start"),
        ("nanosecond_apart", "bad_plan", "s apart; setpoints come at most 1000 per second (at least 0.001 s apart)"),
        ("ten_kilohertz", "bad_plan", "s apart; setpoints come at most 1000 per second"),
        ("stage_200", "bad_plan", "the plan's stage holds 200, not a stage (0 none, 1 initialization"),  # traceback
        ("line_nan", "bad_plan", "the plan's source or insertion line is not three finite coordinates"),  # exit 0
        ("source_nan", "bad_plan", "the plan's source or insertion line is not three finite coordinates"),
        # the user's words on one line, control characters escaped, cut after 300 characters
        ("raise_lines", "controller_error", "ValueError: bad\\nTraceback (most recent call last):\\nerror: second"),
        ("refuse_lines", "no_skin_entry\\nx", "\\x1b[31mred\\nerror: second line"),
        ("refuse_object", "controller_error", "plan_case raised PlanningError with a reason of type object, not text"),
    ],
)
def test_a_bad_planning_plugin_refuses_its_case(
    insertion_setup: InsertionSetup, behind_heart: np.ndarray, mode: str, reason: str, expected: str
) -> None:
    setup = with_default(insertion_setup, {"plugin": f"{SAMPLES}:make_bad_plan", "options": {"mode": mode}})
    with pytest.raises(PlanningError) as caught:
        setup.controller().plan_case(setup.planning.default_source_m, behind_heart[0])  # type: ignore[union-attr]
    assert caught.value.reason == reason
    assert expected in str(caught.value)
    assert str(caught.value).isprintable()
    assert len(str(caught.value)) < 500


def test_a_plan_of_numbers_in_object_arrays_is_taken_as_floats(
    insertion_setup: InsertionSetup, behind_heart: np.ndarray
) -> None:
    """A plan whose joints are Python numbers in an object array (a traceback in the finiteness check) is taken,
    as float64: the robots and the monitor get the arrays they expect."""
    setup = with_default(insertion_setup, {"plugin": f"{SAMPLES}:make_bad_plan", "options": {"mode": "objects"}})
    plan = setup.controller().plan_case(setup.planning.default_source_m, behind_heart[0])  # type: ignore[union-attr]
    assert plan.q.dtype == np.float64
    assert plan.stage.dtype == np.uint8
    assert np.isfinite(plan.q).all()


def _write_config(folder: Path, default: Any) -> Path:
    tree = yaml.safe_load(CONFIG_PATH.read_text())
    tree["controllers"]["default"] = default
    (folder / "properties.yaml").write_text((CONFIG_PATH.parent / "properties.yaml").read_text())
    path = folder / "case.yaml"
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


def test_cli_says_one_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``cosim run-case`` with a factory that raises: exit 1, one ``error:`` line naming the file and the key."""
    config = _write_config(tmp_path, {"plugin": f"{SAMPLES}:make_raising", "options": {"gain": -1}})
    code = main(["run-case", "--config", str(config), "--target", "0.44", "0.02", "0.03", "--backend", "mujoco"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1, err
    assert err[0].startswith("error:")
    assert "case.yaml" in err[0]
    assert "controllers.default.plugin" in err[0]
    assert "raised ValueError: gain must be positive" in err[0]


@pytest.mark.parametrize("failing", [False, True], ids=["result", "error"])
def test_a_plugin_that_prints_leaves_the_json_document_alone(
    failing: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plugin that prints to stdout (when made, on every plan) under ``--json``: stdout is still one JSON document,
    the result or the error object; what the plugin printed goes to stderr (it came first on stdout: no JSON)."""
    import json

    config = _write_config(tmp_path, f"{SAMPLES}:make_chatty")
    target = ["--target", "0.44", "0.02", "0.03"] if not failing else ["--target", "0.44", "0.02", "nan"]
    code = main(["run-case", "--config", str(config), *target, "--backend", "mujoco", "--json"])
    out, err = capsys.readouterr()
    document = json.loads(out)
    assert ("error" in document) is failing
    assert code == (1 if failing else 0)
    if not failing:  # (a NaN target is refused before the plugin is made)
        assert document["outcome"] == "executed"
        assert "chatty planner made" in err
        assert "planning a case" in err


@pytest.mark.parametrize("key", ["time_limit_s", "call_limit_s", "step_budget_s"])
def test_a_plugin_limit_past_an_hour_is_refused(key: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """1e300 s: a case that never ended (time_limit_s), or Python's waits failing with an OverflowError that blamed
    the controller (call_limit_s, step_budget_s)."""
    config = _write_config(tmp_path, {"plugin": f"{SAMPLES}:make_replay", key: 1.0e300})
    code = main(["run-case", "--config", str(config), "--target", "0.44", "0.02", "0.03", "--backend", "mujoco"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1
    assert len(err) == 1, err
    assert f"controllers.default.{key}: expected a number <= 3600" in err[0]


def test_doctor_lists_the_controllers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    info = tmp_path / "my_controllers-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-controllers\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nmy_replay = {SAMPLES}:make_replay\nbroken = {SAMPLES}:make_missing\n"
        "interrupting = interrupting_module:make\n"
    )
    (tmp_path / "interrupting_module.py").write_text("raise KeyboardInterrupt\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["doctor", "--json"]) != 130  # the module's interrupt read as Ctrl-C: "error: interrupted"
    import json

    report = json.loads(capsys.readouterr().out)
    found = {c["name"]: c for c in report["controllers"]}
    assert found["straight"]["kind"] == "built-in"
    assert found["straight"]["loadable"]
    assert found["my_replay"]["kind"] == "entry point"
    assert found["my_replay"]["loadable"]
    assert found["my_replay"]["target"] == f"{SAMPLES}:make_replay"
    assert not found["broken"]["loadable"]
    assert "has no attribute" in found["broken"]["detail"]
    assert not found["interrupting"]["loadable"]
    assert "raised KeyboardInterrupt" in found["interrupting"]["detail"]


def test_a_declared_reference_is_a_copy_the_controller_cannot_change(
    insertion_setup: InsertionSetup, behind_heart: np.ndarray
) -> None:
    """A controller that changes its own plan's arrays in place after declaring it (``q = plan.q[k]; q += 0.02``)
    changed the expected trajectory the monitor judged it against: every command "followed the plan"."""
    setup = with_default(insertion_setup, {"plugin": f"{SAMPLES}:make_replay"})
    plugin = setup.controller()
    source = setup.planning.default_source_m
    case = CaseStart("c", source, behind_heart[0], 0, np.zeros(7), 0.1, 60.0)
    reference = plugin.reference(case)  # type: ignore[union-attr]
    assert reference is not None
    declared = reference.q.copy(), reference.line.target_m.copy()
    own = plugin.inner.plan  # type: ignore[union-attr]
    own.q[5] += 0.02
    own.line.target_m[:] += 0.02
    assert np.array_equal(reference.q, declared[0])
    assert np.array_equal(reference.line.target_m, declared[1])


def test_a_factory_that_does_not_return_is_bounded_by_the_call_limit(
    insertion_setup: InsertionSetup, behind_heart: np.ndarray
) -> None:
    """A factory that waits for a server that never answers blocked run-case and doctor for good."""
    plugin = {"plugin": f"{SAMPLES}:make_sleeping_factory", "options": {"sleep_s": 30.0}, "call_limit_s": 0.5}
    setup = with_default(insertion_setup, plugin)
    with pytest.raises(ConfigError, match=r"make_sleeping_factory\(options, context\) had not returned after 0\.5 s"):
        setup.controller()
    quick = with_default(insertion_setup, {**plugin, "options": {"sleep_s": 0.0}, "call_limit_s": 60.0})
    assert quick.controller().plan_case(quick.planning.default_source_m, behind_heart[0]).n_samples > 0  # type: ignore[union-attr]


@pytest.mark.parametrize("code", ["0", "1"])
def test_a_module_that_exits_while_imported_is_one_error(
    code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``sys.exit(0)`` at import ended run-case with exit 0 and no word (``sys.exit(1)``: exit 1, no word)."""
    (tmp_path / f"leaving_{code}.py").write_text(f"import sys\nsys.exit({code})\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    config = _write_config(tmp_path, f"leaving_{code}:make")
    assert main(["run-case", "--config", str(config), "--target", "0.44", "0.02", "0.03", "--backend", "mujoco"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"controllers.default: importing module 'leaving_{code}' called sys.exit({code})" in err[0]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("raise KeyboardInterrupt\n", "raised KeyboardInterrupt"),
        ("import time\ntime.sleep(30)\n", "had not returned after 1 s (call_limit_s)"),
    ],
    ids=["interrupt", "waits"],
)
def test_a_module_that_interrupts_or_waits_while_imported_is_one_error(
    body: str, said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Reading the case study imported the plugin's module on the main thread, unbounded: a ``KeyboardInterrupt``
    raised there read as the user's Ctrl-C (``error: interrupted``, exit 130), and a module waiting at import
    blocked run-case for good, whatever its ``call_limit_s``."""
    (tmp_path / "odd_module.py").write_text(body)
    monkeypatch.syspath_prepend(str(tmp_path))
    config = _write_config(tmp_path, {"plugin": "odd_module:make", "call_limit_s": 1.0})
    assert main(["run-case", "--config", str(config), "--target", "0.44", "0.02", "0.03", "--backend", "mujoco"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "controllers.default" in err[0], err[0]
    assert said in err[0], err[0]


@pytest.mark.parametrize("what", ["limits", "home"])
def test_a_factory_cannot_change_the_robot_of_its_context(what: str, insertion_setup: InsertionSetup) -> None:
    """Widened limits let the plugin's own setpoints past the guard; a zeroed home pose moved every later case."""
    lower, home = insertion_setup.robot.kinematics.q_lower.copy(), insertion_setup.robot.home_q.copy()
    setup = with_default(insertion_setup, {"plugin": f"{SAMPLES}:make_widening_factory", "options": {"what": what}})
    with pytest.raises(ConfigError, match=r"raised ValueError: .*read-only"):
        setup.controller()
    assert np.array_equal(insertion_setup.robot.kinematics.q_lower, lower)
    assert np.array_equal(insertion_setup.robot.home_q, home)


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"plugin": f"{SAMPLES}:make_planning", "time_limit_s": 0.001}, "time_limit_s is for a closed-loop controller"),
        ({"plugin": f"{SAMPLES}:make_planning", "step_budget_s": 0.5}, "step_budget_s is for a closed-loop controller"),
        (
            {"plugin": f"{SAMPLES}:make_replay", "time_limit_s": 0.05},
            "time_limit_s: 0.05 s is shorter than one control period (0.1 s)",
        ),
    ],
)
def test_a_limit_that_sets_nothing_is_refused(
    settings: dict[str, Any], expected: str, insertion_setup: InsertionSetup
) -> None:
    """Taken without a word: a planning controller has no steps and no time limit; a closed-loop case shorter than
    one control period aborted every case before its first step."""
    with pytest.raises(ConfigError, match=re.escape(expected)):
        with_default(insertion_setup, settings).controller()


def test_an_entry_point_name_that_does_not_reach_it_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], insertion_setup: InsertionSetup
) -> None:
    """Two packages registering one name (one was run without a word), or a package registering a built-in's name
    (the built-in always won): doctor listed each "ok"; naming the shared name is refused."""
    import json

    for package, lines in (
        ("one", f"dup = {SAMPLES}:make_replay\nstraight = {SAMPLES}:make_planning\n"),
        ("two", f"dup = {SAMPLES}:make_raising\n"),
    ):
        info = tmp_path / f"pkg_{package}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: pkg-{package}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\n{lines}")
    monkeypatch.syspath_prepend(str(tmp_path))
    main(["doctor", "--json"])
    entries = [c for c in json.loads(capsys.readouterr().out)["controllers"] if c["kind"] == "entry point"]
    said = {(c["name"], c["target"]): (c["loadable"], c["detail"]) for c in entries}
    assert said[("dup", f"{SAMPLES}:make_replay")] == (
        False,
        f"not reachable by its name (also {SAMPLES}:make_raising); name it by its import path {SAMPLES}:make_replay",
    )
    assert not said[("dup", f"{SAMPLES}:make_raising")][0]
    assert said[("straight", f"{SAMPLES}:make_planning")] == (
        False,
        "not reachable by its name (the built-in controller of that name); name it by its import path "
        f"{SAMPLES}:make_planning",
    )
    with pytest.raises(InputError, match=r"entry point 'dup' is registered more than once: .*name one by its import"):
        insertion_setup.controller("dup")
    with pytest.raises(InputError) as unknown:
        insertion_setup.controller("nope")
    assert str(unknown.value).count("straight") == 1


def test_run_case_measures_the_targeting_error_to_the_cases_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plugin that plans to a point 20 mm off and declares it as its target was measured against its own point
    (2 mm) by run-case, where a campaign stores 20 mm."""
    import json

    config = _write_config(tmp_path, f"{SAMPLES}:make_elsewhere")
    target = [0.44, 0.02, 0.03]
    argv = ["run-case", "--config", str(config), "--target", *map(str, target), "--backend", "mujoco", "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["target_m"] == target
    assert np.allclose(report["planned_target_m"], [0.46, 0.02, 0.03])
    injection = next(s for s in report["stages"] if s["stage"] == "injection")
    assert 0.015 < injection["goal_error_m"] < 0.025, injection["goal_error_m"]


def test_run_case_says_how_many_samples_ran_against_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A closed-loop case done at its first step said "executed, 230 samples" (the reference's length)."""
    config = _write_config(tmp_path, f"{SAMPLES}:make_quitter")
    argv = ["run-case", "--config", str(config), "--target", "0.44", "0.02", "0.03", "--backend", "mujoco"]
    assert main(argv) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert "executed, 1 sample (the plan has " in first, first


def test_a_process_that_abandoned_a_call_ends_without_finalizing_under_it(tmp_path: Path) -> None:
    """A call left running on its thread (here a plan_case that never returns) is not torn down by the interpreter's
    finalization: a ROS 2 client's call in C++ aborted the process there (SIGABRT, exit 134, some runs in two)
    after its result was printed. The result is still printed whole, and the exit status is the command's."""
    import subprocess
    import sys

    plugin = {"plugin": f"{SAMPLES}:make_hanging_planner", "options": {"say_at_exit": True}, "call_limit_s": 1.0}
    config = _write_config(tmp_path, plugin)
    argv = ["run-case", "--config", str(config), "--target", "0.44", "0.02", "0.03", "--backend", "mujoco"]
    done = subprocess.run(
        [sys.executable, "-m", "cosim_validation.cli.main", *argv], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2, done.stderr[-2000:]  # refused: the controller's call did not return
    assert "plan_case had not returned after 1 s" in done.stdout + done.stderr
    assert "finalized" not in done.stderr


def test_a_plugin_that_changes_the_working_directory_leaves_ours_as_it_was(
    insertion_setup: InsertionSetup, behind_heart: np.ndarray, tmp_path: Path
) -> None:
    """Its plan is taken; the command then reads its relative paths (the suite, the run) where it was started."""
    import os

    ours = os.getcwd()
    options = {"mode": "chdir", "to": str(tmp_path)}
    setup = with_default(insertion_setup, {"plugin": f"{SAMPLES}:make_bad_plan", "options": options})
    plan = setup.controller().plan_case(setup.planning.default_source_m, behind_heart[0])  # type: ignore[union-attr]
    assert len(plan.t_s) > 10
    assert os.getcwd() == ours


def test_a_plugin_that_closes_stdout_leaves_the_commands_output_whole(tmp_path: Path) -> None:
    """``cosim run-case`` with a plugin that closes ``sys.stdout`` and points ``sys.stderr`` at /dev/null: the case's
    result is printed whole (it was a traceback: our descriptor 1 had been closed with it)."""
    import json
    import subprocess
    import sys

    config = _write_config(tmp_path, {"plugin": f"{SAMPLES}:make_bad_plan", "options": {"mode": "close_stdout"}})
    argv = ["run-case", "--config", str(config), "--target", "0.44", "0.02", "0.03", "--backend", "mujoco"]
    cosim = [sys.executable, "-m", "cosim_validation.cli.main"]
    done = subprocess.run([*cosim, *argv], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]  # 1, and nothing said: the error had gone to /dev/null
    assert "make_bad_plan controller on mujoco: executed, 230 samples" in done.stdout, done.stdout[-2000:]
    with_json = subprocess.run([*cosim, *argv, "--json"], capture_output=True, text=True, timeout=300)
    assert json.loads(with_json.stdout)["outcome"] == "executed"


def test_a_plugin_that_leaves_a_thread_running_does_not_hold_the_command_open(tmp_path: Path) -> None:
    """``cosim run-case`` whose plugin started a thread that never ends and is not a daemon printed its result and
    then never exited (the interpreter waits for such threads)."""
    import subprocess
    import sys

    config = _write_config(tmp_path, {"plugin": f"{SAMPLES}:make_bad_plan", "options": {"mode": "thread"}})
    argv = ["run-case", "--config", str(config), "--target", "0.44", "0.02", "0.03", "--backend", "mujoco"]
    cosim = [sys.executable, "-m", "cosim_validation.cli.main"]
    done = subprocess.run([*cosim, *argv], capture_output=True, text=True, timeout=300)  # hung: TimeoutExpired
    assert done.returncode == 0, done.stderr[-2000:]
    assert "make_bad_plan controller on mujoco: executed, 230 samples" in done.stdout, done.stdout[-2000:]


def test_a_plugin_that_sets_an_alarm_does_not_kill_the_command(tmp_path: Path) -> None:
    """A ``plan_case`` calling ``signal.alarm(1)`` (off the main thread it cannot set a handler) killed run-case with
    SIGALRM: exit 142, nothing printed."""
    import subprocess
    import sys

    config = _write_config(tmp_path, {"plugin": f"{SAMPLES}:make_bad_plan", "options": {"mode": "alarm"}})
    argv = ["run-case", "--config", str(config), "--target", "0.44", "0.02", "0.03", "--backend", "mujoco"]
    done = subprocess.run(
        [sys.executable, "-m", "cosim_validation.cli.main", *argv], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "make_bad_plan controller on mujoco: executed, 230 samples" in done.stdout, done.stdout[-2000:]
