"""Running suites of test cases into a run directory, resumable after a crash or Ctrl-C.

A run directory holds ``results.sqlite`` (one transaction per finished case), copies of the suites
(``suites/<suite_id>.parquet``, so ``cosim report`` needs nothing else) and ``summary.json``. With
``resume`` the cases already stored are skipped; the configuration, suites, controller and backends
must be those of the stored run.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from cosim_validation.assembly import AssemblySpec, CaseAssembly
from cosim_validation.assembly.campaign_config import CampaignConfig
from cosim_validation.assembly.spec_check import check_spec
from cosim_validation.assembly.supervision import check_supervision
from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.controllers.planning import ValidatorSettings
from cosim_validation.hazards.hazard_watch import check_detector
from cosim_validation.robots.filters.robot_filters import FilterSpec
from cosim_validation.robots.registry import engine
from cosim_validation.runs.campaign.case_pipeline import case_row, config_digest, run_case, shared_assembly
from cosim_validation.runs.campaign.executor import Outcome, WorkerSetupError, default_workers, run_local, run_ray
from cosim_validation.runs.campaign.progress import Progress
from cosim_validation.runs.campaign.results_db import CaseResult
from cosim_validation.runs.campaign.run_directory import RESULTS_FILE, RunDirectory
from cosim_validation.runs.campaign.run_summary import summarize, write_summary
from cosim_validation.runs.campaign.worker_items import RobotLostRunError
from cosim_validation.runs.run_inputs import (
    INPUTS_DIR,
    MANIFEST,
    capture_inputs,
    error_model_identities,
    kept_path,
    portable_path,
    read_manifest,
    run_input_path,
    supervision_files,
)
from cosim_validation.runs.run_lock import command_line
from cosim_validation.runs.run_supervision import check_resume, stored_supervision
from cosim_validation.testgen import Suite, TestCase

EXECUTORS: tuple[str, ...] = ("local", "ray")
#: For fault tests only: a worker process (never the campaign's own process) that starts the case with this test id
#: kills itself with SIGKILL, on every attempt.
KILL_WORKER_ENV = "COSIM_TEST_KILL_WORKER"
__all__ = ["EXECUTORS", "RESULTS_FILE", "CampaignOutcome", "CampaignRequest", "run_campaign", "suite_record"]


@dataclass(frozen=True)
class CampaignRequest:
    """What to run.

    Attributes:
        config_path: The configuration file.
        suite_paths: One or more suite files (Parquet); their cases run in order, suite after suite.
        out_dir: The run directory (created).
        backends: Robots (``virtual``, ``physical``) or engines (``mujoco``, ``pybullet``, ``emulated``).
        executor: ``local`` (process pool) or ``ray``.
        address: Ray cluster address (None: a local Ray).
        workers: Worker processes or Ray actors; None: every core this process may use.
        resume: Continue the run stored in ``out_dir``.
        controller: Controller under test; None for the configuration's default.
        trajectories: Store every robot's trajectory (expected, virtual, physical).
        validate: Check every setpoint with the state validator; None: ``validator.enabled`` of the configuration.
        filters: Layers around the robots (injected errors, hazards, offsets), innermost first.
        supervisor: The task supervisor's configuration every case runs under; None: ``campaign.supervisor``.
        supervisor_scenario: A scenario for the supervisor (scripted requests, faults, teleoperation), or None.
        detector: The hazard detector in the loop (``[tip_mm=X][,joint=Y][,tracker_mm=Z][,progress=P]``), or None.
        stop_on_alarm: A detector alarm stops the task (an exception of the supervisor; needs both).
    """

    config_path: Path
    suite_paths: tuple[Path, ...]
    out_dir: Path
    backends: tuple[str, ...] = ("virtual",)
    executor: str = "local"
    address: str | None = None
    workers: int | None = None
    resume: bool = False
    controller: str | None = None
    trajectories: bool = True
    validate: bool | None = None
    filters: tuple[FilterSpec, ...] = ()
    supervisor: str | None = None
    supervisor_scenario: str | None = None
    detector: str | None = None
    stop_on_alarm: bool = False


@dataclass
class CampaignOutcome:
    """How a call of :func:`run_campaign` ended.

    Attributes:
        out_dir: The run directory.
        total: Cases in the suites.
        skipped: Cases already stored when the call started (resume).
        ran: Cases stored by this call.
        interrupted: Whether Ctrl-C stopped the call before every case was stored.
        wall_s: Wall time of this call [s].
        summary: The run's summary (also in ``summary.json``).
        notes: What the user should know besides the numbers: anatomy repairs, a salvaged database.
    """

    out_dir: Path
    total: int
    skipped: int
    ran: int = 0
    interrupted: bool = False
    wall_s: float = 0.0
    summary: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


#: The most worker processes a campaign starts (a Ray cluster's included): more than any machine it runs on has cores
MAX_WORKERS = 4096


def _check(request: CampaignRequest) -> int:
    if request.executor not in EXECUTORS:
        raise InputError(f"--executor: expected one of {', '.join(EXECUTORS)}, got {request.executor!r}")
    workers = default_workers() if request.workers is None else request.workers
    if not 1 <= workers <= MAX_WORKERS:  # a billion ran two (one per case) without a word
        raise InputError(f"--workers: expected an integer from 1 to {MAX_WORKERS} (a process each), got {workers!r}")
    if request.address is not None and request.executor != "ray":
        raise InputError("--address applies to --executor ray only")
    if not request.suite_paths:
        raise InputError("--suite: give at least one suite file")
    return workers


def _one_arm(engines: Sequence[str], workers: int, by_default: bool) -> int:
    """The workers of a campaign on ``engines``: one when a robot is one arm reached over ROS 2 (not hosted).

    Raises:
        InputError: ``--workers`` above 1 with such a robot (two workers would command one arm at once).
    """
    remote = [name for name in engines if not engine(name).hosted]
    if not remote or workers == 1:
        return workers
    if by_default:
        return 1
    raise InputError(f"--workers {workers}: the {remote[0]} robot is one arm, driven by one worker; use --workers 1")


def _suites(paths: Sequence[Path]) -> list[Suite]:
    suites = [Suite.read(p) for p in paths]
    seen: dict[str, Path] = {}
    for path, suite in zip(paths, suites, strict=True):
        if suite.suite_id in seen:
            raise InputError(f"{path}: the same suite ({suite.suite_id}) as {seen[suite.suite_id]}")
        seen[suite.suite_id] = path
    return suites


def suite_record(suite: Suite) -> dict[str, Any]:
    """What the run keeps of a suite's metadata (the report's coverage columns come from its metrics).

    Args:
        suite: A suite of the run; of the kept metadata keys, those it lacks are left out; ``cases`` is its length.
    """
    m = suite.metadata
    keep = ("suite_id", "generator", "seed", "granularity_m", "per_cube", "count", "region", "grid", "metrics")
    return {k: m[k] for k in keep if k in m} | {"cases": len(suite)}


def _item(suites: Sequence[Suite], index: int) -> tuple[TestCase, int]:
    """The work item of the campaign's ``index``-th case: (case, index)."""
    row = index
    for suite in suites:
        if row < len(suite):
            return suite.case(row), index
        row -= len(suite)
    raise IndexError(index)


