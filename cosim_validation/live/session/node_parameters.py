"""The parameters of every node, declared once: one frozen, validated struct per node.

Each struct (:class:`~cosim_validation.live.session.parameter_struct.NodeParams`) gives the name, type, default,
description and validation of every parameter of its node. The node declares exactly these with rclpy and gets
the struct of checked values (:func:`cosim_validation.live.nodes.node_runtime.declare_parameters`); ``cosim
session`` and the launch file check the graph YAML against the same declarations before anything starts, so
a typo in a parameter name, a wrong type or a value out of range is a clear error naming the file and key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.config.config_node import MAX_SEED
from cosim_validation.common.exceptions import InputError
from cosim_validation.live.session.parameter_struct import NodeParams, ParamSpec, param

if TYPE_CHECKING:
    from cosim_validation.assembly import AssemblySpec

ROBOTS = ("virtual", "physical")
#: The robots a driver node can host: cosim_validation.robots.registry.HOSTED_NAMES (a test keeps the two equal).
BACKENDS = ("mujoco", "pybullet", "coppeliasim", "emulated")
FLAVOURS = ("", "dvrk", "raven")  # "" = the robot model's flavour
POSITIVE = 0.0  # exclusive minimum of times and lengths

P = TypeVar("P", bound=NodeParams)


@dataclass(frozen=True)
class ConfiguredParams(NodeParams):
    """A node that reads the case-study configuration."""

    config: str = param("config/needle_insertion.yaml", "case-study configuration file", not_empty=True)


@dataclass(frozen=True)
class TestGeneratorParams(ConfiguredParams):
    """test_generator."""

    __test__: ClassVar[bool] = False  # not a pytest class
    executable: ClassVar[str] = "test_generator"
    suite: str = param("", "suite file (Parquet, from cosim testgen)")
    cases: int = param(0, "run N cases of the suite (0 = all)", minimum=0)
    selection: str = param(
        "spread", "which N cases: spread (evenly over the suite) or first", choices=("spread", "first")
    )
    results: str = param("results.sqlite", "results database to create", not_empty=True)
    controller: str = param("", "controller under test; '' = controllers.default of the config")
    robots: tuple[str, ...] = param((), "robots to drive; [] = every robot of the controller", choices=ROBOTS)
    stop_on_abort: bool = param(False, "stop the session after an aborted case (else continue)")
    server_timeout_s: float = param(
        120.0, "time to wait for the controller's action server [s]", exclusive_minimum=POSITIVE, unit="s"
    )


@dataclass(frozen=True)
class ControllerParams(ConfiguredParams):
    """controller (its process also hosts the supervisor node)."""

    executable: ClassVar[str] = "controller"
    process: ClassVar[str] = "controller"
    robots: tuple[str, ...] = param(("virtual", "physical"), "robots driven in every case", choices=ROBOTS)
    publish_clock: bool = param(
        True,
        "be the session clock: publish /clock at every sample and run as fast as the robots answer (false: real time)",
    )
    validate_setpoints: bool | None = param(
        None,
        "check every setpoint with the state validator ([Preda et al. 2016]); unset: validator.enabled of the "
        "configuration",
    )
    stale_timeout_s: float = param(
        3.0,
        "a robot that does not answer a sample this long (wall time) aborts the case [s]; the monitor "
        "reports it stale sooner (monitor.stale_timeout_s), a loaded machine only slows a sim-time session",
        exclusive_minimum=POSITIVE,
        unit="s",
    )
    reset_timeout_s: float = param(10.0, "time allowed for a robot's reset [s]", exclusive_minimum=POSITIVE, unit="s")
    first_reset_timeout_s: float = param(
        60.0,
        "time allowed for each robot's first reset of the session, while the graph's nodes may still be discovering "
        "one another (seconds on a loaded machine); at least reset_timeout_s is allowed [s]",
        exclusive_minimum=POSITIVE,
        unit="s",
    )
    report_timeout_s: float = param(
        5.0,
        "give up waiting for a case's report once the monitor has sent no heartbeat (/diagnostics, once a second) "
        "for this long: it stopped or hangs; a monitor that is alive but behind is waited for [s, wall time]",
        minimum=0.0,
        unit="s",
    )
    report_limit_s: float = param(
        600.0,
        "the longest wait for a case's report, however alive the monitor is [s, wall time]",
        exclusive_minimum=POSITIVE,
        unit="s",
    )
    report_stuck_s: float = param(
        30.0,
        "give up waiting for a case's report once the monitor's heartbeat says its callbacks have not run for this "
        "long: one is stuck (the monitor writes its threads' stacks to its log after 20 s) [s, wall time]",
        exclusive_minimum=POSITIVE,
        unit="s",
    )
    drop_stale_robots: bool = param(True, "after a robot stopped answering, run later cases without it")
    supervisor: str | None = param(
        None,
        "the task supervisor's configuration every case runs under (docs/SUPERVISOR.md); unset: "
        "campaign.supervisor of the configuration (absent as shipped: no supervisor)",
    )
    supervisor_scenario: str | None = param(None, "scripted requests, faults and teleoperation for the supervisor")
    detector: str | None = param(
        None,
        "the hazard detector in the loop, [tip_mm=X][,joint=Y][,tracker_mm=Z][,progress=P] (docs/HAZARDS.md): "
        "alarms on /cosim/hazards/alarms, the feedback force on /cosim/feedback_wrench; unset: none",
    )
    stop_on_alarm: bool = param(False, "a detector alarm is an exception of the task supervisor (mitigation)")
    min_subscribers: int = param(
        2,
        "stream only once the expected-state, command and clock topics and the robots' joint-state and "
        "tip-pose topics have this many subscribers besides the controller (monitor and recorder; driver "
        "and recorder)",
        minimum=0,
    )
    subscriber_timeout_s: float = param(
        10.0, "stream anyway after waiting this long for subscribers [s]", minimum=0.0, unit="s"
    )
    subscriber_settle_s: float = param(
        1.0,
        "before the first case, wait this long after the subscriptions appear in the graph (the data paths "
        "match a little after discovery) [s]",
        minimum=0.0,
        unit="s",
    )
    log_dir: str = param(
        "",
        "folder where the controller under test keeps its logs (an external node's output, one file per start); "
        "'' in a session's graph: the run directory's logs/; '' for a node run alone: none kept",
    )

    def assembly_spec(self) -> AssemblySpec:
        """The case assembly the controller builds from these parameters.

        The node builds it, and ``cosim session`` checks it (check_spec) before any node starts.
        """
        from cosim_validation.assembly import AssemblySpec
        from cosim_validation.common.config import resolve_resource

        return AssemblySpec(
            str(resolve_resource(self.config)),
            validate=self.validate_setpoints,
            supervisor=self.supervisor,
            supervisor_scenario=self.supervisor_scenario,
            detector=self.detector,
            stop_on_alarm=self.stop_on_alarm,
        )


@dataclass(frozen=True)
class SupervisorParams(NodeParams):
    """supervisor: the task supervisor's node, composed into the controller's process (not an executable)."""

    executable: ClassVar[str] = "supervisor"
    process: ClassVar[str] = "controller"
    teleoperation_stale_s: float = param(
        0.5,
        "a teleoperation command older than this (wall time) is no command [s]",
        exclusive_minimum=POSITIVE,
        unit="s",
    )


@dataclass(frozen=True)
class MonitorParams(ConfiguredParams):
    """monitor."""

    executable: ClassVar[str] = "monitor"
    properties: str = param(
        "",
        "properties, KPIs and machines to evaluate; '' = campaign.properties of the configuration (as a campaign)",
    )
    robots: tuple[str, ...] = param(("virtual", "physical"), "robots whose topics are monitored", choices=ROBOTS)
    stale_timeout_s: float = param(
        0.5,
        "a robot silent this long (wall time) while it owes a sample is reported stale [s]; checked every "
        "50 ms, so a dead driver is reported long before the controller aborts its case",
        exclusive_minimum=POSITIVE,
        unit="s",
    )
    case_end_timeout_s: float = param(
        2.0,
        "an ended case waits for late samples until its streams have been quiet this long (wall time) [s]",
        exclusive_minimum=POSITIVE,
        unit="s",
    )


@dataclass(frozen=True)
class MarkersParams(ConfiguredParams):
    """markers."""

    executable: ClassVar[str] = "markers"
    target_diameter_m: float = param(0.004, "diameter of a target sphere [m]", exclusive_minimum=POSITIVE, unit="m")
    anatomy_markers: str = param(
        "both",
        "both | mesh | triangles: MESH_RESOURCE markers with package:// URIs on /cosim/markers/anatomy_mesh "
        "(a model without a matching package file goes there as a triangle list), triangle lists on "
        "/cosim/markers/anatomy (for viewers that cannot resolve package URIs), or both topics",
        choices=("both", "mesh", "triangles"),
    )


@dataclass(frozen=True)
class FoxgloveBridgeParams(ConfiguredParams):
    """foxglove_bridge."""

    executable: ClassVar[str] = "foxglove_bridge"
    host: str = param("127.0.0.1", "address the Foxglove WebSocket server listens on", not_empty=True)
    port: int = param(8765, "port of the Foxglove WebSocket server (0 = any free port)", minimum=0, maximum=65535)
    robots: tuple[str, ...] = param(
        ("virtual", "physical"), "robots whose arm, tip path and deviation are shown", choices=ROBOTS
    )
    topic_prefixes: tuple[str, ...] = param(("/cosim",), "forward every topic starting with one of these")
    extra_topics: tuple[str, ...] = param(("/diagnostics",), "also forward these topics")
    discovery_period_s: float = param(0.2, "how often to look for new topics [s]", exclusive_minimum=POSITIVE, unit="s")
    scene_period_s: float = param(
        0.2, "how often the scene (arms, tip paths) is sent [s]", exclusive_minimum=POSITIVE, unit="s"
    )


@dataclass(frozen=True)
class ProxyParams(ConfiguredParams):
    """robot_proxy: a robot seen through filters (hazard_injector and error_injector are this node too)."""

    executable: ClassVar[str] = "robot_proxy"
    robot: str = param("virtual", "the robot it stands in front of: virtual | physical", choices=ROBOTS)
    filters: tuple[str, ...] = param(
        (),
        "KIND:OPTIONS of every layer around the robot, innermost first (offset, errors, hazards; "
        "cosim_validation.robots.filters.robot_filters)",
    )
    events_topic: str = param("", "where the filters' events go; '' = /cosim/<robot>/events")


@dataclass(frozen=True)
class HazardInjectorParams(ProxyParams):
    """hazard_injector: the robot_proxy node with hazard filters, its events on the hazards topic."""

    executable: ClassVar[str] = "hazard_injector"
    robot: str = param("physical", "the robot it stands in front of: virtual | physical", choices=ROBOTS)
    filters: tuple[str, ...] = param((), "hazards:SCENARIO[@LIBRARY] of every injected scenario (config/hazards.yaml)")
    events_topic: str = param("/cosim/hazards/events", "where the injection windows' start and end go")


@dataclass(frozen=True)
class ErrorInjectorParams(ProxyParams):
    """error_injector: the robot_proxy node with the errors filter of a learned error model."""

    executable: ClassVar[str] = "error_injector"
    robot: str = param("virtual", "the simulated robot it injects the learned errors into", choices=ROBOTS)
    model: str = param("", "the error model file (cosim errors train)", not_empty=True)
    filters: tuple[str, ...] = param((), "KIND:OPTIONS of further layers outside the injected errors")


@dataclass(frozen=True)
class CrtkDriverParams(ConfiguredParams):
    """crtk_driver: a robot's driver talking CRTK to the arm (docs/CRTK.md)."""

    executable: ClassVar[str] = "crtk_driver"
    robot: str = param("physical", "the robot it drives in the graph: virtual | physical", choices=ROBOTS)
    namespace: str = param("/PSM1", "the arm's CRTK namespace (/PSM1 on a dVRK, /arm1 on a Raven-II)", not_empty=True)
    flavour: str = param("", "dvrk | raven; '' = the robot model's (dvrk_psm: dvrk, raven2: raven)", choices=FLAVOURS)
    tracker_namespace: str = param("", "optical tracker's namespace (tip/measured_cp, marker); '' = none")
    emulated: bool = param(False, "the arm is a crtk_emulator: reset through its emulation/reset service")
    enable_timeout_s: float = param(
        30.0, "time for the arm to become ENABLED and homed at start [s]", exclusive_minimum=POSITIVE, unit="s"
    )
    reset_timeout_s: float = param(
        10.0, "time for the arm to reach a case's first setpoint [s]", exclusive_minimum=POSITIVE, unit="s"
    )
    reset_tolerance: float = param(
        1.0e-3, "a real arm is at the reset pose within this [rad, or m]", exclusive_minimum=POSITIVE
    )
    min_subscribers: int = param(
        1,
        "before enabling, wait until state_command has this many matched readers (the arm; 2 in a session: "
        "the arm and the recorder, so the bag holds the start-up commands)",
        minimum=0,
    )
    subscriber_timeout_s: float = param(
        5.0, "enable anyway after waiting this long for readers [s]", minimum=0.0, unit="s"
    )


