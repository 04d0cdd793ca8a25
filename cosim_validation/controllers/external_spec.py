"""``controllers.default.external``: the controller under test is a ROS 2 node of its own (docs/EXTERNAL_NODES.md).

The framework does not plan: it starts the node with ``command`` on a DDS domain of its own, sends each case as a
``RunTestCase`` goal and serves the robot as a ros2_control arm would (``/<controller>/follow_joint_trajectory``,
``/<controller>/joint_trajectory``, ``/joint_states``), or, with ``interface: crtk``, as a dVRK or a Raven-II does
(its CRTK topics under ``namespace``), with ``/clock`` in simulated time::

    controllers:
      default:
        external:
          command: ros2 run my_pkg my_node --ros-args -p use_sim_time:=true
          controller: arm_controller       # prefix of the served ros2_control interfaces
          real_time_factor: 5.0            # simulated seconds per wall second (at most)
        time_limit_s: 60                   # a case the node has not finished by then is aborted (case time)

This module only reads and checks the mapping (layer ``controllers``, no ROS); the adapter that runs the node is
``cosim_validation.live.external.node_controller``, found by import path like any plugin.
"""

from __future__ import annotations

import os
import shlex
import shutil
import string
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.ros_names import ros_name_problem

#: The placeholders a command's arguments may name, and what each is filled in with at every start of the node
COMMAND_PLACEHOLDERS = {
    "domain_id": "the DDS domain of this instance of the node (its ROS_DOMAIN_ID)",
    "log_dir": "the run's logs/ folder; outside a run (cosim run-case) a temporary folder removed when the node stops",
}
#: The factory of the adapter (a closed-loop controller whose every command comes from the external node).
ADAPTER_TARGET = "cosim_validation.live.external.node_controller:make_controller"
#: A step of the adapter waits for the node for one control period of wall time (period / real-time factor), so
#: the closed-loop step budget is only a guard against a hang of the adapter itself.
ADAPTER_STEP_BUDGET_S = 30.0

_KEYS = (
    "command",
    "cwd",
    "controller",
    "action",
    "real_time_factor",
    "startup_timeout_s",
    "accept_timeout_s",
    "command_timeout_s",
    "domain_id",
    "discovery_range",
    "path_tolerance_rad",
    "goal_tolerance_rad",
    "goal_time_tolerance_s",
    "interface",
    "namespace",
    "flavour",
    "tracker_namespace",
)
#: The robot interfaces an external node can be served: a ros2_control joint trajectory controller, or CRTK.
INTERFACES = ("ros2_control", "crtk")
#: The keys of the served ros2_control interfaces (refused under CRTK, where they would be ignored).
_ROS2_CONTROL_KEYS = ("controller", "path_tolerance_rad", "goal_tolerance_rad", "goal_time_tolerance_s")
#: The CRTK flavours (dVRK 2.x, Raven-II) and their arms' usual namespaces.
CRTK_NAMESPACES = {"dvrk": "/PSM1", "raven": "/arm1"}
_RANGES = ("localhost", "subnet", "off", "system_default")


GOAL_ATTEMPTS = 3  # a case's goal is sent at most this often, accept_timeout_s each, when no answer comes