def _items(suites: Sequence[Suite], done: set[str]) -> Iterator[tuple[int, tuple[TestCase, int]]]:
    ids = [test_id for suite in suites for test_id in suite.test_ids]
    for index, test_id in enumerate(ids):
        if test_id not in done:
            yield index, _item(suites, index)


@dataclass(frozen=True)
class _Work:
    """What a worker builds (picklable): the assembly and whether results carry trajectories."""

    spec: AssemblySpec
    trajectories: bool
    logs: Path  # the run directory's logs/: where the controller under test keeps its logs


def _init_world(work: _Work, single_threaded: bool) -> tuple[CaseAssembly, bool]:
    """A worker's assembly; with several workers on the machine, numba kernels run on one thread each."""
    warnings.filterwarnings("ignore", message="The TBB threading layer")  # numba falls back to another layer
    if single_threaded:
        import numba

        numba.set_num_threads(1)
    assembly = shared_assembly(work.spec)
    assembly.logs.folder = work.logs
    # the robots now, not at the first case: an engine that cannot start (a CoppeliaSim that does not answer)
    # is one error for the campaign, not one failed case after another
    assembly.backends  # noqa: B018 - built on first use
    return assembly, work.trajectories


def _work(world: tuple[CaseAssembly, bool], item: tuple[TestCase, int]) -> CaseResult:
    assembly, trajectories = world
    case, index = item
    if case.test_id == os.environ.get(KILL_WORKER_ENV) and multiprocessing.parent_process() is not None:
        os.kill(os.getpid(), signal.SIGKILL)  # the fault tests' worker that dies on every attempt
    return run_case(assembly, case, index, trajectories)


