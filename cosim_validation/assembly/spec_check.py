"""What an assembly will build, checked without building its heavy parts: the one validation of a run's inputs.

:class:`~cosim_validation.assembly.case_assembly.CaseAssembly` builds a case study (anatomy, robot, planner,
engines, properties, the controller under test, the supervisor, the hazard detector) from an
:class:`~cosim_validation.assembly.assembly_spec.AssemblySpec`. A campaign builds it in each worker process; a bad
value found there used to end the campaign with a traceback from a broken process pool, after the results
database had been created. :func:`check_spec` reads and validates every section the assembly reads, without the
collision models and the physics, so a campaign checks its spec here before it touches
its run directory; the checks it shares with the assembly's constructor (:func:`check_choices`: engines, filters,
supervisor, detector) live here too, and the assembly builds its supervisor and detector from what they read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cosim_validation.anatomy import AnatomyScene, load_anatomy
from cosim_validation.assembly.assembly_spec import AssemblySpec, controller_name
from cosim_validation.assembly.campaign_config import CampaignConfig
from cosim_validation.assembly.supervision import CheckedSupervision, check_supervision
from cosim_validation.common.config import ConfigNode, load_case_config
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.controllers import ControllersConfig
from cosim_validation.controllers.insertion_setup import check_needle_reserve
from cosim_validation.controllers.planning import PlanningConfig, ValidatorSettings
from cosim_validation.hazards.detector import DetectorSettings
from cosim_validation.hazards.hazard_watch import check_detector
from cosim_validation.monitor.properties import PropertySet
from cosim_validation.robots.filters.robot_filters import check_filters
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.robots.registry import ENGINES, engine
from cosim_validation.robots.virtual.backends_config import BackendsConfig


@dataclass(frozen=True)
class CheckedSpec:
    """What checking a spec read, for the caller to keep.

    Attributes:
        config: The case configuration.
        campaign: Its ``campaign`` section.
        controller: The controller under test's name (the spec's, or ``controllers.default``).
        scene: The anatomy, with the repairs its models needed.
        controller_kind: What the controller is (:func:`check_controller`).
        properties: The property set the cases are checked with; None when it was not read.
    """

    config: ConfigNode
    campaign: CampaignConfig
    controller: str
    scene: AnatomyScene
    controller_kind: str = "built-in"
    properties: PropertySet | None = None


def engine_roles(engines: Sequence[str]) -> list[RobotRole]:
    """The robot each engine plays, in order.

    Args:
        engines: Engine names (``mujoco``, ``emulated``, ...).

    Raises:
        InputError: An unknown engine, or two engines that play the same robot.
    """
    roles = [engine(name).role for name in engines]
    if len(set(roles)) != len(roles):
        raise InputError(f"two engines play the same robot: {', '.join(engines)}")
    return roles


@dataclass(frozen=True)
class RunChoices:
    """What a spec chooses around its case study that is built from what its check read: supervisor and detector.

    Attributes:
        supervisor: The supervisor's configuration (the spec's, else ``campaign.supervisor``); None: no supervisor.
        supervision: What :func:`check_supervision` read of it; None without a supervisor, or where not checked.
        detector: The hazard detector's thresholds; None without a detector, or where not checked.
    """

    supervisor: str | Path | None
    supervision: CheckedSupervision | None = None
    detector: DetectorSettings | None = None


def check_choices(
    spec: AssemblySpec,
    config: ConfigNode,
    campaign: CampaignConfig,
    kinematics: Kinematics,
    *,
    supervision: bool = True,
) -> RunChoices:
    """The engines, filters, supervisor files and detector of ``spec``: the checks a campaign and an assembly share.

    :func:`check_spec` runs them before a campaign touches its run directory; the assembly's constructor runs
    them before it builds, and builds its supervisor and detector from what they read.

    Args:
        spec: The spec.
        config: Its case configuration.
        campaign: The configuration's ``campaign`` section.
        kinematics: The nominal arm and needle (the filters are built against it).
        supervision: Also the supervisor's files and the detector; False where the caller checks a run's stored
            copies of them instead (a resumed campaign).

    Raises:
        ConfigError, InputError: The first bad value, naming the file and the key.
    """
    roles = engine_roles(spec.engines)
    check_filters(config, spec.filters, roles, kinematics)
    supervisor = spec.supervisor if spec.supervisor is not None else campaign.supervisor_path
    if not supervision:
        return RunChoices(supervisor)
    files = {role: Path(path) for role, path in spec.supervisor_files}
    checked = check_supervision(supervisor, spec.supervisor_scenario, files)
    return RunChoices(supervisor, checked, check_detector(spec.detector, spec.stop_on_alarm, supervisor))


def check_spec(spec: AssemblySpec, *, supervision: bool = True, config: ConfigNode | None = None) -> CheckedSpec:
    """Check every input :class:`~cosim_validation.assembly.case_assembly.CaseAssembly` reads for ``spec``.

    Args:
        spec: The :class:`~cosim_validation.assembly.assembly_spec.AssemblySpec` to check.
        supervision: Also check the supervisor's files and the hazard detector (which names the supervisor); False
            where the caller checks a run's stored copies of them instead (a resumed campaign), and then the
            detector after them.
        config: The case configuration of ``spec.config_path`` if the caller read it already.

    Raises:
        ConfigError, InputError: The first bad value, naming the file and the key.
        MeshDefectError: A model that is not a usable solid, or whose repair removes too much.
    """
    if config is None:
        config = load_case_config(spec.config_path, spec.config_base_dir or "")
    campaign = CampaignConfig.from_config(config["campaign"], spec.properties_path)
    controller = controller_name(spec.controller, config)
    robot = RobotConfig.from_config(config["robot"])
    check_choices(spec, config, campaign, robot.kinematics, supervision=supervision)
    scene = check_world_config(config, spec.engines)
    properties = PropertySet.load(
        Path(spec.properties_path) if spec.properties_path is not None else campaign.properties_path
    )
    kind = check_controller(config, controller)
    return CheckedSpec(config, campaign, controller, scene, kind, properties)


def check_world_config(config: ConfigNode, engines: Sequence[str]) -> AnatomyScene:
    """Validate the sections the assembly reads for ``engines``; return the anatomy (with its repair reports).

    Args:
        config: The case configuration (its ``robot``, ``anatomy``, ``planning``, ``controllers``, ``validator``
            and ``backends`` sections).
        engines: The engines of the run (``emulated`` also checks ``backends.emulated``); the own section of
            an engine with one (``backends.ros2_control``) is checked when the run uses it or the section is there.

    Raises:
        ConfigError, InputError: The first bad value, naming the file and the key.
        MeshDefectError: A model that is not a usable solid, or whose repair removes too much.
    """
    robot = RobotConfig.from_config(config["robot"])
    scene = load_anatomy(config["anatomy"])
    check_needle_reserve(config, robot, PlanningConfig.from_config(config["planning"]))
    ControllersConfig.from_config(config["controllers"])
    ValidatorSettings.from_config(config["validator"])
    n_joints = robot.kinematics.n_joints
    BackendsConfig.from_config(config["backends"], n_joints)
    if "emulated" in engines:
        from cosim_validation.robots.emulated import EmulatedArmConfig

        EmulatedArmConfig.from_config(config["backends"]["emulated"], n_joints)
    for name, known in ENGINES.items():  # a section present is checked even when this run does not use it
        if name in engines or config["backends"].has(name):
            known.check_settings(config["backends"])
    return scene


def check_controller(config: ConfigNode, controller: str) -> str:
    """Build a user's controller plugin once (its factory runs with the options and the case study); say its kind.

    A factory that raises or returns an object without a contract is then an error naming the user's file, not the
    run directory's copy; so is ``moveit``, whose factory waits for move_group's services. The other built-in
    controllers need nothing more than :func:`check_world_config`.

    Args:
        config: The case configuration.
        controller: The controller under test's name (a built-in, an entry point's name or an import path
            ``module:attribute``).

    Returns:
        What it is: ``built-in``, ``MoveIt move_group``, ``planning plugin``, ``closed-loop plugin`` or ``external
        ROS 2 node``.

    Raises:
        ConfigError, InputError: The plugin cannot be built (naming the file and key, or the option).
    """
    from cosim_validation.controllers import CONTROLLER_NAMES, InsertionSetup
    from cosim_validation.controllers.external_spec import ADAPTER_TARGET
    from cosim_validation.controllers.moveit_spec import MOVEIT_NAME
    from cosim_validation.controllers.plugin_controllers import ClosedLoopPlugin, release

    if controller in CONTROLLER_NAMES and controller != MOVEIT_NAME:
        return "built-in"
    setup = InsertionSetup.from_config(config)
    built = setup.controller(controller)  # moveit: waits for move_group's services
    release(built)
    plugin = setup.controllers.plugin
    if controller == MOVEIT_NAME:
        return "MoveIt move_group"
    if plugin is not None and plugin.name == controller and plugin.target == ADAPTER_TARGET:
        return "external ROS 2 node"
    return "closed-loop plugin" if isinstance(built, ClosedLoopPlugin) else "planning plugin"
