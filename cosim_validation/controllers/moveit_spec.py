"""``controllers.moveit``: MoveIt 2's ``move_group`` as the planner under test (docs/MOVEIT.md).

The built-in controller ``moveit`` plans every case through a running ``move_group``: the joint-space move of the
initialization through ``/plan_kinematic_path``, the straight moves (approach, injection, extraction, reset)
through ``/compute_cartesian_path``, with the case's anatomy put into the planning scene through
``/apply_planning_scene``::

    controllers:
      default: moveit
      moveit:
        group: arm                     # planning group of the robot's MoveIt configuration
        pipeline_id: ompl              # "" : move_group's default pipeline
        planner_id: RRTConnectkConfigDefault   # "" : the pipeline's default planner
        planning_time_s: 5.0           # allowed_planning_time of each joint-space request
        max_step_m: 0.002              # max_step of each Cartesian path request
        service_timeout_s: 10.0        # move_group must serve its services within this
        call_timeout_s: 60.0           # ... and answer a request within this
        namespace: ""                  # move_group's namespace ("/robot1" -> /robot1/plan_kinematic_path)
        domain_id: 0                   # ROS_DOMAIN_ID of move_group (left out: the environment's)

This module only reads and checks the section (layer ``controllers``, no ROS); the controller that calls the
services is ``cosim_validation.live.moveit.moveit_controller``, found by import path like any plugin.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from cosim_validation.common.config import ConfigNode

#: The factory of the controller (a planning controller whose plans come from move_group).
MOVEIT_TARGET = "cosim_validation.live.moveit.moveit_controller:make_controller"
MOVEIT_NAME = "moveit"

_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/")


@dataclass(frozen=True)
class MoveItSettings:
    """How the ``moveit`` controller talks to ``move_group``.

    Attributes:
        group: Planning group (``group_name`` of every request).
        pipeline_id: Planning pipeline of joint-space requests ("" : move_group's default).
        planner_id: Planner of joint-space requests ("" : the pipeline's default).
        planning_time_s: ``allowed_planning_time`` of joint-space requests [s].
        planning_attempts: ``num_planning_attempts`` of joint-space requests.
        max_step_m: ``max_step`` of Cartesian path requests: largest tip step between returned states [m].
        jump_threshold: ``jump_threshold`` of Cartesian path requests (0: no jump check).
        service_timeout_s: Longest wait for move_group's services to appear [s, wall].
        call_timeout_s: Longest wait for one answer [s, wall].
        namespace: Namespace of move_group's services ("" : the root).
        domain_id: ROS_DOMAIN_ID of move_group (None: the environment's).
        link: The link the Cartesian waypoints are for ("" : the needle tip link of the robot model).
    """

    group: str = "arm"
    pipeline_id: str = "ompl"
    planner_id: str = ""
    planning_time_s: float = 5.0
    planning_attempts: int = 1
    max_step_m: float = 0.002
    jump_threshold: float = 0.0
    service_timeout_s: float = 10.0
    call_timeout_s: float = 60.0
    namespace: str = ""
    domain_id: int | None = None
    link: str = ""

    def options(self) -> dict[str, Any]:
        """As plain values, the options handed to the controller's factory."""
        return asdict(self)

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> MoveItSettings:
        """Back from :meth:`options` (already checked by :func:`moveit_settings`).

        Args:
            options: The values of :meth:`options`.
        """
        return cls(**options)

    def service(self, name: str) -> str:
        """The full name of move_group's service ``name`` (e.g. ``/plan_kinematic_path``).

        Args:
            name: The service's name without a leading slash (e.g. ``plan_kinematic_path``).
        """
        return f"{self.namespace.rstrip('/')}/{name}"


def moveit_settings(node: ConfigNode) -> MoveItSettings:
    """Read ``controllers.moveit`` (``node`` is that mapping); a key left out keeps its default.

    Args:
        node: The ``controllers.moveit`` mapping.

    Raises:
        ConfigError: Unknown keys, names that are not ROS names, non-positive times or steps, a domain id out of
            0..232.
    """
    if not isinstance(node.value, dict):
        raise node.error(f"expected a mapping of MoveIt settings, got {node.value!r}")
    default = MoveItSettings()
    node.reject_unknown(tuple(default.options()))
    return MoveItSettings(
        group=_name(node, "group", default.group, allow_slash=False),
        pipeline_id=node["pipeline_id"].to_str() if node.has("pipeline_id") else default.pipeline_id,
        planner_id=node["planner_id"].to_str() if node.has("planner_id") else default.planner_id,
        planning_time_s=_number(node, "planning_time_s", default.planning_time_s, maximum=3600.0),
        planning_attempts=node["planning_attempts"].to_int(minimum=1, maximum=1000)
        if node.has("planning_attempts")
        else default.planning_attempts,
        max_step_m=_number(node, "max_step_m", default.max_step_m, maximum=0.1),
        jump_threshold=node["jump_threshold"].to_float(minimum=0.0) if node.has("jump_threshold") else 0.0,
        service_timeout_s=_number(node, "service_timeout_s", default.service_timeout_s, maximum=3600.0),
        call_timeout_s=_number(node, "call_timeout_s", default.call_timeout_s, maximum=3600.0),
        namespace=_name(node, "namespace", "", allow_slash=True, allow_empty=True),
        domain_id=node["domain_id"].to_int(minimum=0, maximum=232) if node.has("domain_id") else None,
        link=_name(node, "link", "", allow_slash=False, allow_empty=True),
    )


def _name(node: ConfigNode, key: str, default: str, *, allow_slash: bool, allow_empty: bool = False) -> str:
    if not node.has(key):
        return default
    text = node[key].to_str()
    chars = _NAME_CHARS if allow_slash else _NAME_CHARS - {"/"}
    if not text and allow_empty:
        return text
    if not text.strip("/") or not set(text) <= chars or "//" in text or text.endswith("/"):
        between = " and '/' between parts" if allow_slash else ""
        raise node[key].error(f"expected a ROS name (letters, digits, '_'{between}), got {text!r}")
    return text


def _number(node: ConfigNode, key: str, default: float, maximum: float) -> float:
    return node[key].to_float(exclusive_minimum=0.0, maximum=maximum) if node.has(key) else default