@dataclass(frozen=True)
class CrtkEmulatorParams(ConfiguredParams):
    """crtk_emulator: an emulated arm serving its CRTK interface (docs/CRTK.md)."""

    executable: ClassVar[str] = "crtk_emulator"
    backend: str = param(
        "emulated", "the arm behind the topics: emulated | mujoco | pybullet | coppeliasim", choices=BACKENDS
    )
    seed: int = param(
        -1, "seed of an emulated arm; -1 = backends.emulated.seed of the config", minimum=-1, maximum=MAX_SEED
    )
    namespace: str = param("/PSM1", "CRTK namespace it serves (/PSM1 on a dVRK, /arm1 on a Raven-II)", not_empty=True)
    flavour: str = param("", "dvrk | raven; '' = the robot model's (dvrk_psm: dvrk, raven2: raven)", choices=FLAVOURS)
    tracker_namespace: str = param("/tracker", "where its optical tracker publishes tip/measured_cp, marker")


@dataclass(frozen=True)
class Ros2ControlDriverParams(ConfiguredParams):
    """ros2_control_driver: a robot's driver talking to a ros2_control controller manager (docs/ROBOTS.md)."""

    executable: ClassVar[str] = "ros2_control_driver"
    robot: str = param("physical", "the robot it drives in the graph: virtual | physical", choices=ROBOTS)
    controller_manager: str = param(
        "/controller_manager", "the controller manager's namespace", not_empty=True, ros_name=True
    )
    controller: str = param(
        "arm_controller", "the joint trajectory controller to command", not_empty=True, ros_name=True
    )
    command_interface: str = param(
        "stream",
        "stream: /<controller>/joint_trajectory; action: follow_joint_trajectory goals",
        choices=("stream", "action"),
    )
    joint_states_topic: str = param(
        "/joint_states", "the joint state broadcaster's topic", not_empty=True, ros_name=True
    )
    tracker_namespace: str = param(
        "", "optical tracker's namespace (tip/measured_cp, marker); '' = none", ros_name=True
    )
    emulated: bool = param(False, "the controller manager is a controller_manager_emulator: reset through it")
    start_timeout_s: float = param(
        10.0,
        "time for the controller manager to answer and /joint_states to come at start [s]",
        minimum=0.1,
        unit="s",
    )
    reset_timeout_s: float = param(
        10.0,
        "time for a reset, and for the arm's answer to a setpoint [s]",
        minimum=0.1,
        unit="s",
    )
    reset_duration_s: float = param(
        3.0, "a real arm moves to a case's first setpoint in this long [s]", minimum=0.1, unit="s"
    )
    reset_tolerance: float = param(
        1.0e-3, "a real arm is at the reset pose within this [rad]", minimum=1.0e-6, maximum=0.1
    )


