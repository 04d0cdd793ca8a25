"""The robot registry: every robot the project knows, by name, as data.

A case study chooses its robot with ``robot: {model: NAME}`` in its configuration; the entry gives the URDF,
the tool frame the needle (or instrument tip) hangs from, the needle length, the home pose, the commanding
limits and the links an instrument passes through the body wall with.
Keys of the ``robot:`` section override the entry's values (see :class:`~cosim_validation.robots.model.RobotConfig`).

Joint values are in rad for a revolute joint and in m for a prismatic one (the dVRK PSM's and the Raven-II's
insertion); limits likewise (rad/s or m/s, ...). Facts and their sources: ../shared/ROBOTS.md, cited per entry.
"""

from __future__ import annotations

from dataclasses import dataclass

from cosim_validation.robots.model.errors import RobotModelError


@dataclass(frozen=True)
class RobotModel:
    """One robot of the registry.

    Attributes:
        name: Its name in configuration (``robot.model``) and on the command line.
        title: One line for people.
        urdf: The URDF, relative to the package root (``urdf/...``).
        mount_frame: The frame the needle hangs from (the needle extends along its +z).
        needle_length_m: Default needle length beyond the mount frame [m].
        home_q: (J,) pose where every case starts [rad, or m for a prismatic joint].
        joint_limit_margin: Planned motion keeps this far inside the URDF position limits [rad, or m].
        velocity: (J,) commanding velocity limits [rad/s, or m/s].
        acceleration: (J,) commanding acceleration limits [rad/s^2, or m/s^2].
        jerk: (J,) commanding jerk limits [rad/s^3, or m/s^3].
        port_links: Links that pass through the body wall at the remote centre of motion (an instrument shaft
            in its cannula): exempt from keeping the arm's clearance from the skin.
        sources: Where the numbers come from.
    """

    name: str
    title: str
    urdf: str
    mount_frame: str
    needle_length_m: float
    home_q: tuple[float, ...]
    joint_limit_margin: float
    velocity: tuple[float, ...]
    acceleration: tuple[float, ...]
    jerk: tuple[float, ...]
    port_links: tuple[str, ...]
    sources: str

    @property
    def n_joints(self) -> int:
        """Number of joints J (of the home pose)."""
        return len(self.home_q)


_DEG = 3.141592653589793 / 180.0

XMATE_ER3_PRO = RobotModel(
    name="xmate_er3_pro",
    title="ROKAE xMate ER3 Pro, 7 revolute joints, with a needle holder",
    urdf="urdf/xmate_er3_pro.urdf",
    mount_frame="needle_mount",
    needle_length_m=0.3,
    home_q=(0.0, -0.4, 0.0, 1.46, 0.0, 1.3, 0.0),
    joint_limit_margin=0.02,
    velocity=(2.175, 2.175, 2.175, 2.175, 2.610, 2.610, 2.610),
    acceleration=(15.0, 7.5, 10.0, 10.0, 15.0, 15.0, 20.0),
    jerk=(5000.0, 3500.0, 5000.0, 5000.0, 7500.0, 7500.0, 7500.0),
    port_links=(),
    sources="kinematics: RokaeRobot/rokae_ros2 (ROBOTS.md 1.2); commanding limits: xCore SDK real-time limits "
    "(ROBOTS.md 1.4); home pose and needle: this project (needle down, tip at (0.40, 0, 0.35) m)",
)

DVRK_PSM = RobotModel(
    name="dvrk_psm",
    title="dVRK Classic PSM with the Large Needle Driver 400006, 6 joints (insertion prismatic)",
    urdf="urdf/dvrk_psm.urdf",
    mount_frame="tool_tip",
    needle_length_m=0.01,
    home_q=(0.0, 0.0, 0.12, 0.0, 0.0, 0.0),
    joint_limit_margin=0.005,
    velocity=(90 * _DEG, 90 * _DEG, 0.2, 1080 * _DEG, 1080 * _DEG, 1080 * _DEG),
    acceleration=(90 * _DEG, 90 * _DEG, 0.2, 720 * _DEG, 720 * _DEG, 720 * _DEG),
    jerk=(900 * _DEG, 900 * _DEG, 2.0, 7200 * _DEG, 7200 * _DEG, 7200 * _DEG),
    port_links=("roll_link", "wrist_pitch_link", "wrist_yaw_link"),
    sources="DH and limits: sawIntuitiveResearchKit share/kinematic/PSM.json, share/tool/"
    "LARGE_NEEDLE_DRIVER_400006.json; velocity and acceleration: the joint-trajectory limits of "
    "mtsIntuitiveResearchKitPSM.cpp; home: the homing goal (insertion 12 cm) (ROBOTS.md 2.1-2.4); "
    "jerk (10 x acceleration) and the 1 cm needle: this project",
)

RAVEN2 = RobotModel(
    name="raven2",
    title="Raven-II gold (left) arm with a RAVEN II grasper, 6 joints (insertion prismatic)",
    urdf="urdf/raven2.urdf",
    mount_frame="tool_tip",
    needle_length_m=0.01,
    home_q=(30 * _DEG, 90 * _DEG, 0.40, 0.0, 0.0, 0.0),
    joint_limit_margin=0.005,
    velocity=(3.0, 3.0, 0.2, 3.0, 3.0, 3.0),
    acceleration=(1.0, 1.0, 0.5, 1.0, 1.0, 1.0),
    jerk=(10.0, 10.0, 5.0, 10.0, 10.0, 10.0),
    port_links=("tool_roll_link", "wrist_link", "grasper_link"),
    sources="DH: uw-biorobotics/raven2 r2_kinematics.h/.cpp; joint stops: defines.h, tools.cpp; V_MAX 3.0 rad/s, "
    "A_MAX 1.0 rad/s^2: defines.h (ROBOTS.md 3.1-3.2); insertion limits, jerk, home pose and needle: this project",
)

#: Every robot of the registry, by name.
ROBOT_MODELS: dict[str, RobotModel] = {m.name: m for m in (XMATE_ER3_PRO, DVRK_PSM, RAVEN2)}

#: The robot of a configuration whose ``robot`` section names no model (configurations before the registry).
DEFAULT_MODEL = XMATE_ER3_PRO.name


def robot_model(name: str) -> RobotModel:
    """The registered robot ``name``.

    Args:
        name: A key of :data:`ROBOT_MODELS` (e.g. ``xmate_er3_pro``, ``raven2``).

    Raises:
        RobotModelError: Unknown name (the message lists the registered robots).
    """
    if name not in ROBOT_MODELS:
        raise RobotModelError(f"unknown robot {name!r}; expected one of: {', '.join(ROBOT_MODELS)}")
    return ROBOT_MODELS[name]
