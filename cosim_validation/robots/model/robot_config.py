"""The ``robot:`` section of the configuration: which robot (a model of the registry), needle, home pose, limits.

.. code-block:: yaml

    robot:
      model: dvrk_psm          # a robot of cosim_validation.robots.model.robot_models (default: xmate_er3_pro)
      needle_length_m: 0.01    # any key below overrides the model's value
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cosim_validation.common.config import ConfigNode, package_root, resolve_resource
from cosim_validation.robots.model.errors import RobotModelError
from cosim_validation.robots.model.kinematics import NEEDLE_LENGTH_M, Kinematics
from cosim_validation.robots.model.robot_models import DEFAULT_MODEL, ROBOT_MODELS, RobotModel

_KEYS = ("model", "urdf", "mount_frame", "needle_length_m", "home_q", "joint_limit_margin", "limits")
_LIMIT_KEYS = ("velocity", "acceleration", "jerk")
# Names before the units left the key names (a prismatic joint's values are metres); a run directory's
# copy of an older configuration still loads.
_OLD_KEYS = {"home_q_rad": "home_q", "joint_limit_margin_rad": "joint_limit_margin"}
_OLD_LIMIT_KEYS = {"velocity_rad_s": "velocity", "acceleration_rad_s2": "acceleration", "jerk_rad_s3": "jerk"}


@dataclass(frozen=True)
class CommandLimits:
    """Joint limits for commanding the arm (the controller's real-time interface), per joint.

    Attributes:
        velocity: (J,) maximum joint speed [rad/s, or m/s for a prismatic joint].
        acceleration: (J,) maximum joint acceleration [rad/s^2, or m/s^2].
        jerk: (J,) maximum joint jerk [rad/s^3, or m/s^3].
    """

    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray


@dataclass(frozen=True)
class RobotConfig:
    """The robot as configured, with its kinematics.

    Joint values are in rad for a revolute joint and in m for a prismatic one.

    Attributes:
        kinematics: Arm and needle (URDF limits inside).
        home_q: (J,) default pose where every case starts [rad, or m].
        joint_limit_margin: Planned motion keeps this far from the URDF position limits [rad, or m].
        limits: Commanding limits (velocity, acceleration, jerk).
        model: The robot of the registry the section names (its values are the defaults of every key).
    """

    kinematics: Kinematics
    home_q: np.ndarray
    joint_limit_margin: float
    limits: CommandLimits
    model: RobotModel = ROBOT_MODELS[DEFAULT_MODEL]

    def __post_init__(self) -> None:
        # read-only: a controller plugin given the robot in its context zeroed home_q in place, and every later case
        # started from zeros without a word; a copy keeps the caller's own array writable
        home = np.array(self.home_q, dtype=np.float64)
        home.flags.writeable = False
        object.__setattr__(self, "home_q", home)

    @property
    def q_lower(self) -> np.ndarray:
        """(J,) lowest joint values the planner may command (URDF limit + margin) [rad, or m]."""
        return self.kinematics.q_lower + self.joint_limit_margin

    @property
    def q_upper(self) -> np.ndarray:
        """(J,) highest joint values the planner may command (URDF limit - margin) [rad, or m]."""
        return self.kinematics.q_upper - self.joint_limit_margin

    @property
    def port_links(self) -> tuple[str, ...]:
        """Links that pass through the body wall at the remote centre of motion (exempt from skin clearance)."""
        return self.model.port_links

    @classmethod
    def from_config(cls, node: ConfigNode) -> RobotConfig:
        """Read and validate the ``robot`` section (``node`` is that section).

        Every key but ``model`` may be left out: it then takes the value of the model (``model`` names a robot of
        the registry, default ``xmate_er3_pro``).

        Args:
            node: The ``robot`` section.

        Raises:
            ConfigError: A key is unknown or out of range, the model is not registered (naming file and key),
                the URDF is unusable, or the home pose violates the joint limits.
        """
        node = node.with_renamed_keys(_OLD_KEYS)
        node.reject_unknown(_KEYS)
        model = model_of(node)
        kinematics = _kinematics(node, model)
        n = kinematics.n_joints
        margin = _scalar(node, "joint_limit_margin", model.joint_limit_margin, 0.2)
        home = _vector(node, "home_q", model.home_q, n)
        violations = kinematics.limit_violations(home, margin)
        if violations:
            where = node["home_q"] if node.has("home_q") else node
            raise where.error(
                f"home pose of {model.name!r} violates the joint limits (margin {margin} rad, or m for a prismatic "
                f"joint): {'; '.join(violations)}"
            )
        limits_node = node["limits"].with_renamed_keys(_OLD_LIMIT_KEYS) if node.has("limits") else None
        if limits_node is not None:
            limits_node.reject_unknown(_LIMIT_KEYS)
        vectors = {}
        for key in _LIMIT_KEYS:
            default = getattr(model, key)
            vector = (
                _vector(limits_node, key, default, n, _LIMIT_MAXIMA[key])
                if limits_node is not None
                else _checked(default, n, node)
            )
            if (vector < _LIMIT_MINIMUM).any():  # a jerk of 1e-6 rad/s^3 made a 365 s case of a 20 s one
                where = limits_node[key] if limits_node is not None and limits_node.has(key) else node
                raise where.error(f"limits.{key}: expected {n} numbers >= {_LIMIT_MINIMUM:g}, got {vector.tolist()!r}")
            vectors[key] = vector
        return cls(kinematics, home, margin, CommandLimits(**vectors), model)


def model_of(node: ConfigNode) -> RobotModel:
    """The registered robot the ``robot`` section names (``model``; default ``xmate_er3_pro``).

    Args:
        node: The ``robot`` section.

    Raises:
        ConfigError: ``model`` names no registered robot (the message lists them).
    """
    if not node.has("model"):
        return ROBOT_MODELS[DEFAULT_MODEL]
    name = node["model"].to_str(choices=tuple(ROBOT_MODELS))
    return ROBOT_MODELS[name]


def _scalar(node: ConfigNode, key: str, default: float, maximum: float) -> float:
    return node[key].to_float(minimum=0.0, maximum=maximum) if node.has(key) else float(default)


#: The largest commanding limit a configuration may give, per kind [rad or m per s, s^2, s^3]: far above any arm's
#: (the ER3 Pro: 2.6 rad/s, 20 rad/s^2, 7500 rad/s^3); 1e300 was taken
_LIMIT_MAXIMA = {"velocity": 100.0, "acceleration": 1e4, "jerk": 1e7}
#: The smallest commanding limit [rad or m per s, s^2, s^3]: an arm that slow is not moving
_LIMIT_MINIMUM = 1e-3


def _vector(
    node: ConfigNode | None, key: str, default: tuple[float, ...], n: int, maximum: float | None = None
) -> np.ndarray:
    if node is not None and node.has(key):
        return node[key].to_vector(n, maximum=maximum)
    assert node is not None
    return _checked(default, n, node)


def _checked(default: tuple[float, ...], n: int, node: ConfigNode) -> np.ndarray:
    """The model's vector, which must fit the URDF the section chose (a section may swap the URDF)."""
    if len(default) != n:
        raise node.error(
            f"the model's values have {len(default)} joints, the URDF {n}: give home_q and limits for this URDF"
        )
    return np.array(default, dtype=np.float64)


def urdf_path(node: ConfigNode) -> Path:
    """The URDF file the ``robot`` section ``node`` names, or its model's shipped one.

    ``urdf`` is relative to the configuration file, else to the package.

    Args:
        node: The configuration's ``robot`` section.

    Raises:
        ConfigError: An unknown model, or a ``urdf`` that is no file.
    """
    if not node.has("urdf"):
        return package_root() / model_of(node).urdf
    urdf_node = node["urdf"]
    path = urdf_node.to_path()
    if not path.is_file():  # a copied configuration still finds the shipped urdf/
        path = resolve_resource(Path(*[part for part in Path(urdf_node.to_str()).parts if part != ".."]))
    if not path.is_file():
        raise urdf_node.error(f"URDF file not found: {urdf_node.value!r}")
    return path


def _kinematics(node: ConfigNode, model: RobotModel) -> Kinematics:
    """Kinematics from ``urdf`` (relative to the config file, else to the package) and the needle length."""
    path = urdf_path(node)
    urdf_node = node["urdf"] if node.has("urdf") else node
    needle = (
        node["needle_length_m"].to_float(minimum=NEEDLE_LENGTH_M[0], maximum=NEEDLE_LENGTH_M[1])
        if node.has("needle_length_m")
        else model.needle_length_m
    )
    mount = node["mount_frame"].to_str() if node.has("mount_frame") else model.mount_frame
    try:
        return Kinematics.from_urdf(path, needle, mount)
    except RobotModelError as exc:
        raise urdf_node.error(str(exc)) from None