def _meta(
    request: CampaignRequest,
    campaign: CampaignConfig,
    spec: AssemblySpec,
    run_setup: tuple[str, list[Suite], dict[str, Path]],
    validate: bool,
) -> dict[str, Any]:
    """The run's meta.

    Args:
        request: The campaign's request.
        campaign: The configuration's ``campaign`` section.
        spec: The assembly's spec.
        run_setup: The controller, the suites and the supervisor's files by role.
        validate: Whether the cases are validated (the spec's choice, else the configuration's default).
    """
    controller, suites, supervision_files = run_setup
    filters = [f"{robot}={text}" for robot, text in spec.filters]
    digested = {"config": request.config_path, "properties": campaign.properties_path} | _digested(supervision_files)
    return {
        "kind": "campaign",
        "config": config_digest(*digested.values()),
        # each of those files on its own, so that a refused resume names the one that was edited
        "config_files": {role: [Path(path).name, config_digest(path)] for role, path in digested.items()},
        "config_path": portable_path(request.out_dir, request.config_path),
        "suite": [s.suite_id for s in suites],
        "suites": [suite_record(s) for s in suites],
        "controller": controller,
        "backends": list(spec.engines),
        "validate": validate,
        "filters": filters,
        # an error model replaced behind the same path makes another twin: a resume must not mix the two
        "error_models": error_model_identities(filters),
        "supervisor": _kept(
            request.out_dir, spec.supervisor if spec.supervisor is not None else campaign.supervisor_path
        ),
        "supervisor_scenario": _kept(request.out_dir, spec.supervisor_scenario),
        "detector": spec.detector,
        "stop_on_alarm": spec.stop_on_alarm,
        "assembly": _portable_spec(request.out_dir, spec),
        "safety_property": campaign.safety_property,
    }


def _with_run_inputs(
    spec: AssemblySpec, out: Path, request: CampaignRequest, campaign: CampaignConfig, supervision: dict[str, Path]
) -> AssemblySpec:
    """The spec reading the run directory's copies of the configuration, properties and supervisor files.

    The copies are made by a new run; ``supervision`` holds the supervisor's files by role.
    """
    if not request.resume:
        files = {"config": request.config_path, "properties": campaign.properties_path}
        capture_inputs(out, files | supervision)
    warn = _warn_stderr
    config, base = run_input_path(out, "config", request.config_path, warn)
    properties, _ = run_input_path(out, "properties", campaign.properties_path, warn)
    assert config is not None
    assert properties is not None
    spec = replace(
        spec,
        config_path=str(config),
        properties_path=str(properties),
        config_base_dir=str(base) if base is not None else None,
    )
    stored = stored_supervision(out)
    if stored is None:
        return spec
    scenario = stored.scenario if spec.supervisor_scenario is not None else None
    return replace(
        spec,
        supervisor=str(stored.config),
        supervisor_scenario=str(scenario) if scenario is not None else None,
        supervisor_files=tuple((role, str(path)) for role, path in stored.files.items()),
    )


def _supervision_files(request: CampaignRequest, spec: AssemblySpec, campaign: CampaignConfig) -> dict[str, Path]:
    """The supervised run's files by run-input role; {} without a supervisor.

    The roles: its configuration, machine and goals, needle force model, scenario and teleoperation script. A resume
    takes the run's copies, once the options are found to name the run's own files, none of them edited since (an
    original that is gone: a warning). Checked (before the run directory is touched).
    """
    config = spec.supervisor if spec.supervisor is not None else campaign.supervisor_path
    stored = stored_supervision(request.out_dir) if request.resume and config is not None else None
    if stored is None:
        checked = check_supervision(config, spec.supervisor_scenario)
        return supervision_files(config, spec.supervisor_scenario, checked)
    check_resume(stored, config, spec.supervisor_scenario, _warn_stderr)
    scenario = stored.scenario if spec.supervisor_scenario is not None else None
    check_supervision(stored.config, scenario, stored.files)
    return dict(stored.files)


