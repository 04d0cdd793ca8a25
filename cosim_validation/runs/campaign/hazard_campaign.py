"""A hazard campaign: a suite fault-free and under each scenario, then the detector over every case.

Each scenario is an ordinary campaign run (``RUN/runs/<name>/``: resumable, its own ``results.sqlite``) with the
physical robot seen through the scenario's ``hazards`` filter; the virtual robot is the fault-free model fed the
clean commands. The fault-free run gives the detector its thresholds (its largest deviations times a margin)
unless they are set or derived from another fault-free run (``calibration``: a campaign run directory with the
virtual and physical records, e.g. of another suite, so false alarms are counted on cases the thresholds were not
taken from). The detection tables go to ``RUN/hazards.sqlite`` (:mod:`~cosim_validation.runs.campaign.hazard_tables`).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cosim_validation.common.config import ConfigNode, load_config, resolve_resource
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.hazards.detector import DetectorSettings
from cosim_validation.hazards.hazard_library import load_library
from cosim_validation.hazards.hazard_watch import format_detector, parse_detector
from cosim_validation.hazards.scenario import Scenario
from cosim_validation.robots.filters.robot_filters import FilterSpec
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.runs.campaign.campaign_runner import CampaignRequest, run_campaign
from cosim_validation.runs.campaign.case_pipeline import config_digest
from cosim_validation.runs.campaign.hazard_tables import (
    FAULT_FREE,
    HAZARDS_FILE,
    derive_settings,
    holding_properties,
    judge_run,
    write_tables,
)
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.runs.run_inputs import error_model_identities, filter_identity

RUNS_DIR = "runs"
DEFAULT_MARGIN = 1.25
#: The largest margin taken (thresholds at most ten times the largest fault-free deviation): a margin of 1e300
#: turned every detector off without a word (0 % detected, exit 0)
MAX_MARGIN = 10.0


@dataclass(frozen=True)
class HazardRequest:
    """What to run.

    Attributes:
        config_path: The case-study configuration.
        suite_paths: Suites (Parquet).
        out_dir: The hazard run directory.
        scenarios: Scenario names of the library (empty: all).
        library: The scenario library file.
        workers: Worker processes per campaign (None: every core).
        resume: Continue the runs stored in ``out_dir``.
        validate: The state validator (None: the configuration's).
        settings: Thresholds to use (None: derive them).
        margin: Derived thresholds = largest fault-free value x margin.
        calibration: A fault-free campaign run directory to derive them from (None: this run's fault-free run).
        mitigate: Every run (fault-free too) with the detector in the loop and stop on alarm under ``supervisor``:
            the thresholds must be known before the cases run (``settings`` or ``calibration``).
        supervisor: The task supervisor's configuration of a mitigated run.
        filters: Layers around the robots of every campaign, innermost first (e.g. the virtual twin with learned
            errors injected, ``errors``); a scenario's ``hazards`` filter goes around the physical robot's.
    """

    config_path: Path
    suite_paths: tuple[Path, ...]
    out_dir: Path
    scenarios: tuple[str, ...] = ()
    library: str = "config/hazards.yaml"
    workers: int | None = None
    resume: bool = False
    validate: bool | None = None
    settings: DetectorSettings | None = None
    margin: float = DEFAULT_MARGIN
    calibration: Path | None = None
    mitigate: bool = False
    supervisor: str = "config/supervisor/supervisor.yaml"
    filters: tuple[FilterSpec, ...] = ()


def chosen_scenarios(request: HazardRequest) -> list[Scenario]:
    """The scenarios to run, in library order (all of them for no name or ``all``; none for ``none``).

    Args:
        request: The hazard run; its ``library`` is read and its ``scenarios`` names chosen from it.

    Raises:
        InputError: An unknown name (the message lists the library's).
    """
    library = load_library(request.library)
    if request.scenarios == ("none",):  # the fault-free run alone (false alarms, thresholds)
        return []
    names = [n for n in request.scenarios if n != "all"]
    unknown = [n for n in names if n not in library]
    if unknown:
        raise InputError(f"--scenarios: unknown scenario {unknown[0]!r}; scenarios: {', '.join(library)}")
    return [s for n, s in library.items() if not names or n in names]


def run_hazards(request: HazardRequest) -> Path:
    """Run every campaign (skipping the stored cases on resume), then the detector; the tables' path.

    Args:
        request: What to run: the fault-free campaign, then one per chosen scenario, under ``request.out_dir``.

    Raises:
        InputError: An unknown scenario, an ``out_dir`` that is not empty without ``resume``, a margin not above 1,
            a calibration that is no campaign run directory, or a mitigated run without thresholds.
    """
    scenarios = chosen_scenarios(request)
    if request.out_dir.exists() and not request.resume and any(request.out_dir.iterdir()):
        raise InputError(f"--out {str(request.out_dir)!r} already exists; add --resume to continue it")
    _check_derivation(request)
    config = load_config(request.config_path)
    kinematics = RobotConfig.from_config(config["robot"]).kinematics  # read once for both checks
    _check_calibration(request, kinematics)
    _check_scenarios(request, scenarios, config, kinematics)
    loop: dict[str, Any] = {}
    if request.mitigate:
        supervisor = str(resolve_resource(request.supervisor))
        loop = {"detector": format_detector(_loop_settings(request)), "stop_on_alarm": True, "supervisor": supervisor}
    for name in (FAULT_FREE, *(s.name for s in scenarios)):
        out = request.out_dir / RUNS_DIR / name
        spec = FilterSpec(RobotRole.PHYSICAL, "hazards", f"{name}@{request.library}")
        filters = request.filters if name == FAULT_FREE else (*request.filters, spec)
        run_campaign(
            CampaignRequest(
                config_path=request.config_path,
                suite_paths=request.suite_paths,
                out_dir=out,
                backends=("virtual", "physical"),
                workers=request.workers,
                resume=out.exists(),
                validate=request.validate,
                filters=filters,
                **loop,
            )
        )
    return analyse(request, scenarios)


def reanalyse(request: HazardRequest) -> Path:
    """The detector over the runs stored in ``request.out_dir`` again (``--reanalyse``); the tables' path.

    The request's filters must be those the stored runs were made with, and a calibration is checked as before a
    run: a reanalysis with other filters, or with another twin's thresholds, judged the stored runs with them.

    Args:
        request: The hazard run: its run directory, filters, thresholds (or margin and calibration) and scenarios.

    Raises:
        InputError: Other filters than the stored runs', or a calibration :func:`run_hazards` would refuse.
    """
    scenarios = chosen_scenarios(request)
    _check_derivation(request)
    _check_library_unchanged(request, scenarios)
    with ResultsDB.open(_results(request.out_dir / RUNS_DIR / FAULT_FREE)) as db:
        meta = db.meta()
    problem = _other_robots(meta, _filter_texts(request.filters))
    if problem:
        raise InputError(
            f"--filter: the runs in {str(request.out_dir)!r} were made with {problem}; give their filters (or none, "
            "as they were made)"
        )
    config = load_config(request.config_path)
    _check_calibration(request, RobotConfig.from_config(config["robot"]).kinematics)
    return analyse(request, scenarios)


def _check_library_unchanged(request: HazardRequest, scenarios: list[Scenario]) -> None:
    """Refuse to label stored runs with a library edited since they were made.

    The tables name each scenario as the library defines it now, and the detection beside it was measured on the
    runs made with the library as it was (an offset of 0.03 rad run, 0.0001 rad written, 100 % detected).

    Raises:
        InputError: A scenario's run was made with another version of the library (its stored digest differs).
    """
    library = resolve_resource(request.library)
    now = config_digest(library)
    for scenario in scenarios:
        with ResultsDB.open(_results(request.out_dir / RUNS_DIR / scenario.name)) as db:
            files = db.meta().get("input_files") or {}
        made_with = [entry for role, entry in files.items() if role.startswith("hazards_")]
        if made_with and made_with[0][1] != now:
            raise InputError(
                f"--library {library}: edited since the run of {scenario.name!r} was made; --reanalyse would label "
                "its stored cases with the scenario as written now: run it again (another --out, or --resume for "
                "an unchanged library)"
            )


def _other_robots(meta: Mapping[str, Any], given: list[str]) -> str:
    """How a stored run's robots differ from those ``given`` filters make, or "" if they are the same.

    The same filters (``robot=KIND:OPTIONS`` each, innermost first), an error model under another path whose file is
    the same included; and each error model's content what it was when the run was made (the run's meta keeps its
    SHA-256 since this version), so that a model replaced behind the same path is another twin.

    Args:
        meta: The stored run's meta (``filters``, ``error_models``).
        given: This run's filters.
    """
    stored = list(meta.get("filters") or [])
    if [filter_identity(text) for text in stored] != [filter_identity(text) for text in given]:
        return f"{', '.join(stored) or 'no filter'}, not {', '.join(given) or 'no filter'}"
    kept, now = meta.get("error_models"), error_model_identities(given)
    if kept is not None and kept != now:
        return f"error models that were replaced since ({', '.join(kept)}; now {', '.join(now)})"
    return ""


def _filter_texts(filters: tuple[FilterSpec, ...]) -> list[str]:
    """The filters as a run's meta stores them (``robot=KIND:OPTIONS``)."""
    return [f"{f.robot.label}={f.text}" for f in filters]


def _check_derivation(request: HazardRequest) -> None:
    """What the derivation of the thresholds would refuse after every campaign ran, checked before the first.

    Raises:
        InputError: A margin not a finite number above 1, or a calibration that is no campaign run directory.
    """
    if not (math.isfinite(request.margin) and 1.0 < request.margin <= MAX_MARGIN):
        raise InputError(
            f"--margin: expected a number > 1 and at most {MAX_MARGIN:g} (thresholds = fault-free maxima x margin), "
            f"got {request.margin!r}"
        )
    if request.calibration is not None and not (request.calibration / "results.sqlite").is_file():
        raise InputError(
            f"--calibration {str(request.calibration)!r}: no results.sqlite (expected a fault-free "
            "campaign run directory)"
        )


def _check_calibration(request: HazardRequest, kinematics: Kinematics) -> None:
    """Derive the thresholds from a ``--calibration`` run now, before the first campaign.

    A damaged or foreign database was refused only after every campaign had run.
    """
    if request.calibration is not None:
        with ResultsDB.open(_results(request.calibration)) as db:
            derive_settings(db, kinematics, request.margin)
            meta = db.meta()
        problem = _other_robots(meta, _filter_texts(request.filters))
        if problem:  # thresholds hold for the robots they were derived from
            raise InputError(
                f"--calibration {str(request.calibration)!r}: its robots were seen through {problem}; "
                "thresholds hold for the robots they were derived from: calibrate with the same --filter"
            )


def _check_scenarios(
    request: HazardRequest, scenarios: list[Scenario], config: ConfigNode, kinematics: Kinematics
) -> None:
    """Build each chosen scenario's filter for the configured arm before the first campaign.

    A scenario that names a joint the arm does not have was refused only when its own campaign began, after the
    others had run and left their run directories.

    Raises:
        InputError: A scenario the arm cannot run, naming the library file.
    """
    from cosim_validation.common.exceptions import CosimError
    from cosim_validation.robots.filters.robot_filters import check_filters

    roles = (RobotRole.VIRTUAL, RobotRole.PHYSICAL)
    user = [(f.robot.label, f.text) for f in request.filters]
    if any(f.kind == "hazards" for f in request.filters):
        raise InputError("--filter: a hazard run adds each scenario's hazards filter itself; leave hazards out")
    check_filters(config, user, roles, kinematics)
    for scenario in scenarios:
        try:
            check_filters(
                config, [*user, ("physical", f"hazards:{scenario.name}@{request.library}")], roles, kinematics
            )
        except CosimError as exc:
            library = str(resolve_resource(request.library))
            message = str(exc) if library in str(exc) else f"{library}: {exc}"
            raise InputError(message) from None


def _loop_settings(request: HazardRequest) -> DetectorSettings:
    """The thresholds of a mitigated run, known before its cases run (as the loop will read them back).

    Raises:
        InputError: Neither set nor a calibration run to derive them from.
    """
    settings = request.settings
    if settings is None and request.calibration is None:
        raise InputError(
            "--mitigate: the detector in the loop needs its thresholds first: --calibration or --threshold-mm"
        )
    if settings is None:
        assert request.calibration is not None
        config = load_config(request.config_path)
        with ResultsDB.open(_results(request.calibration)) as db:
            settings = derive_settings(db, RobotConfig.from_config(config["robot"]).kinematics, request.margin)
    return parse_detector(format_detector(settings))


def analyse(request: HazardRequest, scenarios: list[Scenario]) -> Path:
    """The detector over the stored runs of ``request.out_dir``; writes and returns ``hazards.sqlite``.

    Args:
        request: The hazard run: its configuration, run directory, thresholds (or margin and calibration to derive
            them) and whether it was mitigated.
        scenarios: The scenarios whose runs are judged after the fault-free one, in this order.
    """
    config = load_config(request.config_path)
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    period_s = 1.0 / config["planning"]["sampling_rate_hz"].to_float(exclusive_minimum=0.0)
    runs = request.out_dir / RUNS_DIR
    settings, source = request.settings, "set"
    if settings is None:
        calibration = request.calibration or runs / FAULT_FREE
        with ResultsDB.open(_results(calibration)) as db:
            settings = derive_settings(db, kinematics, request.margin)
        source = f"derived: fault-free maxima of {calibration} x {request.margin:g}"
    if request.mitigate:  # the loop's thresholds, as it read them
        settings, source = _loop_settings(request), f"{source}; mitigated: stop on alarm"
    with ResultsDB.open(_results(runs / FAULT_FREE)) as db:
        clean = holding_properties(db)
        cases, windows = judge_run(db, kinematics, None, settings, clean)
    for scenario in scenarios:
        with ResultsDB.open(_results(runs / scenario.name)) as db:
            more_cases, more_windows = judge_run(db, kinematics, scenario, settings, clean, _warn_stderr)
        cases += more_cases
        windows += more_windows
    path = request.out_dir / HAZARDS_FILE
    write_tables(path, scenarios, settings, source, cases, windows, period_s)
    return path


def _warn_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _results(run_dir: Path) -> Path:
    path = run_dir / "results.sqlite"
    if not path.is_file():
        raise InputError(f"{run_dir}: no results.sqlite (expected a campaign run directory)")
    return path