@dataclass(frozen=True)
class ControllerManagerEmulatorParams(ConfiguredParams):
    """controller_manager_emulator: an emulated arm behind a controller manager's interfaces (docs/ROBOTS.md)."""

    executable: ClassVar[str] = "controller_manager_emulator"
    backend: str = param(
        "emulated", "the arm behind the interfaces: emulated | mujoco | pybullet | coppeliasim", choices=BACKENDS
    )
    seed: int = param(
        -1, "seed of an emulated arm; -1 = backends.emulated.seed of the config", minimum=-1, maximum=MAX_SEED
    )
    controller_manager: str = param(
        "/controller_manager", "the namespace it serves list_controllers in", not_empty=True, ros_name=True
    )
    controller: str = param("arm_controller", "its joint trajectory controller's name", not_empty=True, ros_name=True)
    update_rate_hz: float = param(
        250.0,
        "update rate of the controller manager [Hz] (rokae_ros2: 250 real, 1000 simulated)",
        exclusive_minimum=POSITIVE,
        unit="Hz",
    )
    goal_tolerance_rad: float = param(0.1, "the controller's goal tolerance of every joint [rad]", minimum=0.0)
    goal_time_s: float = param(0.5, "the controller's goal_time constraint [s]", minimum=0.0, unit="s")
    tracker_namespace: str = param(
        "/tracker", "where its optical tracker publishes tip/measured_cp, marker", ros_name=True
    )