def _input_files(config: Any, spec: AssemblySpec, scene: Any) -> dict[str, list[str]]:
    """The other files a case reads, by role, each as [file name, digest].

    They are the robot's URDF, the anatomy's mesh files (the scene's own digests) and each ``hazards`` filter's
    hazard library. A resume with any of them edited is refused and names it, as with the configuration's own files.

    Args:
        config: The whole configuration (its ``robot`` section names the URDF).
        spec: The assembly's spec (its filters).
        scene: The anatomy the cases run on.
    """
    from cosim_validation.hazards.hazard_filter import parse_options
    from cosim_validation.robots.model.robot_config import urdf_path

    urdf = urdf_path(config["robot"])
    files = {"urdf": [urdf.name, config_digest(urdf)]}
    for model in scene:
        if not str(model.source).startswith("builtin:"):
            files[f"mesh_{model.name}"] = [Path(model.source).name, str(model.sha256)[:16]]
    for robot, text in spec.filters:
        kind, _, options = text.partition(":")
        if kind.strip() == "hazards":
            library = resolve_resource(parse_options(options)[1])
            files[f"hazards_{robot}"] = [library.name, config_digest(library)]
    return files


def _digested(files: dict[str, Path]) -> dict[str, Path]:
    """The supervisor files (by role) the run's configuration digest covers: all but the goals.

    Only ``cosim supervisor check`` reads the goals, so a resume with an edited machine is refused like one with an
    edited property file.
    """
    return {role: path for role, path in files.items() if role != "supervisor_goals"}


def _kept(out: Path, path: str | Path | None) -> str | None:
    """A path as the run's meta keeps it: the file it names, relative to the run directory.

    A resume from another directory names the same; no absolute path of this machine is stored.
    """
    return portable_path(out, resolve_resource(path)) if path is not None else None


def _portable_spec(out: Path, spec: AssemblySpec) -> dict[str, Any]:
    """``spec`` as plain values for the run's meta, its paths relative to the run directory."""
    data = spec.to_dict()
    for key in ("config_path", "properties_path", "supervisor", "supervisor_scenario", "config_base_dir"):
        data[key] = _kept(out, data[key])
    data["supervisor_files"] = [[role, _kept(out, path)] for role, path in data["supervisor_files"]]
    return data


def _warn_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def run_campaign(request: CampaignRequest, progress_stream: TextIO | str | None = "stderr") -> CampaignOutcome:
    """Run (or resume) a campaign; every finished case is stored at once.

    Everything the workers will read is checked here first, so a bad request leaves no run directory behind;
    the run directory is locked against a second writer while the call runs.

    Args:
        request: What to run.
        progress_stream: Where the progress line goes: ``"stderr"`` (the process's standard error when called),
            a stream, or None (no progress).

    Raises:
        InputError, ConfigError: Bad request, configuration or suite, a resume of another run, a run directory
            another process writes, or a worker that cannot build its world.
    """
    workers = _check(request)
    config = load_case_config(request.config_path)
    campaign = CampaignConfig.from_config(config["campaign"])
    spec = AssemblySpec(
        str(request.config_path),
        campaign.engines(request.backends),
        request.controller,
        request.validate,
        filters=tuple((f.robot.label, f.text) for f in request.filters),
        supervisor=request.supervisor,
        supervisor_scenario=request.supervisor_scenario,
        detector=request.detector,
        stop_on_alarm=request.stop_on_alarm,
    )
    workers = _one_arm(spec.engines, workers, request.workers is None)
    # what every worker's assembly will build, checked before --out is touched;
    # a resume checks the run's copies of the supervisor's files instead of the options' (_supervision_files)
    checked = check_spec(spec, supervision=False, config=config)
    controller, scene = checked.controller, checked.scene
    spec = replace(spec, controller=controller)
    supervision = _supervision_files(request, spec, campaign)
    check_detector(
        spec.detector, spec.stop_on_alarm, spec.supervisor if spec.supervisor is not None else campaign.supervisor_path
    )
    suites = _suites(request.suite_paths)
    if spec.supervisor_scenario is not None and not request.resume:  # a mistyped case id was ignored silently;
        # a resume reads the run's copy, and the original may be gone (said when the run started)
        from cosim_validation.supervisor.scenario import Scenario

        for line in Scenario.load(spec.supervisor_scenario).unknown_cases({t for s in suites for t in s.test_ids}):
            _warn_stderr(line)
    validate = (
        spec.validate if spec.validate is not None else ValidatorSettings.from_config(config["validator"]).enabled
    )
    meta = _meta(request, campaign, spec, (controller, suites, supervision), validate)
    meta["anatomy_repairs"] = scene.repairs()
    meta["input_files"] = _input_files(config, spec, scene)
    pairs = list(zip(suites, request.suite_paths, strict=True))
    run = RunDirectory.open(request.out_dir, meta, request.resume, pairs, command_line())
    outcome = CampaignOutcome(run.path, sum(len(s) for s in suites), 0, notes=[*scene.repair_lines(), *run.notes])
    run.made(*[path for path in (run.path / INPUTS_DIR, run.path / MANIFEST) if not path.exists()])
    try:
        spec = _with_run_inputs(spec, run.path, request, campaign, supervision)
        stream = sys.stderr if progress_stream == "stderr" else progress_stream  # the stream of now, not of import
        _run(request, run, suites, spec, workers, outcome, stream if not isinstance(stream, str) else None)
    except CosimError as exc:
        said = _as_originals(str(exc), run.path)  # before discard: the manifest says which copy is whose
        if outcome.ran == 0 and not request.resume:
            run.discard()
        else:
            run.close()
        if said != str(exc):
            raise InputError(said) from None
        raise
    run.close()
    return outcome