@dataclass(frozen=True)
class ExternalSpec:
    """How to run and talk to an external node under test.

    Attributes:
        command: The command line that starts the node (split like a shell does; no shell runs it).
        cwd: The folder it starts in (the case-study file's folder unless given).
        controller: Prefix of the ros2_control interfaces served to the node (``/<controller>/...``).
        action: Name of the ``RunTestCase`` action the node serves.
        real_time_factor: Simulated seconds per wall second, at most (the framework waits for the node one control
            period divided by this every period).
        startup_timeout_s: Longest the node may take to serve ``action`` after it starts [s, wall].
        accept_timeout_s: Longest the node may take to accept or reject a case [s, wall].
        command_timeout_s: A node that streams commands (one in any of the last three periods) is waited for this
            long for its next command each period [s, wall], so it keeps in step however loaded the machine is.
        domain_id: ROS_DOMAIN_ID of the node and the framework's side (None: a free one is leased).
        discovery_range: ROS_AUTOMATIC_DISCOVERY_RANGE (localhost keeps the node on this machine).
        path_tolerance_rad: Default path tolerance of a FollowJointTrajectory goal, every joint [rad, or m]; 0: none.
        goal_tolerance_rad: Default goal tolerance, every joint [rad, or m]; 0: none.
        goal_time_tolerance_s: Default goal time tolerance [s]; 0: none.
        interface: What the node is served: ``ros2_control`` (a joint trajectory controller's interfaces) or
            ``crtk`` (a dVRK's or a Raven-II's CRTK topics).
        namespace: The CRTK arm's namespace ("" until the flavour is known: ``/PSM1`` on a dVRK, ``/arm1`` on a
            Raven-II).
        flavour: The CRTK flavour, ``dvrk`` or ``raven``; "": the robot model's own.
        tracker_namespace: Where the tracked needle tip is published under CRTK (``<tracker>/tip/measured_cp``).
    """

    command: tuple[str, ...]
    cwd: str
    controller: str = "arm_controller"
    action: str = "/run_test_case"
    real_time_factor: float = 1.0
    startup_timeout_s: float = 30.0
    accept_timeout_s: float = 5.0
    command_timeout_s: float = 1.0
    domain_id: int | None = None
    discovery_range: str = "localhost"
    path_tolerance_rad: float = 0.0
    goal_tolerance_rad: float = 0.0
    goal_time_tolerance_s: float = 0.0
    interface: str = "ros2_control"
    namespace: str = ""
    flavour: str = ""
    tracker_namespace: str = "/tracker"

    def options(self) -> dict[str, Any]:
        """As plain values, the options handed to the adapter's factory."""
        values = asdict(self)
        values["command"] = list(self.command)
        return values

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> ExternalSpec:
        """Back from :meth:`options` (already checked by :func:`external_spec`).

        Args:
            options: The values of :meth:`options` (``command`` as a list).
        """
        values = dict(options)
        values["command"] = tuple(values["command"])
        return cls(**values)


def external_spec(node: ConfigNode) -> ExternalSpec:
    """Read ``controllers.default.external`` (``node`` is that mapping).

    Args:
        node: The ``controllers.default.external`` mapping (``command`` required; see the module docstring).

    Raises:
        ConfigError: Unknown keys, an empty or unparsable command, a program that is not found, names that are not
            ROS names, a non-positive rate or timeout (``command_timeout_s`` may be 0), negative tolerances, a domain
            id out of 0..232.
    """
    if not isinstance(node.value, dict):
        raise node.error(f"expected a mapping with at least 'command', got {node.value!r}")
    node.reject_unknown(_KEYS)
    cwd = node["cwd"].to_path() if node.has("cwd") else Path(node.base_dir or Path(node.source).parent)
    if not cwd.is_dir():
        raise node["cwd"].error(f"not a folder: {str(cwd)!r}")
    return ExternalSpec(
        command=_command(node["command"], cwd),
        cwd=str(cwd),
        controller=_ros_name(node, "controller", "arm_controller").strip("/"),
        action=_ros_name(node, "action", "/run_test_case"),
        real_time_factor=_number(node, "real_time_factor", 1.0, exclusive_minimum=0.0, maximum=1000.0),
        startup_timeout_s=_number(node, "startup_timeout_s", 30.0, exclusive_minimum=0.0, maximum=3600.0),
        accept_timeout_s=_number(node, "accept_timeout_s", 5.0, exclusive_minimum=0.0, maximum=600.0),
        command_timeout_s=_number(node, "command_timeout_s", 1.0, minimum=0.0, maximum=600.0),
        domain_id=node["domain_id"].to_int(minimum=0, maximum=232) if node.has("domain_id") else None,
        discovery_range=node["discovery_range"].to_str(choices=_RANGES) if node.has("discovery_range") else "localhost",
        path_tolerance_rad=_number(node, "path_tolerance_rad", 0.0, minimum=0.0, maximum=10.0),
        goal_tolerance_rad=_number(node, "goal_tolerance_rad", 0.0, minimum=0.0, maximum=10.0),
        goal_time_tolerance_s=_number(node, "goal_time_tolerance_s", 0.0, minimum=0.0, maximum=3600.0),
        **_crtk(node),
    )


