"""The parameters of every node, declared once.

The nodes declare exactly these (name, type, default, description) with rclpy; ``cosim session`` and the
launch file validate the graph YAML against them before anything starts, so a typo in a parameter name
or a wrong type is a clear error naming the file and key instead of a silently ignored value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple


class ParamSpec(NamedTuple):
    """One ROS parameter of a node."""

    name: str
    kind: type  # bool, int, float, str or list (list of str)
    default: Any  # None: declared with its type and no value (the node then reads the configuration)
    description: str


_COMMON = (ParamSpec("config", str, "config/needle_insertion.yaml", "case-study configuration file"),)


def _driver(backend: str) -> tuple[ParamSpec, ...]:
    return (
        ParamSpec("backend", str, backend, "mujoco | pybullet | coppeliasim | emulated (see backends in the config)"),
        ParamSpec("seed", int, -1, "seed of an emulated arm; -1 = backends.emulated.seed of the config"),
    )


NODE_PARAMETERS: dict[str, tuple[ParamSpec, ...]] = {
    "test_generator": (
        ParamSpec("suite", str, "", "suite file (Parquet, from cosim testgen)"),
        ParamSpec("cases", int, 0, "run N cases of the suite (0 = all)"),
        ParamSpec("selection", str, "spread", "which N cases: spread (evenly over the suite) or first"),
        ParamSpec("results", str, "results.sqlite", "results database to create"),
        ParamSpec("controller", str, "", "controller under test; '' = controllers.default of the config"),
        ParamSpec("robots", list, [], "robots to drive; [] = every robot of the controller"),
        ParamSpec("stop_on_abort", bool, False, "stop the session after an aborted case (else continue)"),
        ParamSpec("server_timeout_s", float, 120.0, "time to wait for the controller's action server [s]"),
    ),
    "controller": (
        ParamSpec("robots", list, ["virtual", "physical"], "robots driven in every case"),
        ParamSpec(
            "publish_clock",
            bool,
            True,
            "be the session clock: publish /clock at every sample and run "
            "as fast as the robots answer (false: real time)",
        ),
        ParamSpec(
            "validate_setpoints",
            bool,
            None,
            "check every setpoint with the state validator (seed 002); unset: validator.enabled of the configuration",
        ),
        ParamSpec(
            "stale_timeout_s",
            float,
            3.0,
            "a robot that does not answer a sample this long (wall time) aborts the case [s]; the monitor "
            "reports it stale sooner (monitor.stale_timeout_s), a loaded machine only slows a sim-time session",
        ),
        ParamSpec("reset_timeout_s", float, 10.0, "time allowed for a robot's reset [s]"),
        ParamSpec("report_timeout_s", float, 5.0, "time to wait for the monitor's case report [s]"),
        ParamSpec("drop_stale_robots", bool, True, "after a robot stopped answering, run later cases without it"),
        ParamSpec(
            "supervisor",
            str,
            None,
            "the task supervisor's configuration every case runs under (docs/SUPERVISOR.md); unset: "
            "campaign.supervisor of the configuration (absent as shipped: no supervisor)",
        ),
        ParamSpec("supervisor_scenario", str, None, "scripted requests, faults and teleoperation for the supervisor"),
        ParamSpec(
            "detector",
            str,
            None,
            "the hazard detector in the loop, [tip_mm=X][,joint=Y][,tracker_mm=Z][,progress=P] (docs/HAZARDS.md): "
            "alarms on /cosim/hazards/alarms, the feedback force on /cosim/feedback_wrench; unset: none",
        ),
        ParamSpec("stop_on_alarm", bool, False, "a detector alarm is an exception of the task supervisor (mitigation)"),
        ParamSpec(
            "min_subscribers",
            int,
            2,
            "stream only once the expected-state, command and clock topics and the robots' joint-state and "
            "tip-pose topics have this many subscribers besides the controller (monitor and recorder; driver "
            "and recorder)",
        ),
        ParamSpec("subscriber_timeout_s", float, 10.0, "stream anyway after waiting this long for subscribers [s]"),
        ParamSpec(
            "subscriber_settle_s",
            float,
            1.0,
            "before the first case, wait this long after the subscriptions appear in the graph (the data paths "
            "match a little after discovery) [s]",
        ),
    ),
    "monitor": (
        ParamSpec(
            "properties",
            str,
            "",
            "properties, KPIs and machines to evaluate; '' = campaign.properties of the configuration (as a campaign)",
        ),
        ParamSpec("robots", list, ["virtual", "physical"], "robots whose topics are monitored"),
        ParamSpec(
            "stale_timeout_s",
            float,
            0.5,
            "a robot silent this long (wall time) while it owes a sample is reported stale [s]; checked every "
            "50 ms, so a dead driver is reported well within 1 s",
        ),
        ParamSpec(
            "case_end_timeout_s",
            float,
            2.0,
            "an ended case waits for late samples until its streams have been quiet this long (wall time) [s]",
        ),
    ),
    "markers": (
        ParamSpec("target_diameter_m", float, 0.004, "diameter of a target sphere [m]"),
        ParamSpec(
            "anatomy_markers",
            str,
            "both",
            "both | mesh | triangles: MESH_RESOURCE markers with package:// URIs on /cosim/markers/anatomy_mesh "
            "(a model without a matching package file goes there as a triangle list), triangle lists on "
            "/cosim/markers/anatomy (for viewers that cannot resolve package URIs), or both topics",
        ),
    ),
    "foxglove_bridge": (
        ParamSpec("host", str, "127.0.0.1", "address the Foxglove WebSocket server listens on"),
        ParamSpec("port", int, 8765, "port of the Foxglove WebSocket server (0 = any free port)"),
        ParamSpec("robots", list, ["virtual", "physical"], "robots whose arm, tip path and deviation are shown"),
        ParamSpec("topic_prefixes", list, ["/cosim"], "forward every topic starting with one of these"),
        ParamSpec("extra_topics", list, ["/diagnostics"], "also forward these topics"),
        ParamSpec("discovery_period_s", float, 0.2, "how often to look for new topics [s]"),
        ParamSpec("scene_period_s", float, 0.2, "how often the scene (arms, tip paths) is sent [s]"),
    ),
    "robot_proxy": (
        ParamSpec("robot", str, "virtual", "the robot it stands in front of: virtual | physical"),
        ParamSpec(
            "filters",
            list,
            [],
            "KIND:OPTIONS of every layer around the robot, innermost first (offset, errors, hazards; "
            "cosim_validation.robots.filters.robot_filters)",
        ),
        ParamSpec("events_topic", str, "", "where the filters' events go; '' = /cosim/<robot>/events"),
    ),
    "hazard_injector": (  # the robot_proxy node with hazard filters (issue 19), its events on the hazards topic
        ParamSpec("robot", str, "physical", "the robot it stands in front of: virtual | physical"),
        ParamSpec("filters", list, [], "hazards:SCENARIO[@LIBRARY] of every injected scenario (config/hazards.yaml)"),
        ParamSpec("events_topic", str, "/cosim/hazards/events", "where the injection windows' start and end go"),
    ),
    "error_injector": (
        ParamSpec("robot", str, "virtual", "the simulated robot it injects the learned errors into"),
        ParamSpec("model", str, "", "the error model file (cosim errors train); required"),
        ParamSpec("filters", list, [], "KIND:OPTIONS of further layers outside the injected errors"),
        ParamSpec("events_topic", str, "", "where the filters' events go; '' = /cosim/<robot>/events"),
    ),
    "crtk_driver": (  # a robot's driver talking CRTK to the arm (docs/CRTK.md)
        ParamSpec("robot", str, "physical", "the robot it drives in the graph: virtual | physical"),
        ParamSpec("namespace", str, "/PSM1", "the arm's CRTK namespace (/PSM1 on a dVRK, /arm1 on a Raven-II)"),
        ParamSpec("flavour", str, "", "dvrk | raven; '' = the robot model's (dvrk_psm: dvrk, raven2: raven)"),
        ParamSpec("tracker_namespace", str, "", "optical tracker's namespace (tip/measured_cp, marker); '' = none"),
        ParamSpec("emulated", bool, False, "the arm is a crtk_emulator: reset through its emulation/reset service"),
        ParamSpec("enable_timeout_s", float, 30.0, "time for the arm to become ENABLED and homed at start [s]"),
        ParamSpec("reset_timeout_s", float, 10.0, "time for the arm to reach a case's first setpoint [s]"),
        ParamSpec("reset_tolerance", float, 1.0e-3, "a real arm is at the reset pose within this [rad, or m]"),
        ParamSpec(
            "min_subscribers",
            int,
            1,
            "before enabling, wait until state_command has this many matched readers (the arm; 2 in a session: "
            "the arm and the recorder, so the bag holds the start-up commands)",
        ),
        ParamSpec("subscriber_timeout_s", float, 5.0, "enable anyway after waiting this long for readers [s]"),
    ),
    "crtk_emulator": (  # an emulated arm serving its CRTK interface (docs/CRTK.md)
        ParamSpec("backend", str, "emulated", "the arm behind the topics: emulated | mujoco | pybullet | coppeliasim"),
        ParamSpec("seed", int, -1, "seed of an emulated arm; -1 = backends.emulated.seed of the config"),
        ParamSpec("namespace", str, "/PSM1", "CRTK namespace it serves (/PSM1 on a dVRK, /arm1 on a Raven-II)"),
        ParamSpec("flavour", str, "", "dvrk | raven; '' = the robot model's (dvrk_psm: dvrk, raven2: raven)"),
        ParamSpec("tracker_namespace", str, "/tracker", "where its optical tracker publishes tip/measured_cp, marker"),
    ),
    "virtual_driver": _driver("mujoco"),
    "physical_driver": _driver("emulated"),
    "recorder": (
        ParamSpec("output", str, "session.mcap", "MCAP file to write (must not exist)"),
        ParamSpec("topic_prefixes", list, ["/cosim"], "record every topic starting with one of these"),
        ParamSpec("extra_topics", list, ["/diagnostics", "/clock"], "also record these topics"),
        ParamSpec("discovery_period_s", float, 0.2, "how often to look for new topics [s]"),
    ),
}


def parameters_of(executable: str) -> tuple[ParamSpec, ...]:
    """The declared parameters of ``executable`` (common ones included)."""
    from cosim_validation.common.exceptions import InputError

    if executable not in NODE_PARAMETERS:
        raise InputError(
            f"unknown node executable {executable!r}; expected one of: {', '.join(sorted(NODE_PARAMETERS))}"
        )
    own = NODE_PARAMETERS[executable]
    names = {p.name for p in own}
    return tuple(p for p in _COMMON if p.name not in names and executable not in _NO_COMMON) + own


# executables that do not read the case-study configuration
_NO_COMMON = {"recorder"}


def defaults_of(executable: str) -> Mapping[str, Any]:
    """``{name: default}`` of ``executable``'s parameters."""
    return {p.name: p.default for p in parameters_of(executable)}
