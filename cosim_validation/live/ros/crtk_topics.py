"""The CRTK interface of a robot arm, as data: topic names (under the arm's namespace), types and directions.

Two flavours, from ../shared/ROBOTS.md (facts with their sources):

- ``dvrk`` (section 2.2): dVRK 2.x on ROS 2, e.g. ``/PSM1/...``; every ``_cp`` topic is geometry_msgs/PoseStamped
  (cisst-ros switched from TransformStamped in 2022, commit 77ebbbd); the PSM's jaw under ``jaw/``.
- ``raven`` (section 3.1, branch ``crtk`` of uw-biorobotics/raven2), e.g. ``/arm1/...``; ``_cp`` topics are
  geometry_msgs/TransformStamped; no ``move_jp`` (the Raven-II takes ``servo_jp`` only).

``robot`` side: ``pub`` = the robot publishes it (the driver subscribes), ``sub`` = the robot subscribes.
``state_command`` values and ``operating_state`` states: ROBOTS.md 2.2 (crtk_msgs/OperatingState).
"""

from __future__ import annotations

from typing import NamedTuple

from cosim_validation.common.exceptions import InputError
from cosim_validation.common.ros_names import ros_name_problem


class CrtkTopic(NamedTuple):
    """One topic of a CRTK arm.

    Attributes:
        name: Relative to the arm's namespace (``measured_js``, ``jaw/servo_jp``).
        type_name: ROS 2 type (``sensor_msgs/msg/JointState``).
        robot_side: ``pub`` (the robot publishes) or ``sub`` (the robot subscribes).
    """

    name: str
    type_name: str
    robot_side: str


JOINT_STATE = "sensor_msgs/msg/JointState"
POSE_STAMPED = "geometry_msgs/msg/PoseStamped"
TRANSFORM_STAMPED = "geometry_msgs/msg/TransformStamped"
OPERATING_STATE = "crtk_msgs/msg/OperatingState"
STRING_STAMPED = "crtk_msgs/msg/StringStamped"

#: CRTK operating states (crtk_msgs/OperatingState.state) and the commands dVRK arms accept on state_command.
ENABLED = "ENABLED"
DISABLED = "DISABLED"
STATE_COMMANDS = ("enable", "disable", "home", "unhome", "pause", "resume")


def _arm(cp_type: str, move: bool) -> tuple[CrtkTopic, ...]:
    topics = [
        CrtkTopic("measured_js", JOINT_STATE, "pub"),
        CrtkTopic("setpoint_js", JOINT_STATE, "pub"),
        CrtkTopic("measured_cp", cp_type, "pub"),
        CrtkTopic("setpoint_cp", cp_type, "pub"),
        CrtkTopic("operating_state", OPERATING_STATE, "pub"),
        CrtkTopic("state_command", STRING_STAMPED, "sub"),
        CrtkTopic("servo_jp", JOINT_STATE, "sub"),
    ]
    if move:
        topics.append(CrtkTopic("move_jp", JOINT_STATE, "sub"))
    return tuple(topics)


#: The topics each flavour's arm serves (what the emulators serve and the driver expects).
FLAVOURS: dict[str, tuple[CrtkTopic, ...]] = {
    "dvrk": (
        *_arm(POSE_STAMPED, move=True),
        CrtkTopic("jaw/measured_js", JOINT_STATE, "pub"),
        CrtkTopic("jaw/setpoint_js", JOINT_STATE, "pub"),
        CrtkTopic("jaw/servo_jp", JOINT_STATE, "sub"),
        CrtkTopic("jaw/move_jp", JOINT_STATE, "sub"),
    ),
    "raven": _arm(TRANSFORM_STAMPED, move=False),
}

#: The frame of an arm's ``measured_cp``/``setpoint_cp`` (its base; the robot model's base_link)
BASE_FRAME = "base_link"


def tip_frame(namespace: str) -> str:
    """Return the child frame of an arm's ``_cp`` TransformStamped (a Raven-II's), a tf frame name.

    ``<namespace>_needle_tip``, without a leading slash (``/arm1``: ``arm1_needle_tip``).

    Args:
        namespace: The arm's namespace (``/arm1``).
    """
    return f"{namespace.strip('/').replace('/', '_')}_needle_tip"


#: The flavour of each robot model of the registry that has a CRTK interface.
MODEL_FLAVOURS = {"dvrk_psm": "dvrk", "raven2": "raven"}


def flavour_of(model: str, flavour: str = "") -> str:
    """The CRTK flavour to speak to robot ``model`` (``flavour`` if given).

    Args:
        model: The robot model's registry name (``dvrk_psm``, ``raven2``).
        flavour: ``dvrk`` or ``raven``; "": the model's own flavour.

    Raises:
        InputError: An unknown flavour, or a model without a CRTK interface and no flavour given.
    """
    chosen = flavour or MODEL_FLAVOURS.get(model, "")
    if chosen not in FLAVOURS:
        known = ", ".join(f"{m} ({f})" for m, f in MODEL_FLAVOURS.items())
        raise InputError(
            f"parameter 'flavour': {chosen or model!r} has no CRTK interface; expected dvrk or raven "
            f"(robots with one: {known})"
        )
    return chosen


def cp_type(flavour: str) -> str:
    """The type of the ``_cp`` topics of ``flavour``.

    Args:
        flavour: ``dvrk`` or ``raven``.
    """
    return next(t.type_name for t in FLAVOURS[flavour] if t.name == "measured_cp")


def namespace_problem(namespace: str) -> str | None:
    """Why ``namespace`` is no absolute ROS 2 namespace (``/PSM1``, ``/arm/left``), or None when it is one.

    Args:
        namespace: The namespace to check.
    """
    if ros_name_problem(namespace, absolute=True) is None:
        return None
    return (
        "expected an absolute ROS namespace like /PSM1 (parts of letters, digits and '_', none starting with a digit; "
        f"no trailing or double slash), got {namespace!r}"
    )


def topic(namespace: str, name: str) -> str:
    """The full name of ``name`` under ``namespace`` (``/PSM1`` + ``measured_js`` -> ``/PSM1/measured_js``).

    Args:
        namespace: The arm's absolute namespace (``/PSM1``).
        name: The topic relative to it (``measured_js``).
    """
    problem = namespace_problem(namespace)
    if problem is not None:
        raise InputError(f"parameter 'namespace': {problem}")
    return f"{namespace}/{name}"