def _crtk(node: ConfigNode) -> dict[str, str]:
    """``interface`` and, for ``crtk``, the arm's namespace, flavour and tracker.

    CRTK keys under ros2_control are an error (they would be ignored).
    """
    interface = node["interface"].to_str(choices=INTERFACES) if node.has("interface") else "ros2_control"
    crtk_keys = [key for key in ("namespace", "flavour", "tracker_namespace") if node.has(key)]
    if interface != "crtk":
        if crtk_keys:
            raise node[crtk_keys[0]].error("only read with 'interface: crtk' (the node is served ros2_control)")
        return {"interface": interface}
    ros2_control_keys = [key for key in _ROS2_CONTROL_KEYS if node.has(key)]
    if ros2_control_keys:
        raise node[ros2_control_keys[0]].error("only read with 'interface: ros2_control' (the node is served CRTK)")
    flavour = node["flavour"].to_str(choices=tuple(CRTK_NAMESPACES)) if node.has("flavour") else ""
    namespace = _ros_name(node, "namespace", CRTK_NAMESPACES.get(flavour, ""), absolute=True)
    tracker = _ros_name(node, "tracker_namespace", "/tracker", absolute=True)
    return {"interface": interface, "namespace": namespace, "flavour": flavour, "tracker_namespace": tracker}


def _command(node: ConfigNode, cwd: Path) -> tuple[str, ...]:
    """The command line as arguments; its program must be found (on PATH, or a file relative to ``cwd``).

    Its arguments may name :data:`COMMAND_PLACEHOLDERS` (``{domain_id}``, ``{log_dir}``), filled in at each start;
    ``{{`` and ``}}`` are literal braces.
    """
    text = node.to_str()
    try:
        words = tuple(shlex.split(text))
    except ValueError as exc:
        raise node.error(f"cannot split the command line {text!r}: {exc}") from None
    if not words:
        raise node.error("expected the command line that starts the node under test, got an empty string")
    known = ", ".join(f"{{{name}}}" for name in COMMAND_PLACEHOLDERS)
    for k, word in enumerate(words):
        try:
            names = placeholders_of((word,))
        except ValueError as exc:
            raise node.error(f"argument {word!r}: {exc} (write {{{{ and }}}} for a literal brace)") from None
        unknown = sorted(names - set(COMMAND_PLACEHOLDERS))
        if unknown:
            raise node.error(
                f"argument {word!r}: unknown placeholder {{{unknown[0]}}}; known: {known} "
                "(write {{ and }} for a literal brace)"
            )
        if names and k == 0:
            raise node.error(f"the program {word!r} cannot hold a placeholder; known in its arguments: {known}")
    program = words[0].replace("{{", "{").replace("}}", "}")
    found = (cwd / program).is_file() if "/" in program else shutil.which(program) is not None
    if not found:
        where = f"in {str(cwd)!r}" if "/" in program else "on PATH"
        raise node.error(f"program {program!r} not found {where}")
    if "/" in program and not os.access(cwd / program, os.X_OK):  # it aborted every case: "Permission denied"
        raise node.error(f"program {program!r} is not executable (chmod +x it, or name its interpreter first)")
    return (program, *words[1:])


def placeholders_of(words: tuple[str, ...]) -> set[str]:
    """The placeholders ``words`` name (``{{`` and ``}}`` are literal braces).

    Args:
        words: Arguments of a command.

    Raises:
        ValueError: A single brace that opens or closes no placeholder.
    """
    return {field for word in words for _, field, _, _ in string.Formatter().parse(word) if field is not None}


def fill_command(command: tuple[str, ...], domain_id: int, log_dir: str) -> tuple[str, ...]:
    """``command`` with its placeholders filled in (and ``{{``, ``}}`` as single braces), for one start.

    Args:
        command: The command as :func:`ExternalSettings.from_config` read it (the program first).
        domain_id: The DDS domain the node runs on.
        log_dir: The folder for the node's own files.
    """
    values = {"domain_id": str(domain_id), "log_dir": log_dir}
    return (command[0], *(word.format(**values) for word in command[1:]))


def _ros_name(node: ConfigNode, key: str, default: str, absolute: bool = False) -> str:
    """A ROS name (:func:`~cosim_validation.common.ros_names.ros_name_problem`); ``absolute``: starting with '/'."""
    if not node.has(key):
        return default
    text = node[key].to_str()
    problem = ros_name_problem(text, absolute)
    if problem is not None:
        raise node[key].error(problem)
    return text


def _number(node: ConfigNode, key: str, default: float, **bounds: float) -> float:
    return node[key].to_float(**bounds) if node.has(key) else default
