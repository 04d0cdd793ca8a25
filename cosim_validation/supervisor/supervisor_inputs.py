"""The supervisor configuration and scenario of a run, with other copies of the files they name.

A run directory keeps copies of the supervisor's files (:mod:`cosim_validation.runs.run_supervision`); the copy
of a configuration still names its machine and needle force model relative to the original's folder, and a
scenario its teleoperation script. :func:`supervisor_inputs` loads both with the copies put in their place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from cosim_validation.common.config import resolve_resource
from cosim_validation.supervisor.scenario import Scenario
from cosim_validation.supervisor.supervisor_config import SupervisorConfig


def supervisor_inputs(
    config_path: str | Path, scenario_path: str | Path | None, files: Mapping[str, Path] | None = None
) -> tuple[SupervisorConfig, Scenario | None]:
    """Load the supervisor configuration and scenario, with ``files`` in place of the files they name.

    ``files`` (role -> path) are a run's copies of the machine, the needle force model, the configuration's
    scenario and the teleoperation script.

    Args:
        config_path: The supervisor configuration (a file with a ``supervisor`` section), relative to the current
            directory or to the package root.
        scenario_path: A scenario file; None: the configuration's ``scenario`` (no scenario if it names none).
        files: A run's copies by role: ``supervisor_machine``, ``needle_force``, ``supervisor_scenario`` (for the
            configuration's scenario) and ``teleoperation`` (for the scenario's script); None or a missing role:
            the file the configuration or scenario names.

    Raises:
        ConfigError, InputError: A bad file (naming it and the key).
    """
    files = files or {}
    config = SupervisorConfig.load(resolve_resource(config_path))
    config = replace(
        config,
        machine_path=files.get("supervisor_machine", config.machine_path),
        needle_force_path=files.get("needle_force", config.needle_force_path),
        scenario_path=files.get("supervisor_scenario", config.scenario_path) if config.scenario_path else None,
    )
    path = scenario_path if scenario_path is not None else config.scenario_path
    scenario = Scenario.load(path) if path is not None else None
    if scenario is not None and scenario.teleoperation_path is not None and "teleoperation" in files:
        scenario = replace(scenario, teleoperation_path=files["teleoperation"])
    return config, scenario
