"""The one place a case is put together, for every mode.

A :class:`CaseAssembly` is built once per process from an :class:`AssemblySpec` (configuration file,
robots, controller, validation, property file): the case study (robot, anatomy, planner, controllers,
state validator), the robots a case runs on (built by the backend registry, with whatever wraps them),
and the monitor's world (properties, KPIs, machines, obstacles, self-collision). Every mode uses it:

- ``cosim campaign`` and ``cosim run-case``: :meth:`CaseAssembly.run_batch` drives in-process robots through
  the lockstep loop and :meth:`CaseAssembly.check` evaluates the records offline;
- a live session: the controller node runs the same :class:`~cosim_validation.assembly.lockstep.Lockstep`
  over ROS driver links (:meth:`CaseAssembly.lockstep`), each driver node answers with the robot
  :meth:`CaseAssembly.robot` builds, and the monitor node, ``cosim replay`` and ``cosim check`` use the
  assembly's :class:`~cosim_validation.assembly.monitor_world.MonitorWorld`.

So a case is planned, validated, executed and monitored the same way live, in batch and on replay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cosim_validation.assembly.assembly_spec import AssemblySpec, controller_name
from cosim_validation.assembly.batch_records import batch_records
from cosim_validation.assembly.campaign_config import CampaignConfig
from cosim_validation.assembly.case_outcome import conclude_verdicts
from cosim_validation.assembly.lockstep import CaseListener, CaseRun, Lockstep, LockstepSettings, SessionClock
from cosim_validation.assembly.monitor_world import MonitorWorld, monitor_world
from cosim_validation.assembly.record_check import RecordReport, check_records
from cosim_validation.assembly.robot_port import BackendPort, RobotPort
from cosim_validation.assembly.robots import build_robot
from cosim_validation.assembly.spec_check import RunChoices, check_choices
from cosim_validation.assembly.supervision import Supervision
from cosim_validation.common.config import ConfigNode, load_case_config
from cosim_validation.common.record import RobotRole, TrajectoryRecord
from cosim_validation.controllers import Controller, InsertionSetup
from cosim_validation.controllers.plugin_api import RunLogs
from cosim_validation.controllers.plugin_controllers import ClosedLoopPlugin, release
from cosim_validation.hazards.detector import DetectorSettings
from cosim_validation.hazards.hazard_watch import HazardWatch
from cosim_validation.robots.filters.robot_filter import FilteredBackend, FilterEvent
from cosim_validation.robots.registry import engine
from cosim_validation.robots.robot_backend import RobotBackend
from cosim_validation.supervisor.needle_force import NeedleForceStream
from cosim_validation.supervisor.needle_force_config import load_needle_force
from cosim_validation.testgen import TestCase


@dataclass(frozen=True)
class BatchCase:
    """A case run in-process.

    Attributes:
        run: How it went (outcome, message, plan, samples answered).
        records: The expected record (the plan, as far as it was streamed) first, then one per robot; empty
            when the case never started (refused).
        events: What the robots' filters did during the case, and the alarms of the hazard detector in the loop
            (physical robot, kind ``hazard_alarm``), as it happened: ``(robot, FilterEvent)`` in time order.
    """

    run: CaseRun
    records: tuple[TrajectoryRecord, ...]
    events: tuple[tuple[RobotRole, FilterEvent], ...] = ()


class CaseAssembly:
    """Everything a case needs, built once (seconds: meshes, models, engines).

    Args:
        spec: What to build.

    Raises:
        ConfigError, InputError: Bad configuration or request (naming file and key).
    """

    def __init__(self, spec: AssemblySpec) -> None:
        self.spec = spec
        self.config: ConfigNode = load_case_config(spec.config_path, spec.config_base_dir or "")
        self.campaign = CampaignConfig.from_config(self.config["campaign"], spec.properties_path)
        self.controller_name = controller_name(spec.controller, self.config)  # fail before the build
        self.setup = InsertionSetup.from_config(self.config)
        choices = check_choices(spec, self.config, self.campaign, self.setup.robot.kinematics)  # as check_spec
        self.validate = self.setup.validator_settings.enabled if spec.validate is None else bool(spec.validate)
        collision = self.setup.planner.checker.self_collision  # one model of the arm for planner and monitor
        self.monitor: MonitorWorld = monitor_world(
            self.config,
            self.properties_path,
            kinematics=self.setup.robot.kinematics,
            scene=self.setup.scene,
            collision=collision,
        )
        self._backends: tuple[RobotBackend, ...] | None = None
        self._controllers: dict[str, Controller | ClosedLoopPlugin] = {}
        #: where the controller under test keeps its logs; set by the mode that runs the cases (a run's logs/)
        self.logs = RunLogs()
        self.controller()  # a plugin is built (and checked) with the case study, before any case
        self.supervision: Supervision | None = self._supervision(choices)
        self.hazard_watch: HazardWatch | None = self._hazard_watch(choices.detector)

    def _supervision(self, choices: RunChoices) -> Supervision | None:
        """The task supervisor of the spec or of ``campaign.supervisor``, built from the files as checked, or None."""
        if choices.supervisor is None or choices.supervision is None:
            return None
        limits = self.setup.robot.limits.velocity
        world, scene = self.setup.world, self.setup.scene
        return Supervision(choices.supervisor, choices.supervision, self.kinematics, world, scene, limits)

    def _hazard_watch(self, settings: DetectorSettings | None) -> HazardWatch | None:
        """The hazard detector in the loop (an alarm source of the supervisor when stopping on alarms), or None.

        Args:
            settings: The detector's thresholds as checked; None: no detector.
        """
        if settings is None:
            return None
        watch = HazardWatch(settings, self.kinematics, self.spec.stop_on_alarm)
        if self.spec.stop_on_alarm and self.supervision is not None:
            self.supervision.alarm_sources.append(watch)
        return watch

    @property
    def properties_path(self) -> Path:
        """The property file the monitor checks."""
        if self.spec.properties_path is not None:
            return Path(self.spec.properties_path)
        return self.campaign.properties_path

    @property
    def kinematics(self) -> Any:
        """The nominal arm and needle."""
        return self.setup.robot.kinematics

    def controller(self, name: str | None = None) -> Controller | ClosedLoopPlugin:
        """The controller ``name`` (None: the assembly's controller under test), built once per assembly.

        Args:
            name: A controller name (a built-in, an entry point or an import path ``module:attribute``); None or ""
                for the assembly's controller under test.
        """
        chosen = name or self.controller_name
        if chosen not in self._controllers:
            built = self.setup.controller(chosen, self.logs)
            if isinstance(built, ClosedLoopPlugin) and built.spec.needle_force is not None:
                model = load_needle_force(built.spec.needle_force, self.setup.scene)
                built.needle_force = lambda: NeedleForceStream(model)
            self._controllers[chosen] = built
        return self._controllers[chosen]

    def robot(self, engine_name: str) -> RobotBackend:
        """A robot of the registry for this case study, through the spec's filters for its role.

        Args:
            engine_name: A registry engine name (``mujoco``, ``pybullet``, ``emulated``, ...); the robot it plays
                (virtual or physical) picks the spec's filters.
        """
        role = engine(engine_name).role.label
        layers = [text for robot, text in self.spec.filters if robot == role]
        return build_robot(self.config, engine_name, self.kinematics, seed=self.spec.robot_seed, filters=layers)

    @property
    def backends(self) -> tuple[RobotBackend, ...]:
        """The in-process robots of :attr:`AssemblySpec.engines`, built on first use."""
        if self._backends is None:
            self._backends = tuple(self.robot(name) for name in self.spec.engines)
        return self._backends

    def lockstep(
        self, ports: Mapping[RobotRole, RobotPort], clock: SessionClock | None = None, drop_lost_robots: bool = True
    ) -> Lockstep:
        """The lockstep loop over ``ports`` with this assembly's validation.

        Args:
            ports: The robots, by role (in-process :class:`BackendPort`, or a controller node's ROS driver links).
            clock: The session clock the cases are stamped on; None: a new one.
            drop_lost_robots: Run later cases without a robot that stopped answering (False: they wait for it and
                abort).
        """
        settings = LockstepSettings(validate=self.validate, drop_lost_robots=drop_lost_robots)
        validator, supervision, watch = self.setup.state_validator, self.supervision, self.hazard_watch
        return Lockstep(self.kinematics, ports, settings, validator, clock, supervision, watch)

    def run_batch(self, case: TestCase, listener: CaseListener | None = None) -> BatchCase:
        """Plan and run ``case`` on the in-process robots; the records of what was executed.

        Args:
            case: The test case (its source and target in base_link [m], its seed).
            listener: Hears the case's events (status, setpoints, progress); None: nobody listens.
        """
        ports = {backend.role: BackendPort(backend) for backend in self.backends}
        self._filter_events()  # nothing left over from a case before
        run = self.lockstep(ports).run(case, self.controller(), listener)
        events = self._filter_events()
        if self.hazard_watch is not None:  # the loop's alarms, among the filters' events in time order
            alarms = ((RobotRole.PHYSICAL, e) for e in self.hazard_watch.events())
            events = tuple(sorted((*events, *alarms), key=lambda pair: pair[1].t_s))
        if not run.started:
            return BatchCase(run, (), events)
        return BatchCase(run, batch_records(run, ports, self.kinematics, case.target_m), events)

    def _filter_events(self) -> tuple[tuple[RobotRole, FilterEvent], ...]:
        """The events of every filtered in-process robot since the last call."""
        return tuple(
            (backend.role, event)
            for backend in self.backends
            if isinstance(backend, FilteredBackend)
            for event in backend.events()
        )

    def check(self, batch: BatchCase, target_m: Any) -> list[RecordReport]:
        """Check every record of ``batch`` as the live monitor concludes it for the case's outcome.

        Verdicts, KPIs and behaviour machines, the plan's record first.

        Args:
            batch: The case's run and records.
            target_m: The case's target in base_link, shape (3,), in [m]; None:
                :func:`~cosim_validation.assembly.record_check.case_target` of the records.
        """
        expected = next((r for r in batch.records if r.robot is RobotRole.EXPECTED), None)
        reports = check_records(self.monitor, batch.records, expected, target_m)
        outcome, message = batch.run.outcome, batch.run.message
        return [replace(r, verdicts=conclude_verdicts(r.verdicts, outcome, message)) for r in reports]

    def close(self) -> None:
        """Release the robots and the controllers.

        A closed-loop controller may hold a process, a planning one a connection to its planner.
        """
        for backend in self._backends or ():
            backend.close()
        for controller in self._controllers.values():
            release(controller)
        self._backends = None
