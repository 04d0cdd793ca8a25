"""Bad command lines of every subcommand: unknown options, malformed and out-of-range values, wrong choices,
missing arguments, outputs that cannot be written."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from test.robustness.harness import Case, Workspace, run_case

FlagCase = Callable[[Path, Workspace], Case]


def _file(folder: Path) -> Path:
    path = folder / "a_file"
    path.write_text("x")
    return path


def _scenario(folder: Path, action: str) -> Path:
    """A scenario file with one action at 1 s."""
    path = folder / "scenario.yaml"
    path.write_text(f"scenario:\n  actions:\n    - {{when: {{t_s: 1.0}}, {action}}}\n")
    return path


def _supervisor(folder: Path, loop: str) -> Path:
    """The shipped supervisor configuration with one ``loop`` setting, next to its machine."""
    from cosim_validation.common.config import package_root

    shipped = package_root() / "config" / "supervisor"
    text = (shipped / "supervisor.yaml").read_text().replace("stopped_timeout_s: 1.0", loop)
    text = text.replace("machine: needle_insertion.yaml", f"machine: {shipped / 'needle_insertion.yaml'}")
    text = text.replace("needle_force: needle_force.yaml", f"needle_force: {shipped / 'needle_force.yaml'}")
    path = folder / "supervisor.yaml"
    path.write_text(text)
    return path


def _testgen(*extra: str) -> FlagCase:
    def build(folder: Path, ws: Workspace) -> Case:
        out = folder / "suite.parquet"
        return Case(["testgen", "--config", str(ws.config), *extra, "-o", str(out)], (), (out,))

    return build


def _with(build: FlagCase, *names: str) -> FlagCase:
    def named(folder: Path, ws: Workspace) -> Case:
        case = build(folder, ws)
        return Case(case.argv, names, case.absent)

    return named


def _campaign(*extra: str) -> FlagCase:
    def build(folder: Path, ws: Workspace) -> Case:
        out = folder / "run"
        argv = ["campaign", "--config", str(ws.config), "--suite", str(ws.suite), "--out", str(out), *extra]
        return Case(argv, (), (out,))

    return build


def _run_case(*extra: str) -> FlagCase:
    return lambda folder, ws: Case(["run-case", "--config", str(ws.config), *extra], ())


FLAGS: dict[str, FlagCase] = {
    "cosim:no_command": lambda f, ws: Case([], ("the following arguments are required: COMMAND",)),
    "cosim:unknown_command": lambda f, ws: Case(["launch"], ("invalid choice: 'launch'",)),
    "doctor:unknown_option": lambda f, ws: Case(["doctor", "--verbose"], ("unrecognized arguments: --verbose",)),
    "testgen:no_output": lambda f, ws: Case(["testgen", "--granularity-mm", "40"], ("-o/--output",)),
    "testgen:granularity_text": _with(_testgen("--granularity-mm", "fine"), "--granularity-mm", "'fine'"),
    "testgen:granularity_zero": _with(_testgen("--granularity-mm", "0"), "--granularity-mm", "0"),
    "testgen:granularity_negative": _with(_testgen("--granularity-mm", "-5"), "--granularity-mm", "-5"),
    "testgen:granularity_nan": _with(_testgen("--granularity-mm", "nan"), "--granularity-mm", "nan"),
    # numpy's overflow warning came before the error
    "testgen:granularity_tiny": _with(_testgen("--granularity-mm", "1e-300"), "1e-300 mm makes about 1e"),
    "testgen:granularity_denormal": _with(_testgen("--granularity-mm", "1e-310"), "mm makes about 1e"),
    "testgen:per_cube_zero": _with(_testgen("--granularity-mm", "40", "--per-cube", "0"), "--per-cube", "0"),
    # absurdly fine or large: one error line at once, not a traceback out of memory or an endless generation
    "testgen:granularity_1e-9": _with(_testgen("--granularity-mm", "1e-9"), "granularity 1e-09 mm", "5,000,000"),
    "testgen:granularity_0.01": _with(_testgen("--granularity-mm", "0.01"), "cubes over region", "at least"),
    "testgen:per_cube_1e9": _with(_testgen("--granularity-mm", "40", "--per-cube", "1000000000"), "1..1,000,000"),
    "testgen:per_cube_too_many_cases": _with(
        _testgen("--granularity-mm", "40", "--per-cube", "500000"), "non-empty cubes", "per suite"
    ),
    "testgen:count_1e12": _with(
        _testgen("--granularity-mm", "40", "--method", "random", "--count", "1000000000000"), "count", "1..1,000,000"
    ),
    "testgen:count_negative": _with(
        _testgen("--granularity-mm", "40", "--method", "random", "--count", "-1"), "--count", "-1"
    ),
    "testgen:method": _with(_testgen("--granularity-mm", "40", "--method", "sobol"), "--method", "'sobol'"),
    "testgen:seed_negative": _with(_testgen("--granularity-mm", "40", "--seed", "-1"), "--seed", "-1"),
    "testgen:region": _with(_testgen("--granularity-mm", "40", "--region", "spleen"), "--region", "'spleen'"),
    "testgen:output_directory": lambda f, ws: (
        (f / "d.parquet").mkdir()
        or Case(["testgen", "--granularity-mm", "40", "-o", str(f / "d.parquet")], ("d.parquet", "is a directory"))
    ),
    "testgen:output_in_proc": lambda f, ws: Case(
        ["testgen", "--granularity-mm", "40", "-o", "/proc/version.parquet"],
        ("/proc/version.parquet", "cannot write the suite"),
    ),
    "testgen:output_not_parquet": lambda f, ws: Case(
        ["testgen", "--granularity-mm", "40", "-o", "/proc/version"], ("/proc/version", "ending in .parquet")
    ),
    "testgen:output_under_a_file": lambda f, ws: (
        (f / "plain").write_text("")  # 0 characters written
        or Case(["testgen", "--granularity-mm", "40", "-o", str(f / "plain" / "s.parquet")], ("plain", "is a file"))
    ),
    # 5e-324 mm is 0 m: the generator's own message did not name the flag
    "testgen:granularity_subnormal": _with(_testgen("--granularity-mm", "5e-324"), "--granularity-mm", "5e-324"),
    "testgen:output_folder_missing": lambda f, ws: Case(
        ["testgen", "--granularity-mm", "40", "-o", str(f / "no" / "s.parquet")], ("s.parquet", "does not exist")
    ),
    "run-case:target_two_values": _with(_run_case("--target", "0.4", "0.0"), "--target", "expected 3 arguments"),
    "run-case:target_nan": _with(_run_case("--target", "nan", "nan", "nan"), "target", "nan"),
    "run-case:target_outside": _with(_run_case("--target", "5", "5", "5"), "target", "outside"),
    "run-case:source_text": _with(_run_case("--target", "0.4", "0", "0", "--source", "x", "0", "0"), "--source"),
    "run-case:backend": _with(_run_case("--target", "0.45", "0", "0.05", "--backend", "gazebo"), "'gazebo'"),
    "run-case:controller": _with(_run_case("--target", "0.45", "0", "0.05", "--controller", "wild"), "'wild'"),
    "run-case:seed_negative": _with(
        _run_case("--target", "0.45", "0", "0.05", "--backend", "emulated", "--seed", "-5"), "seed", "-5"
    ),
    # seeds past 32 bits were taken (and wrapped), a source 1e300 m away printed numpy warnings, an empty name was
    # taken as the default
    "run-case:seed_33_bits": _with(
        _run_case("--target", "0.45", "0", "0.05", "--backend", "emulated", "--seed", "4294967296"), "--seed", "0 to"
    ),
    "errors:collect_seed_64_bits": lambda f, ws: Case(
        ["errors", "collect", "--seed", str(2**63), "-o", str(f / "d.parquet")], ("--seed", "0 to 9223372036854775807")
    ),
    "testgen:seed_80_bits": _with(_testgen("--granularity-mm", "40", "--seed", str(2**80)), "--seed", "0 to"),
    "run-case:source_1e300": _with(
        _run_case("--target", "0.45", "0", "0.05", "--source", "1e300", "0", "0.3"), "--source", "within +-10 m"
    ),
    "run-case:target_inf": _with(_run_case("--target", "inf", "0", "0.05"), "--target", "within +-10 m"),
    "run-case:backend_empty": _with(_run_case("--target", "0.45", "0", "0.05", "--backend", ""), "--backend", "empty"),
    "testgen:region_empty": _with(_testgen("--granularity-mm", "40", "--region", " "), "--region", "empty"),
    "bag:output_empty": lambda f, ws: Case(["bag", "recover", str(f / "x.mcap.part"), "-o", ""], ("--output", "empty")),
    "campaign:detector_twice": lambda f, ws: Case(
        [
            "campaign",
            "--suite",
            str(ws.suite),
            "--detector",
            "tip_mm=1",
            "--detector",
            "tip_mm=5",
            "--out",
            str(f / "r"),
        ],
        ("--detector", "given twice"),
    ),
    "check:no_traces": lambda f, ws: Case(["check"], ("TRACE",)),
    "check:missing_trace": lambda f, ws: Case(["check", str(f / "gone.npz")], ("gone.npz", "cannot read")),
    "check:target_two_values": lambda f, ws: Case(
        ["check", str(ws.records["virtual"]), "--target", "1", "2"], ("--target", "expected 3 arguments")
    ),
    "check:missing_properties": lambda f, ws: Case(
        ["check", str(ws.records["virtual"]), "--properties", str(f / "p.yaml")], ("p.yaml", "file not found")
    ),
    "check:missing_config": lambda f, ws: Case(
        ["check", str(ws.records["virtual"]), "--config", str(f / "c.yaml")], ("c.yaml", "file not found")
    ),
    "campaign:no_suite": lambda f, ws: Case(["campaign", "--out", str(f / "run")], ("--suite",), (f / "run",)),
    "campaign:workers_zero": _with(_campaign("--workers", "0"), "--workers", "0"),
    "campaign:workers_a_billion": _with(_campaign("--workers", "1000000000"), "--workers", "from 1 to 4096"),
    # '' read as '.': "error: .: expected a regular file, got a directory", a folder nobody typed
    "campaign:config_empty": _with(_campaign("--config", ""), "--config", "expected a path, got an empty text"),
    "campaign:suite_empty": _with(_campaign("--suite", ""), "--suite", "expected a path, got an empty text"),
    # the same class elsewhere: '' read as '.' (a folder nobody typed), as "not given" (--bag: "give --bag FILE"), or
    # as "the default" (supervisor check --goals '' checked the machine's own goals and said they hold)
    "empty_path:supervisor_goals": lambda f, ws: Case(
        ["supervisor", "check", "--goals", "", "--out", str(f / "sck")], ("--goals", "expected a path"), (f / "sck",)
    ),
    # the model checker's files were dropped among a campaign's
    "supervisor:check_into_a_campaign_run": lambda f, ws: Case(
        ["supervisor", "check", "--out", str(ws.run_dir)], ("--out", "results.sqlite: another command's run directory")
    ),
    "empty_path:dashboard_bag": lambda f, ws: Case(
        ["dashboard", "--bag", "", "--screenshot", str(f / "o.png")], ("--bag", "expected a path"), (f / "o.png",)
    ),
    "empty_path:replay_bag": lambda f, ws: Case(["replay", ""], ("bag", "expected a path")),
    "empty_path:errors_train_dataset": lambda f, ws: Case(
        ["errors", "train", "", "-o", str(f / "m.npz")], ("DATASET", "expected a path"), (f / "m.npz",)
    ),
    "empty_path:experiment_errors": lambda f, ws: Case(
        ["experiment", "rq3", "--errors", "", "--out", str(f / "x")], ("--errors", "expected a path"), (f / "x",)
    ),
    "empty_path:report_dir": lambda f, ws: Case(["report", ""], ("DIR", "expected a path")),
    # "offset filter: joint2: ..." did not say it came from --filter
    "campaign:filter_nan": _with(
        _campaign("--backends", "virtual,physical", "--filter", "physical=offset:joint2=nan"),
        "--filter physical=offset:joint2=nan",
        "expected a finite number",
    ),
    "campaign:workers_text": _with(_campaign("--workers", "two"), "--workers", "'two'"),
    "campaign:executor": _with(_campaign("--executor", "dask"), "--executor", "'dask'"),
    "campaign:backends": _with(_campaign("--backends", "virtual,gazebo"), "--backends", "'gazebo'"),
    "campaign:two_virtual": _with(_campaign("--backends", "mujoco,pybullet"), "--backends", "two backends"),
    "campaign:address_without_ray": _with(_campaign("--address", "10.0.0.1:6379"), "--address"),
    "campaign:controller": _with(_campaign("--controller", "wild"), "'wild'"),
    "campaign:nothing_to_resume": _with(_campaign("--resume"), "results.sqlite", "nothing to resume"),
    "campaign:missing_suite": lambda f, ws: Case(
        ["campaign", "--suite", str(f / "s.parquet"), "--out", str(f / "run")],
        ("s.parquet", "suite file not found"),
        (f / "run",),
    ),
    "campaign:out_is_a_file": lambda f, ws: Case(
        ["campaign", "--config", str(ws.config), "--suite", str(ws.suite), "--out", str(_file(f))],
        ("a_file", "is a file"),
    ),
    "campaign:existing_run": lambda f, ws: Case(
        ["campaign", "--config", str(ws.config), "--suite", str(ws.suite), "--out", str(ws.run_dir)],
        ("results.sqlite", "already holds files", "--resume"),
    ),
    "session:cases_negative": lambda f, ws: Case(["session", "--cases", "-1", "--out", str(f / "r")], ("--cases",)),
    "session:out_is_a_file": lambda f, ws: Case(["session", "--out", str(_file(f))], ("a_file", "is a file")),
    "session:missing_suite": lambda f, ws: Case(
        ["session", "--suite", str(f / "s.parquet"), "--out", str(f / "r")], ("--suite", "s.parquet", "no such file")
    ),
    "session:missing_graph": lambda f, ws: Case(["session", "--config", str(f / "g.yaml")], ("g.yaml", "not found")),
    # a filter's options were checked by its proxy node, after the graph was up, and the run directory stayed
    "session:filter_nan": lambda f, ws: Case(
        ["session", "--filter", "physical=offset:joint2=nan", "--out", str(f / "r")],
        ("--filter physical=offset:joint2=nan", "expected a finite number"),
        (f / "r",),
    ),
    "session:filter_huge": lambda f, ws: Case(
        ["session", "--filter", "virtual=offset:joint2=1e308", "--out", str(f / "r")],
        ("--filter virtual=offset:joint2=1e308",),
        (f / "r",),
    ),
    "session:filter_missing_model": lambda f, ws: Case(
        ["session", "--filter", f"physical=errors:model={f / 'm.npz'}", "--out", str(f / "r")],
        ("--filter physical=errors:model=", "m.npz"),
        (f / "r",),
    ),
    # the controller node refused it after every node had started; the run directory stayed with an empty bag
    "session:scenario_without_supervisor": lambda f, ws: Case(
        ["session", "--supervisor-scenario", str(_scenario(f, "request: abort")), "--out", str(f / "r")],
        ("needs a supervisor",),
        (f / "r",),
    ),
    "session:scenario_not_the_machines": lambda f, ws: Case(
        [
            "session",
            "--supervisor",
            "--supervisor-scenario",
            str(_scenario(f, "request: pause")),
            "--out",
            str(f / "r"),
        ],
        ("request", "pause"),
        (f / "r",),
    ),
    "replay:missing_bag": lambda f, ws: Case(["replay", str(f / "b.mcap")], ("b.mcap", "no such bag")),
    "replay:rate_negative": lambda f, ws: Case(["replay", str(ws.bag), "--rate", "-1"], ("--rate", "-1")),
    "replay:rate_text": lambda f, ws: Case(["replay", str(ws.bag), "--rate", "fast"], ("--rate", "'fast'")),
    "replay:wait_negative": lambda f, ws: Case(
        ["replay", str(ws.bag), "--wait-for-subscribers", "-2"], ("--wait-for-subscribers", "-2")
    ),
    "replay:wait_for_ever": lambda f, ws: Case(
        ["replay", str(ws.bag), "--wait-for-subscribers", "inf"], ("--wait-for-subscribers", "3600 s, got inf")
    ),
    "report:missing_dir": lambda f, ws: Case(["report", str(f / "nope")], ("nope", "no such directory")),
    "report:a_file": lambda f, ws: Case(["report", str(_file(f))], ("a_file", "expected a directory")),
    "report:max_cubes_zero": lambda f, ws: Case(["report", str(ws.run_dir), "--max-cubes", "0"], ("--max-cubes", "0")),
    "report:max_cubes_past_any_lung": lambda f, ws: Case(
        ["report", str(ws.run_dir), "--max-cubes", str(10**20)], ("--max-cubes", "[1, 1000000]")
    ),
    "export:no_output": lambda f, ws: Case(["export", str(ws.run_dir)], ("-o/--output",)),
    "export:output_is_a_file": lambda f, ws: Case(
        ["export", str(ws.run_dir), "-o", str(_file(f))], ("a_file", "is a file")
    ),
    # records written among the run's own copies of its inputs (inputs/), which report and replay read
    "export:into_its_run_inputs": lambda f, ws: Case(
        ["export", str(ws.run_dir), "-o", str(ws.run_dir / "inputs" / "records")],
        ("-o", "is inside the input RUN_DIR"),
        (ws.run_dir / "inputs" / "records",),
    ),
    "export:unknown_case": lambda f, ws: Case(
        ["export", str(ws.run_dir), "-o", str(f / "x"), "--case", "nope"], ("--case", "'nope'"), (f / "x",)
    ),
    "export:unknown_robot": lambda f, ws: Case(
        ["export", str(ws.run_dir), "-o", str(f / "x"), "--robot", "ghost"], ("'ghost'",), (f / "x",)
    ),
    "bag:unknown_action": lambda f, ws: Case(["bag", "explode", str(ws.bag)], ("invalid choice: 'explode'",)),
    "bag:recover_missing_argument": lambda f, ws: Case(["bag", "recover"], ("bag",)),
    # it said it looked for "x.mcap.part.part"
    "bag:recover_missing_part": lambda f, ws: Case(
        ["bag", "recover", str(f / "x.mcap.part")], ("x.mcap.part: no such file",)
    ),
    "bag:recover_target_exists": lambda f, ws: Case(
        ["bag", "recover", str(ws.bag), "-o", str(ws.bag)], (ws.bag.name, "is the input BAG")
    ),
    "experiment:unknown": lambda f, ws: Case(["experiment", "rq9", "--out", str(f / "e")], ("'rq9'",)),
    "experiment:granularities_text": lambda f, ws: Case(
        ["experiment", "rq1", "--quick", "--granularities-mm", "fine", "--out", str(f / "e")],
        ("--granularities-mm", "'fine'"),
        (f / "e",),
    ),
    # the same suite twice: refused after the first suites and experiment.json were written, which stayed
    "experiment:granularities_twice": lambda f, ws: Case(
        ["experiment", "rq1", "--quick", "--granularities-mm", "20,20", "--workers", "1", "--out", str(f / "e")],
        ("--granularities-mm", "20 given twice"),
        (f / "e",),
    ),
    "experiment:workers_zero": lambda f, ws: Case(
        ["experiment", "rq3", "--quick", "--workers", "0", "--out", str(f / "e")], ("--workers", "0"), (f / "e",)
    ),
    "experiment:errors_outside_rq3": lambda f, ws: Case(
        ["experiment", "rq1", "--quick", "--errors", str(_file(f)), "--out", str(f / "e")],
        ("--errors", "rq3 only"),
        (f / "e",),
    ),
    "experiment:errors_model_missing": lambda f, ws: Case(
        ["experiment", "rq3", "--quick", "--errors", str(f / "none.npz"), "--out", str(f / "e")],
        ("--errors", "none.npz"),
        (f / "e",),
    ),
    "experiment:errors_model_not_a_model": lambda f, ws: Case(
        ["experiment", "rq3", "--quick", "--errors", str(_file(f)), "--out", str(f / "e")],
        ("--errors", "a_file"),  # it was blamed on --filter virtual=errors:model=..., which nobody typed
        (f / "e",),
    ),
    "experiment:out_is_a_file": lambda f, ws: Case(
        ["experiment", "rq3", "--quick", "--out", str(_file(f))], ("a_file",)
    ),
    "campaign:supervisor_missing": _with(
        _campaign("--supervisor", "no_such_supervisor.yaml"), "--supervisor", "no_such_supervisor.yaml"
    ),
    "campaign:scenario_without_supervisor": lambda f, ws: _with(
        _campaign("--supervisor-scenario", str(_scenario(f, "request: abort"))), "needs a supervisor"
    )(f, ws),
    "campaign:scenario_bad_request": lambda f, ws: _with(
        _campaign("--supervisor", "--supervisor-scenario", str(_scenario(f, "request: pause"))), "request", "pause"
    )(f, ws),
    "run-case:scenario_fault_and_request": lambda f, ws: _with(
        _run_case(
            "--target",
            "0.45",
            "-0.05",
            "0.05",
            "--supervisor",
            "--supervisor-scenario",
            str(_scenario(f, "request: abort, fault: force")),
        ),
        "either a request or a fault",
    )(f, ws),
    "run-case:supervisor_bad_loop": lambda f, ws: _with(
        _run_case("--target", "0.45", "-0.05", "0.05", "--supervisor", str(_supervisor(f, "stopped_timeout_s: -1"))),
        "loop.stopped_timeout_s",
    )(f, ws),
    "demo:cases_negative": lambda f, ws: Case(
        ["demo", "--session-cases", "-1", "--out", str(f / "d")], ("--session-cases", "-1"), (f / "d",)
    ),
    "demo:granularity_zero": lambda f, ws: Case(
        ["demo", "--granularity-mm", "0", "--out", str(f / "d")], ("--granularity-mm", "0"), (f / "d",)
    ),
}


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_bad_flags(name: str, tmp_path: Path, workspace: Workspace, capfd: pytest.CaptureFixture[str]) -> None:
    run_case(FLAGS[name](tmp_path, workspace), sorted(FLAGS).index(name) % 2 == 1, capfd)
