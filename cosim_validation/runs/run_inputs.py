"""A run directory carries the files that produced it.

These are copies of the configuration, properties and graph (and, for a supervised run, of the supervisor's
configuration, machine, needle force model, scenario and teleoperation script). The behaviour machine files a
property file names are copied beside its copy, and the copy names those.

``cosim campaign`` and ``cosim session`` copy them into ``RUN/inputs/`` when the run starts, beside a manifest
(``RUN/inputs.json``: each file's role, its original path relative to the run directory, the copy and its SHA-256;
no absolute path of the machine is kept). Whatever later reads the
run (``cosim report``, ``--resume``, ``cosim replay``, the session's completion from its bag) reads the copies,
so editing a configuration after a run cannot change what the run says. Relative paths inside a copy (the URDF,
mesh files, the property file) are still resolved from the original's folder, recorded in the manifest.

A run made before the copies existed is read with the files as they are now, and a warning names them.
A supervised run's copies of the supervisor's files are read back through
:mod:`~cosim_validation.runs.run_supervision` (a campaign's workers, a resume, ``cosim supervisor ... RUN``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cosim_validation.assembly.monitor_world import MonitorWorld, monitor_world
from cosim_validation.common.config import ConfigNode, load_case_config, load_config, load_json_file
from cosim_validation.common.config.bounded_file import regular_file_problem
from cosim_validation.common.exceptions import ConfigError, CosimError, InputError

if TYPE_CHECKING:
    from cosim_validation.assembly.supervision import CheckedSupervision

INPUTS_DIR = "inputs"
MANIFEST = "inputs.json"
#: The roles of a supervised run's files: the supervisor configuration, machine, the machine's LTL goals, needle
#: force model, scenario and teleoperation script.
SUPERVISOR_ROLES = (
    "supervisor",
    "supervisor_machine",
    "supervisor_goals",
    "needle_force",
    "supervisor_scenario",
    "teleoperation",
)
#: The roles of a run's inputs: the case study, the monitor's properties, the session graph and the supervisor's.
ROLES = ("config", "properties", "graph", *SUPERVISOR_ROLES)


@dataclass(frozen=True)
class RunInput:
    """One file a run was made with.

    Attributes:
        role: ``config`` (case study), ``properties`` (monitor), ``graph`` (session nodes), or one of a supervised
            run's files (``supervisor``, ``supervisor_machine``, ``supervisor_goals``, ``needle_force``,
            ``supervisor_scenario``, ``teleoperation``).
        original: Its path when the run started, relative to the run directory (:func:`portable_path`).
        copy: The copy, relative to the run directory.
        sha256: Hex SHA-256 of its content.
    """

    role: str
    original: str
    copy: str
    sha256: str


def file_sha256(path: Path) -> str:
    """Hex SHA-256 of a file's bytes.

    Args:
        path: The file.
    """
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def filter_identity(text: str) -> str:
    """A filter ``robot=KIND:OPTIONS``, its error model named by the file's content when the file is there.

    Two runs' filters make the same robot when their identities are equal: an error model under another path with
    the same bytes is the same twin, and one replaced behind the same path is another.

    Args:
        text: The filter as a run's meta stores it.
    """
    from cosim_validation.error_injection.injection import parse_errors_options
    from cosim_validation.robots.filters.robot_filters import FilterSpec

    try:
        spec = FilterSpec.parse(text)
        model = parse_errors_options(spec.options)[0] if spec.kind == "errors" else None
    except CosimError:
        return text
    if model is None or not model.is_file():
        return text
    return f"{spec.robot.label}=errors:sha256={file_sha256(model)}"


def error_model_identities(texts: list[str]) -> list[str]:
    """:func:`filter_identity` of each error-model filter of ``texts`` (``robot=KIND:OPTIONS``), in order.

    Args:
        texts: A run's filters.
    """
    return [filter_identity(text) for text in texts if text.partition("=")[2].startswith("errors:")]


def portable_path(run_dir: str | Path, path: str | Path) -> str:
    """``path`` as a run keeps it: relative to the run directory.

    No absolute path of this machine is stored that way, and the same inputs beside two run directories give the same
    metadata.

    Args:
        run_dir: The run directory.
        path: The file, absolute or relative to the working directory.
    """
    return os.path.relpath(Path(path).resolve(), Path(run_dir).resolve())


def kept_path(run_dir: str | Path, stored: str | Path) -> Path:
    """The file named by a path a run keeps.

    Kept paths are relative to the run directory; runs of older versions kept absolute paths, which are taken as they
    are.

    Args:
        run_dir: The run directory.
        stored: The path as the run keeps it: relative to ``run_dir``, or absolute (an older run).
    """
    path = Path(stored)
    return path if path.is_absolute() else Path(os.path.normpath(Path(run_dir).resolve() / path))


def capture_inputs(run_dir: Path, files: Mapping[str, Path]) -> dict[str, RunInput]:
    """Copy ``files`` (role -> path) into ``run_dir/inputs/`` and write the manifest; return the entries.

    Args:
        run_dir: The run directory (``inputs/`` is made in it, the manifest written beside).
        files: The files the run is made with, by role (one of :data:`ROLES`).

    Raises:
        InputError: An unknown role or a missing file.
    """
    entries: dict[str, RunInput] = {}
    folder = Path(run_dir) / INPUTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for role, path in files.items():
        if role not in ROLES:
            raise InputError(f"unknown run input role {role!r}; expected one of: {', '.join(ROLES)}")
        source = Path(path).resolve()
        problem = regular_file_problem(source)
        if problem is not None:  # /dev/null was "no such file"
            raise InputError(f"{path}: {'no such file' if problem == 'not found' else problem} (the run's {role})")
        copy = folder / f"{role}-{source.name}"
        if role == "properties":
            _copy_properties(source, copy)
        else:
            shutil.copyfile(source, copy)
        entries[role] = RunInput(
            role, portable_path(run_dir, source), str(copy.relative_to(run_dir)), file_sha256(copy)
        )
    _write_json(Path(run_dir) / MANIFEST, {role: asdict(entry) for role, entry in entries.items()})
    return entries


def _copy_properties(source: Path, copy: Path) -> None:
    """Copy a property file so that the copy reads alone: each machine file it names is copied beside it.

    A ``machines:`` entry that is a file (relative to the property file's folder, or absolute) is copied to
    ``<copy stem>-machine-<i>-<name>`` and the copy names that instead, so a run's readers (its workers, a resume,
    ``cosim report``, the session's completion) find the machines the run was made with, from the copy's folder.
    A property file without machine files is copied byte for byte.

    Args:
        source: The property file.
        copy: Where its copy goes (in the run's ``inputs/``).
    """
    import yaml

    from cosim_validation.common.config.bounded_file import load_yaml_file
    from cosim_validation.monitor.properties.machines.behaviours import is_path

    tree = load_yaml_file(source)
    machines = tree.get("machines") if isinstance(tree, dict) else None
    files = [i for i, ref in enumerate(machines or ()) if isinstance(ref, str) and is_path(ref)]
    if not files:
        shutil.copyfile(source, copy)
        return
    kept = list(machines)  # type: ignore[arg-type]
    for i in files:
        machine = Path(kept[i]) if Path(kept[i]).is_absolute() else source.parent / kept[i]
        problem = regular_file_problem(machine)
        if problem is not None:  # a FIFO here was "does not exist"
            raise InputError(f"{source}: machines[{i}]: behaviour machine file {str(machine)!r}: {problem}")
        target = copy.with_name(f"{copy.stem}-machine-{i}-{machine.name}")
        shutil.copyfile(machine, target)
        kept[i] = target.name
    copy.write_text(yaml.safe_dump({**tree, "machines": kept}, sort_keys=False), encoding="utf-8")


def supervision_files(
    config_path: str | Path | None, scenario_path: str | Path | None, checked: CheckedSupervision | None = None
) -> dict[str, Path]:
    """Every file a supervised run reads, by run-input role; {} without a supervisor.

    The roles: the supervisor configuration, its machine, the machine's goals (if it names them), the needle force
    model, the scenario and its teleoperation script.

    Args:
        config_path: The supervisor configuration, or None.
        scenario_path: A scenario in place of the configuration's, or None.
        checked: What :func:`~cosim_validation.assembly.supervision.check_supervision` read of the same files
            (they are not read again); None: they are read here.
    """
    from cosim_validation.common.config import resolve_resource
    from cosim_validation.monitor.statechart.loader import load_machine
    from cosim_validation.supervisor.supervisor_inputs import supervisor_inputs

    if config_path is None:
        return {}
    if checked is None:
        config, scenario = supervisor_inputs(config_path, scenario_path)
        goals = load_machine(config.machine_path).goals_file
    else:
        config, scenario, goals = checked.config, checked.scenario, checked.machine.goals_file
    files = {"supervisor": Path(resolve_resource(config_path)), "supervisor_machine": config.machine_path}
    if goals and Path(goals).is_file():  # only `cosim supervisor check` reads it: a missing one is not the run's
        files["supervisor_goals"] = Path(goals)
    files["needle_force"] = config.needle_force_path
    if scenario is not None:
        files["supervisor_scenario"] = Path(scenario.source)
        if scenario.teleoperation_path is not None:
            files["teleoperation"] = scenario.teleoperation_path
    return files


def _write_json(path: Path, data: object) -> None:
    """Write JSON atomically (a reader never sees half a file)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(partial, path)


def read_manifest(run_dir: Path) -> dict[str, RunInput]:
    """The run's recorded inputs ({} for a run made before they were recorded).

    Args:
        run_dir: The run directory.

    Raises:
        InputError: A manifest that is not the expected JSON.
    """
    path = Path(run_dir) / MANIFEST
    if not path.is_file():
        return {}
    try:
        data = load_json_file(path)
        manifest = {role: RunInput(**entry) for role, entry in data.items()}
    except (AttributeError, TypeError) as exc:
        raise InputError(f"{path}: not a run-input manifest ({exc})") from None
    except ConfigError as exc:
        raise InputError(f"{path}: not a run-input manifest ({exc.message})") from None
    for role, entry in manifest.items():  # a copy of None was a traceback; '../../x' was read outside the run
        for name in ("original", "copy", "sha256"):
            if not isinstance(getattr(entry, name), str):
                raise InputError(f"{path}: {role}.{name} holds {getattr(entry, name)!r}, expected a text")
        parts = Path(entry.copy).parts
        if Path(entry.copy).is_absolute() or len(parts) < 2 or parts[0] != INPUTS_DIR or ".." in parts:
            raise InputError(
                f"{path}: {role}.copy holds {entry.copy!r}, expected a file in the run's {INPUTS_DIR}/ folder "
                "(the file was changed outside cosim: restore it)"
            )
    return manifest


def run_input_path(
    run_dir: Path, role: str, fallback: str | Path | Callable[[], Path] | None, warn: Callable[[str], None]
) -> tuple[Path | None, Path | None]:
    """The file the run was made with for ``role``, and the folder its relative paths are taken from.

    The run's copy when there is one. Otherwise ``fallback`` (the path the run names, or a default) as it is
    now, after a warning that says so; (None, None) when there is nothing to fall back on.

    Args:
        run_dir: The run directory.
        role: The input's role (one of :data:`ROLES`), e.g. ``config``.
        fallback: The file to read when the run kept no copy, or None; a callable is asked for it only then (a
            configuration's path may not resolve where the run has its copy: a moved run directory).
        warn: Called with each warning: a copy changed or missing, a fallback read as it is now.
    """
    entry = read_manifest(run_dir).get(role)
    if entry is not None:
        copy = Path(run_dir) / entry.copy
        if copy.is_file():
            if file_sha256(copy) != entry.sha256:
                warn(f"{copy}: changed since the run was made (SHA-256 differs from {MANIFEST}); reading it anyway")
            return copy, kept_path(run_dir, entry.original).parent
        warn(f"{copy}: the run's copy of its {role} is missing")
    if fallback is None:
        return None, None
    path = Path(fallback() if callable(fallback) else fallback)
    warn(f"{run_dir}: no copy of the run's {role}; assuming {path} as it is now")
    return path, None


def load_run_config(
    run_dir: Path, role: str, fallback: str | Path | None, warn: Callable[[str], None]
) -> ConfigNode | None:
    """:func:`run_input_path`'s file, loaded (relative paths from the original's folder).

    Args:
        run_dir: The run directory.
        role: The input's role: ``config`` is loaded as a case-study configuration, any other as a plain
            configuration file.
        fallback: The file to read when the run kept no copy, or None.
        warn: Called with each warning (:func:`run_input_path`).

    Returns:
        The configuration; None when there is no file to read.
    """
    path, base = run_input_path(run_dir, role, fallback, warn)
    if path is None:
        return None
    return load_case_config(path, base or "") if role == "config" else load_config(path, base or "")


def run_monitor_world(
    run_dir: Path,
    config_fallback: str | Path | None,
    properties_fallback: str | Path | None,
    warn: Callable[[str], None],
) -> MonitorWorld | None:
    """The monitor's world of a run, from its copies (else the fallbacks, with a warning); None without a config.

    Args:
        run_dir: The run directory.
        config_fallback: The case-study configuration to read when the run kept no copy, or None.
        properties_fallback: The properties file to read when the run kept no copy; None: ``campaign.properties``
            of the configuration.
        warn: Called with each warning (:func:`run_input_path`).
    """
    from cosim_validation.assembly.campaign_config import CampaignConfig

    config = load_run_config(run_dir, "config", config_fallback, warn)
    if config is None:
        return None

    # the configuration's own properties only without the run's copy: it names them relative to the original's
    # folder, which is not there once the run directory has moved (a copied run's replay failed on it)
    def configured() -> Path:
        return CampaignConfig.from_config(config["campaign"]).properties_path

    fallback = properties_fallback if properties_fallback is not None else configured
    properties, _ = run_input_path(run_dir, "properties", fallback, warn)
    assert properties is not None
    return monitor_world(config, properties)
