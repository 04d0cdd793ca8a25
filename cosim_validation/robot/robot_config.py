"""The ``robot:`` section of the configuration: URDF, needle, home pose and commanding limits."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosim_validation.config import ConfigNode, resolve_resource
from cosim_validation.robot.errors import RobotModelError
from cosim_validation.robot.kinematics import NEEDLE_LENGTH_M, Kinematics

_KEYS = ("urdf", "mount_frame", "needle_length_m", "home_q", "joint_limit_margin", "limits")
_LIMIT_KEYS = ("velocity", "acceleration", "jerk")
# Names before the units left the key names (issue 17: a prismatic joint's values are metres); a run directory's
# copy of an older configuration still loads.
_OLD_KEYS = {"home_q_rad": "home_q", "joint_limit_margin_rad": "joint_limit_margin"}
_OLD_LIMIT_KEYS = {"velocity_rad_s": "velocity", "acceleration_rad_s2": "acceleration", "jerk_rad_s3": "jerk"}


@dataclass(frozen=True)
class CommandLimits:
    """Joint limits for commanding the arm (the controller's real-time interface), per joint.

    Attributes:
        velocity: (J,) maximum joint speed [rad/s].
        acceleration: (J,) maximum joint acceleration [rad/s^2].
        jerk: (J,) maximum joint jerk [rad/s^3].
    """

    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray


@dataclass(frozen=True)
class RobotConfig:
    """The robot as configured, with its kinematics.

    Attributes:
        kinematics: Arm and needle (URDF limits inside).
        home_q: (J,) default pose where every case starts [rad].
        joint_limit_margin: Planned motion keeps this far from the URDF position limits [rad].
        limits: Commanding limits (velocity, acceleration, jerk).
    """

    kinematics: Kinematics
    home_q: np.ndarray
    joint_limit_margin: float
    limits: CommandLimits

    @property
    def q_lower(self) -> np.ndarray:
        """(J,) lowest joint angles the planner may command (URDF limit + margin) [rad]."""
        return self.kinematics.q_lower + self.joint_limit_margin

    @property
    def q_upper(self) -> np.ndarray:
        """(J,) highest joint angles the planner may command (URDF limit - margin) [rad]."""
        return self.kinematics.q_upper - self.joint_limit_margin

    @classmethod
    def from_config(cls, node: ConfigNode) -> RobotConfig:
        """Read and validate the ``robot`` section (``node`` is that section).

        Raises:
            ConfigError: A key is missing, unknown or out of range (naming file and key), the URDF is
                unusable, or the home pose violates the joint limits.
        """
        node = node.with_renamed_keys(_OLD_KEYS)
        node.reject_unknown(_KEYS)
        kinematics = _kinematics(node)
        n = kinematics.n_joints
        margin = node["joint_limit_margin"].to_float(minimum=0.0, maximum=0.2)
        home = node["home_q"].to_vector(n)
        violations = kinematics.limit_violations(home, margin)
        if violations:
            raise node["home_q"].error(
                f"home pose violates the joint limits (margin {margin} rad): {'; '.join(violations)}"
            )
        limits_node = node["limits"].with_renamed_keys(_OLD_LIMIT_KEYS)
        limits_node.reject_unknown(_LIMIT_KEYS)
        vectors = {}
        for key in _LIMIT_KEYS:
            vector = limits_node[key].to_vector(n)
            if (vector <= 0).any():
                raise limits_node[key].error(f"expected {n} numbers > 0, got {limits_node[key].value!r}")
            vectors[key] = vector
        return cls(kinematics, home, margin, CommandLimits(**vectors))


def _kinematics(node: ConfigNode) -> Kinematics:
    """Kinematics from ``urdf`` (relative to the config file, else to the package) and the needle length."""
    urdf_node = node["urdf"]
    path = urdf_node.to_path()
    if not path.is_file():  # a copied configuration still finds the shipped urdf/
        path = resolve_resource(Path(*[part for part in Path(urdf_node.to_str()).parts if part != ".."]))
    if not path.is_file():
        raise urdf_node.error(f"URDF file not found: {urdf_node.value!r}")
    needle = node["needle_length_m"].to_float(minimum=NEEDLE_LENGTH_M[0], maximum=NEEDLE_LENGTH_M[1])
    mount = node["mount_frame"].to_str() if node.has("mount_frame") else "needle_mount"
    try:
        return Kinematics.from_urdf(path, needle, mount)
    except RobotModelError as exc:
        raise urdf_node.error(str(exc)) from None