@dataclass(frozen=True)
class DriverParams(ConfiguredParams):
    """virtual_driver: one robot backend behind the driver topics (physical_driver: the same node)."""

    executable: ClassVar[str] = "virtual_driver"
    backend: str = param(
        "mujoco", "mujoco | pybullet | coppeliasim | emulated (see backends in the config)", choices=BACKENDS
    )
    seed: int = param(
        -1, "seed of an emulated arm; -1 = backends.emulated.seed of the config", minimum=-1, maximum=MAX_SEED
    )


@dataclass(frozen=True)
class PhysicalDriverParams(DriverParams):
    """physical_driver: the physical arm (here the emulated one) behind the driver topics."""

    executable: ClassVar[str] = "physical_driver"
    backend: str = param(
        "emulated", "mujoco | pybullet | coppeliasim | emulated (see backends in the config)", choices=BACKENDS
    )


@dataclass(frozen=True)
class RecorderParams(NodeParams):
    """recorder (reads no case-study configuration)."""

    executable: ClassVar[str] = "recorder"
    output: str = param("session.mcap", "MCAP file to write (must not exist)", not_empty=True)
    topic_prefixes: tuple[str, ...] = param(("/cosim",), "record every topic starting with one of these")
    extra_topics: tuple[str, ...] = param(("/diagnostics", "/clock"), "also record these topics")
    discovery_period_s: float = param(0.2, "how often to look for new topics [s]", exclusive_minimum=POSITIVE, unit="s")


