"""Running a research-question experiment: generate its suites, run one campaign over them, report.

Layout of the output directory::

    DIR/suites/<method>-<granularity>mm.parquet    the generated suites
    DIR/run/                                       the campaign (results.sqlite, report.html, summary.json)
    DIR/run-errors/                                RQ3 with --errors: the virtual robot with injected errors
    DIR/experiment.json                            definition, wall times per phase, the answer's numbers

A resumed experiment keeps the record of its earlier calls (:mod:`cosim_validation.runs.experiment.call_log`):
``wall_s`` is summed over every call, ``calls`` lists each.
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from cosim_validation.common.config import load_case_config
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.filters.robot_filters import FilterSpec, check_filters
from cosim_validation.robots.model import RobotConfig
from cosim_validation.runs.campaign.campaign_runner import RESULTS_FILE, CampaignRequest, run_campaign
from cosim_validation.runs.campaign.json_file import read_json, write_json
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.runs.experiment.call_log import EXPERIMENT_FILE, earlier_calls, summed_wall_s, utc_now
from cosim_validation.runs.experiment.experiment_specs import ExperimentSpec
from cosim_validation.runs.experiment.rq3_errors import ERRORS_RUN, table_4_with_errors
from cosim_validation.runs.experiment.suite_maker import SuiteMaker
from cosim_validation.runs.report import build_report
from cosim_validation.testgen import Suite, TestgenRequest


@dataclass(frozen=True)
class RunOptions:
    """How an experiment's campaign runs (see ``cosim campaign``).

    ``errors_model``: RQ3's third row (:mod:`~.rq3_errors`).
    """

    config_path: Path
    out_dir: Path
    workers: int | None = None
    executor: str = "local"
    address: str | None = None
    resume: bool = False
    errors_model: Path | None = None


@dataclass
class ExperimentOutcome:
    """An experiment's output directory and ``experiment.json`` content."""

    out_dir: Path
    results: dict[str, Any] = field(default_factory=dict)
    interrupted: bool = False


def _plan(spec: ExperimentSpec) -> list[tuple[str, str, float]]:
    """(file stem, method, granularity [m]) of every suite, each grid suite before its random twin."""
    if not spec.granularities_m:
        return [("random", "random", 0.04)]  # RQ3: the grid only measures coverage
    return [(f"{m}-{1e3 * g:g}mm", m, g) for g in spec.granularities_m for m in ("grid", "random")]


def make_suites(
    spec: ExperimentSpec, maker: SuiteMaker, folder: Path, reuse: bool
) -> tuple[list[Path], list[dict[str, Any]]]:
    """Generate (or, with ``reuse``, read back) the experiment's suites; their paths and generation records.

    A random suite has as many cases as the grid suite of its granularity ([Actuators 2025]'s comparison), or
    ``spec.random_cases`` without granularities (RQ3).

    Args:
        spec: The experiment.
        maker: The generator, with the configuration's anatomy and ``testgen`` section.
        folder: Where the suites are written (``<method>-<granularity>mm.parquet``; RQ3: ``random.parquet``).
        reuse: Read a suite that is in ``folder`` already back instead of generating it (a resume).
    """
    folder.mkdir(parents=True, exist_ok=True)
    paths, records = [], []
    grid_cases = spec.random_cases
    for stem, method, granularity in _plan(spec):
        path = folder / f"{stem}.parquet"
        started = time.perf_counter()
        count = grid_cases if method == "random" else None
        request = TestgenRequest(method, granularity, spec.per_cube, count, spec.region, spec.seed)
        suite = Suite.read(path) if reuse and path.is_file() else maker.generate(request, path)
        if method == "grid":
            grid_cases = len(suite)
        metrics = dict(suite.metadata.get("metrics", {}))
        records.append({"file": path.name, "cases": len(suite), "wall_s": time.perf_counter() - started, **metrics})
        paths.append(path)
    return paths, records


def _case_timing(run_dir: Path) -> dict[str, float]:
    with ResultsDB.open(run_dir / "results.sqlite") as db:
        walls = [w for w, _ in db.timings().values()]
    return {"cases": float(len(walls)), "case_wall_s_mean": sum(walls) / len(walls) if walls else float("nan")}


def _answer(spec: ExperimentSpec, report: dict[str, Any]) -> dict[str, Any]:
    if spec.granularities_m:
        return {
            "tables": report["tables-2-3"].get("tables", []),
            "figure_6": report["figure-6"],
            "figure_9": report["figure-9"],
        }
    deviations = report["figure-11-table-4"]
    clean = int(deviations.get("cases", 0))
    return {
        "collision_free_cases": clean,
        "enough": clean >= spec.min_clean,
        "required": spec.min_clean,
        "table_4": deviations.get("table_4", []),
        "figure_10": report["figure-10"],
    }


def _mark_started(out: Path, calls: list[dict[str, Any]], resume: bool) -> None:
    """Record the calls so far, this one not ended, so a killed call can be measured when resumed."""
    path = out / EXPERIMENT_FILE
    previous = read_json(path) if resume and path.is_file() else {}
    write_json(path, previous | {"calls": calls})


