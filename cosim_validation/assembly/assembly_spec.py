"""What a case is made of (:class:`AssemblySpec`) and which controller it tests (:func:`controller_name`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.controllers import CONTROLLER_NAMES
from cosim_validation.controllers.plugin_loader import entry_points, plugin_of_name


@dataclass(frozen=True)
class AssemblySpec:
    """What a case is made of; small, picklable (sent to workers) and stored with every run.

    Attributes:
        config_path: The case-study configuration file.
        engines: Robots run in-process (batch), by registry name (``mujoco``, ``pybullet``, ``emulated``);
            empty where the robots are ROS drivers (the controller node) or there are none (the monitor).
        controller: Controller under test; None for ``controllers.default``.
        validate: Check every setpoint with the state validator; None for ``validator.enabled``.
        properties_path: The property file; None for ``campaign.properties`` of the configuration.
        robot_seed: Seed of an emulated physical arm (its drawn geometry and masses); None for
            ``backends.emulated.seed``.
        filters: ``(robot, KIND:OPTIONS)`` of every layer around an in-process robot (injected errors, hazards,
            a fixed offset; :mod:`~cosim_validation.robots.filters.robot_filters`), innermost first.
        supervisor: The task supervisor's configuration every case runs under (docs/SUPERVISOR.md); None for
            ``campaign.supervisor`` of the configuration (absent: no supervisor, the plan is streamed as planned).
        supervisor_scenario: A scenario file (scripted requests, faults, teleoperation) for the supervisor; None
            for the supervisor configuration's ``scenario``.
        supervisor_files: (role, path) of a run's copies of the supervisor's files, read in place of the files the
            configuration and the scenario name (:mod:`~cosim_validation.runs.run_supervision`).
        config_base_dir: Folder of relative paths in the configuration; None for its own folder (a run
            directory's copy of a configuration gives the original's, see :mod:`~cosim_validation.runs.run_inputs`).
        detector: The hazard detector's thresholds in the loop (``[tip_mm=X][,joint=Y][,tracker_mm=Z][,progress=P]``,
            :func:`~cosim_validation.hazards.hazard_watch.parse_detector`); None: no detector in the loop.
        stop_on_alarm: Mitigation: a detector alarm is an exception of the task supervisor (needs both).
    """

    config_path: str
    engines: tuple[str, ...] = ()
    controller: str | None = None
    validate: bool | None = None
    properties_path: str | None = None
    robot_seed: int | None = None
    config_base_dir: str | None = None
    filters: tuple[tuple[str, str], ...] = ()
    supervisor: str | None = None
    supervisor_scenario: str | None = None
    supervisor_files: tuple[tuple[str, str], ...] = ()
    detector: str | None = None
    stop_on_alarm: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Plain values (JSON), as stored in a run's metadata."""
        pairs = {name: [list(p) for p in getattr(self, name)] for name in ("filters", "supervisor_files")}
        return asdict(self) | {"engines": list(self.engines)} | pairs

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AssemblySpec:
        """The inverse of :meth:`to_dict`.

        Args:
            data: Plain values as :meth:`to_dict` gives them (a run's metadata); ``config_path`` is required, a
                missing other key takes its default.
        """
        return cls(
            config_path=str(data["config_path"]),
            engines=tuple(data.get("engines", ())),
            controller=data.get("controller"),
            validate=data.get("validate"),
            properties_path=data.get("properties_path"),
            robot_seed=data.get("robot_seed"),
            config_base_dir=data.get("config_base_dir"),
            filters=tuple((str(r), str(t)) for r, t in data.get("filters", ())),
            supervisor=data.get("supervisor"),
            supervisor_scenario=data.get("supervisor_scenario"),
            supervisor_files=tuple((str(r), str(p)) for r, p in data.get("supervisor_files", ())),
            detector=data.get("detector"),
            stop_on_alarm=bool(data.get("stop_on_alarm", False)),
        )


def controller_name(name: str | None, config: ConfigNode) -> str:
    """The controller to test: ``name``, or ``controllers.default`` of the configuration.

    Args:
        name: The controller asked for (a built-in name, an installed entry point's name or an import path
            ``module:attribute``); None for the configuration's default.
        config: The case-study configuration (its ``controllers`` section gives the default).

    Raises:
        InputError: An unknown name (the message lists the controllers).
    """
    from cosim_validation.controllers import ControllersConfig

    default = ControllersConfig.from_config(config["controllers"]).default
    chosen = default if name is None else name
    if chosen != default and chosen not in CONTROLLER_NAMES and plugin_of_name(chosen) is None:
        known = ", ".join((*CONTROLLER_NAMES, *sorted(entry_points())))
        raise InputError(f"unknown controller {name!r}; expected one of: {known} or an import path module:attribute")
    return chosen