#: The parameter struct of every node executable.
NODE_PARAMETERS: dict[str, type[NodeParams]] = {
    p.executable: p
    for p in (
        TestGeneratorParams,
        ControllerParams,
        MonitorParams,
        MarkersParams,
        FoxgloveBridgeParams,
        ProxyParams,
        HazardInjectorParams,
        ErrorInjectorParams,
        CrtkDriverParams,
        CrtkEmulatorParams,
        Ros2ControlDriverParams,
        ControllerManagerEmulatorParams,
        DriverParams,
        PhysicalDriverParams,
        RecorderParams,
    )
}
#: Nodes composed into another node's process (not executables of their own).
COMPOSED_PARAMETERS: dict[str, type[NodeParams]] = {SupervisorParams.executable: SupervisorParams}


def params_type(executable: str, base: type[P]) -> type[P]:
    """The parameter struct of ``executable``, a ``base`` (e.g. a proxy node's: ProxyParams or a subclass).

    Args:
        executable: A node executable, or the name of a node composed into another's process (``supervisor``).
        base: The struct class the result must be or derive from.

    Raises:
        InputError: ``executable`` is not a node with parameters of that kind.
    """
    found = NODE_PARAMETERS.get(executable) or COMPOSED_PARAMETERS.get(executable)
    if found is None or not issubclass(found, base):
        known = sorted(k for k, v in {**NODE_PARAMETERS, **COMPOSED_PARAMETERS}.items() if issubclass(v, base))
        raise InputError(f"unknown node executable {executable!r}; expected one of: {', '.join(known)}")
    return found


def parameters_of(executable: str) -> tuple[ParamSpec, ...]:
    """The declared parameters of ``executable``.

    Args:
        executable: A node executable, or the name of a composed node.

    Raises:
        InputError: An unknown executable.
    """
    return params_type(executable, NodeParams).specs()


def process_peers(params: type[NodeParams]) -> tuple[type[NodeParams], ...]:
    """The other parameter structs of nodes running in the same process as ``params``'s node.

    Args:
        params: A node's parameter struct class; without a ``process``, it has no peers.
    """
    if not params.process:
        return ()
    every = (*NODE_PARAMETERS.values(), *COMPOSED_PARAMETERS.values())
    return tuple(p for p in every if p.process == params.process and p is not params)


def defaults_of(executable: str) -> dict[str, Any]:
    """``{name: default}`` of ``executable``'s parameters.

    Args:
        executable: A node executable, or the name of a composed node.
    """
    return {p.name: p.default for p in parameters_of(executable)}


#: parameters of the ros2_control driver that are not ``backends.ros2_control``'s: the run gives them
_NOT_SETTINGS = ("config", "robot")


def ros2_control_settings(node: ConfigNode | None) -> Ros2ControlDriverParams:
    """The ``backends.ros2_control`` section (``node``; None: absent, the defaults), checked.

    Args:
        node: The section, or None.

    Raises:
        ConfigError: An unknown key, or a value of the wrong type or out of range (naming file and key).
    """
    if node is None:
        return Ros2ControlDriverParams()
    specs = {s.name: s for s in Ros2ControlDriverParams.specs() if s.name not in _NOT_SETTINGS}
    node.reject_unknown(specs)
    for name, child in node.items():
        problem = specs[name].problem(child.value)
        if problem is not None:
            raise child.error(problem)
    return Ros2ControlDriverParams.from_values(dict(node.value), "backends.ros2_control")