def check_out_dir(out: Path, resume: bool, stored: Path, resume_needs_run: bool = True) -> None:
    """Refuse, before any work, an output directory the campaign would refuse after the suites are made.

    Args:
        out: The experiment's output directory.
        resume: Whether ``--resume`` was given.
        stored: The results database of the experiment's first campaign.
        resume_needs_run: Whether ``--resume`` without ``stored`` is an error.

    Raises:
        InputError: ``out`` is a file; ``resume`` without a stored run; a stored run without ``resume``.
    """
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {str(out)!r} is a file, expected a directory")
    if resume and resume_needs_run and not stored.is_file():
        raise InputError(f"{out}: nothing to resume (no {stored.relative_to(out)}); run without --resume")
    if not resume and stored.exists():
        raise InputError(f"{out}: holds a run already; use --resume to continue it or choose another --out")


def run_experiment(
    spec: ExperimentSpec, options: RunOptions, progress: TextIO | None = sys.stderr
) -> ExperimentOutcome:
    """Run ``spec`` into ``options.out_dir`` and write ``experiment.json``.

    Args:
        spec: The experiment (:func:`~cosim_validation.runs.experiment.experiment_specs.experiment_spec`).
        options: How the campaign runs, the output directory, whether to resume, and RQ3's error model.
        progress: Where the campaigns' progress lines go (a text stream), or None for none.

    Raises:
        InputError, ConfigError: Bad options or configuration (as ``cosim campaign``), or an output
            directory that does not fit ``resume`` (:func:`check_out_dir`).
    """
    started = time.perf_counter()
    out = options.out_dir
    check_out_dir(out, options.resume, out / "run" / RESULTS_FILE)
    check_errors_model(spec, options)
    earlier = earlier_calls(out, options.resume, out / "run" / "results.sqlite")
    this_call: dict[str, Any] = {"started_at": utc_now(), "ended": False}
    maker = SuiteMaker.from_config(options.config_path)
    suites, generated = make_suites(spec, maker, out / "suites", reuse=options.resume)
    generation_s = time.perf_counter() - started
    _mark_started(out, [*earlier, this_call], options.resume)
    request = CampaignRequest(
        options.config_path,
        tuple(suites),
        out / "run",
        spec.backends,
        options.executor,
        options.address,
        options.workers,
        options.resume,
    )
    campaign = run_campaign(request, progress)
    wall_s = {"generation": generation_s, "campaign": campaign.wall_s}
    if options.errors_model is not None and not campaign.interrupted:
        injected = run_campaign(errors_request(request, options), progress)
        wall_s["campaign_errors"] = injected.wall_s
        campaign = replace(campaign, interrupted=injected.interrupted, ran=campaign.ran + injected.ran)
    results: dict[str, Any] = {
        "experiment": spec.name,
        "question": spec.question,
        "definition": asdict(spec),
        "suites": generated,
        "campaign": campaign.summary.get("last_call", {}) | _case_timing(out / "run"),
    }
    outcome = ExperimentOutcome(out, results, campaign.interrupted)
    if not campaign.interrupted:
        report = build_report(out / "run")
        wall_s["report"] = report.wall_s
        results["report"] = str(report.html_path)
        results["answer"] = _answer(spec, report.summary["report"])
        if options.errors_model is not None:
            results["answer"]["table_4_errors"] = table_4_with_errors(out / "run", out / ERRORS_RUN)
    wall_s["total"] = time.perf_counter() - started
    this_call |= {"ended": True, "interrupted": campaign.interrupted, "cases_run": campaign.ran, "wall_s": wall_s}
    results["calls"] = [*earlier, this_call]
    results["wall_s"] = summed_wall_s(results["calls"])
    results["interrupted"] = campaign.interrupted
    write_json(out / EXPERIMENT_FILE, results)
    return outcome


def errors_request(request: CampaignRequest, options: RunOptions) -> CampaignRequest:
    """The same suites on the virtual robot behind the ``errors`` filter of ``options.errors_model``.

    Args:
        request: The experiment's campaign request; its suites and settings are kept.
        options: The experiment's options: the output directory, ``resume`` and ``errors_model`` (not None).
    """
    out = options.out_dir / ERRORS_RUN
    model = FilterSpec(RobotRole.VIRTUAL, "errors", f"model={options.errors_model}")
    resume = options.resume and (out / RESULTS_FILE).is_file()
    return replace(request, out_dir=out, backends=("virtual",), resume=resume, filters=(model,))


def check_errors_model(spec: ExperimentSpec, options: RunOptions) -> None:
    """Refuse ``--errors`` for another experiment than RQ3, or a model the virtual robot cannot load, before any work.

    Args:
        spec: The experiment.
        options: Its options; nothing is checked when ``options.errors_model`` is None.

    Raises:
        InputError, ModelFileError: As above.
    """
    if options.errors_model is None:
        return
    if spec.name != "rq3":
        raise InputError(f"--errors applies to rq3 only, not {spec.name}")
    config = load_case_config(options.config_path)
    model = FilterSpec(RobotRole.VIRTUAL, "errors", f"model={options.errors_model}")
    try:  # built as the run will build it, but named by the option the user gave (not the --filter it becomes)
        check_filters(
            config,
            ((model.robot.label, model.text),),
            (RobotRole.VIRTUAL,),
            RobotConfig.from_config(config["robot"]).kinematics,
        )
    except InputError as exc:
        detail = str(exc).removeprefix(f"--filter {model.robot.label}={model.text}: ")
        raise InputError(f"--errors {str(options.errors_model)!r}: {detail}") from None


def read_results(out_dir: Path) -> dict[str, Any]:
    """The ``experiment.json`` of an output directory.

    Args:
        out_dir: The experiment's output directory.
    """
    return read_json(out_dir / EXPERIMENT_FILE)