def _as_originals(message: str, run_dir: Path) -> str:
    """``message`` with each of the run's input copies named by the file it was copied from.

    A worker reads the copies; an error in one named ``RUN/inputs/...``, which a discarded run no longer has.
    """
    try:
        manifest = read_manifest(run_dir)
    except CosimError:
        return message
    for entry in manifest.values():
        original = kept_path(run_dir, entry.original)
        shown = os.path.relpath(original) if not Path(entry.original).is_absolute() else str(original)
        message = message.replace(str(run_dir / entry.copy), shown)
    return message


def _run(
    request: CampaignRequest,
    run: RunDirectory,
    suites: list[Suite],
    spec: AssemblySpec,
    workers: int,
    outcome: CampaignOutcome,
    progress_stream: TextIO | None,
) -> None:
    """Run the cases not stored yet into ``run``; fill ``outcome`` and write ``summary.json``."""
    db, started = run.db, time.perf_counter()
    done = db.finished_ids()
    outcome.skipped = len(done & {t for s in suites for t in s.test_ids})
    for test_id, reason in sorted(db.worker_deaths().items()) if request.resume else ():
        outcome.notes.append(f"case {test_id} runs again: it was stored as failed ({reason}), not by the controller")
    progress = Progress(outcome.total - outcome.skipped, stream=progress_stream)
    workers = max(1, min(workers, outcome.total - outcome.skipped))  # no world built for a worker with nothing to do

    def on_result(result: Outcome[Any]) -> None:
        if result.setup_error:
            raise WorkerSetupError(
                f"a worker could not build its world from {request.config_path}: {result.setup_error}"
            )
        if result.stop:
            raise RobotLostRunError(
                f"case {_item(suites, result.index)[0].test_id} stopped the campaign, not stored: {result.stop}"
            )
        stored = result.value
        if stored is None:
            stored = _failed(_item(suites, result.index), result.error, spec.controller or "")
        if result.retried:
            outcome.notes.append(
                f"case {stored.case.test_id}: its worker process {result.retried}; it ran again in a fresh worker"
            )
        db.add(stored, worker_died=result.worker_died)
        outcome.ran += 1
        progress.advance(failed=stored.case.outcome == "failed")

    try:
        if outcome.skipped == outcome.total:
            pass  # everything is stored already: no worker, no world
        elif request.executor == "ray":
            work = _Work(spec, request.trajectories, run.path / "logs")
            run_ray(_init_world, (work, True), _work, _items(suites, done), on_result, workers, request.address)
        else:
            work = _Work(spec, request.trajectories, run.path / "logs")
            run_local(_init_world, (work, workers > 1), _work, _items(suites, done), on_result, workers)
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        progress.close()
    outcome.wall_s = time.perf_counter() - started
    outcome.summary = summarize(db) | {"last_call": _call_info(request, outcome, workers)}
    if outcome.notes:
        outcome.summary["notes"] = list(outcome.notes)
    write_summary(run.path / "summary.json", outcome.summary)


def _failed(item: tuple[TestCase, int], error: str, controller: str) -> CaseResult:
    """The row of a case whose pipeline raised: outcome ``failed``, the error's last line as message."""
    case, index = item
    lines = [line for line in error.strip().splitlines() if line.strip()]
    return CaseResult(case_row(case, index, controller, "failed", lines[-1] if lines else error, 0.0))


def _call_info(request: CampaignRequest, outcome: CampaignOutcome, workers: int) -> dict[str, Any]:
    return {
        "executor": request.executor,
        "workers": workers,
        "cases_run": outcome.ran,
        "cases_skipped": outcome.skipped,
        "interrupted": outcome.interrupted,
        "wall_s": outcome.wall_s,
        "cases_per_s": outcome.ran / outcome.wall_s if outcome.wall_s > 0 else 0.0,
    }
