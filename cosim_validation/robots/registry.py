"""The robots a case can run on, by name: virtual engines (``robots/virtual``) and physical arms (``robots/emulated``).

This registry sits above both packages, so neither imports the other: ``robots/virtual`` holds the engines and
the shared servo, ``robots/emulated`` the emulated physical arms (built on those engines), and this module names
them::

    backend = make_backend("emulated", config, kinematics, seed=None)   # or "mujoco", "pybullet", "coppeliasim", ...
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.optional import imported
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import RobotBackend
from cosim_validation.robots.virtual.backends_config import BackendsConfig
from cosim_validation.robots.virtual.errors import BackendInputError, BackendModelError

Builder = Callable[[ConfigNode, BackendsConfig, Kinematics, "int | None"], RobotBackend]


class Engine(NamedTuple):
    """One backend the registry can build.

    Attributes:
        name: Its name in configuration and on the command line.
        role: VIRTUAL (a simulator) or PHYSICAL (a real arm or its emulator).
        build: ``(backends section, shared settings, kinematics, seed) -> backend``.
        summary: One line for help texts and ``cosim doctor``.
        hosted: Whether a driver node can host it in a session (``physical_driver``, ``virtual_driver``, an
            emulator's ``backend``); not a robot that is itself reached over ROS 2, which a session reaches with its
            own driver node.
        settings: ``module:function`` that checks the engine's own part of ``backends`` (the section -> its
            settings, raising ConfigError; imported when used, and light: no ROS), "" for none; so a run fails on
            a bad value before any robot is built.
    """

    name: str
    role: RobotRole
    build: Builder
    summary: str
    hosted: bool = True
    settings: str = ""

    def check_settings(self, backends: ConfigNode) -> None:
        """Check the engine's own part of the ``backends`` section (nothing when it has none).

        Args:
            backends: The ``backends`` section.

        Raises:
            ConfigError: A bad value, naming file and key.
        """
        if self.settings:
            imported(self.settings)(backends.get(self.name))


def _mujoco(node: ConfigNode, shared: BackendsConfig, kinematics: Kinematics, seed: int | None) -> RobotBackend:
    from cosim_validation.robots.virtual.mujoco_backend import MujocoBackend

    return MujocoBackend(shared, kinematics)


def _pybullet(node: ConfigNode, shared: BackendsConfig, kinematics: Kinematics, seed: int | None) -> RobotBackend:
    from cosim_validation.robots.virtual.pybullet_backend import PybulletBackend

    return PybulletBackend(shared, kinematics)


def _coppeliasim(node: ConfigNode, shared: BackendsConfig, kinematics: Kinematics, seed: int | None) -> RobotBackend:
    from cosim_validation.robots.virtual.coppeliasim_backend import CoppeliaSimBackend
    from cosim_validation.robots.virtual.coppeliasim_config import CoppeliaSimConfig

    return CoppeliaSimBackend(shared, CoppeliaSimConfig.from_config(node.get("coppeliasim")), kinematics)


def _emulated(node: ConfigNode, shared: BackendsConfig, kinematics: Kinematics, seed: int | None) -> RobotBackend:
    from cosim_validation.robots.emulated.emulated_config import EmulatedArmConfig
    from cosim_validation.robots.emulated.emulated_er3_pro import EmulatedEr3Pro

    emulated = EmulatedArmConfig.from_config(node["emulated"], kinematics.n_joints)
    return EmulatedEr3Pro(shared, emulated, kinematics, seed=seed)


#: The ROS 2 robots live above the ROS-free core and are found by import path, as the robot filters are.
_ROS2_CONTROL = "cosim_validation.live.nodes.ros2_control_robot"


def _ros2_control(node: ConfigNode, shared: BackendsConfig, kinematics: Kinematics, seed: int | None) -> RobotBackend:
    builder: Builder = imported(f"{_ROS2_CONTROL}:build")
    return builder(node, shared, kinematics, seed)


ENGINES: dict[str, Engine] = {
    engine.name: engine
    for engine in (
        Engine("mujoco", RobotRole.VIRTUAL, _mujoco, "MuJoCo, the default virtual robot (1 kHz servo)"),
        Engine("pybullet", RobotRole.VIRTUAL, _pybullet, "PyBullet, the second physics engine"),
        Engine("coppeliasim", RobotRole.VIRTUAL, _coppeliasim, "CoppeliaSim through its ZeroMQ remote API"),
        Engine("emulated", RobotRole.PHYSICAL, _emulated, "the emulated physical arm (perturbed twin)"),
        Engine(
            "ros2_control",
            RobotRole.PHYSICAL,
            _ros2_control,
            "the arm behind a ros2_control controller manager (rokae_ros2), over ROS 2",
            hosted=False,
            settings="cosim_validation.live.session.node_parameters:ros2_control_settings",
        ),
    )
}

#: Names accepted by :func:`make_backend`, in registry order.
BACKEND_NAMES: tuple[str, ...] = tuple(ENGINES)
#: The engines a session's driver node can host (the others are reached by a driver node of their own).
HOSTED_NAMES: tuple[str, ...] = tuple(name for name, e in ENGINES.items() if e.hosted)


def engine(name: str) -> Engine:
    """The registered engine ``name``.

    Args:
        name: A name of :data:`BACKEND_NAMES` (``mujoco``, ``pybullet``, ``coppeliasim``, ``emulated``).

    Raises:
        BackendInputError: Unknown name (the message lists the valid ones).
    """
    if name not in ENGINES:
        raise BackendInputError(f"unknown backend {name!r}; expected one of: {', '.join(BACKEND_NAMES)}")
    return ENGINES[name]


def default_backend(config: ConfigNode) -> str:
    """``backends.default`` of the configuration, checked against the registry.

    Args:
        config: The whole configuration (its ``backends.default`` is read).
    """
    node = config["backends"]["default"]
    return node.to_str(choices=BACKEND_NAMES)


def make_backend(
    name: str | None,
    config: ConfigNode,
    kinematics: Kinematics,
    *,
    seed: int | None = None,
) -> RobotBackend:
    """The backend ``name`` for the arm of ``kinematics`` (its URDF and needle).

    Args:
        name: A name of :data:`BACKEND_NAMES`; None for ``backends.default``.
        config: The whole configuration (its ``backends`` section is read and validated).
        kinematics: The nominal arm and needle.
        seed: For a physical (emulated) arm, overrides ``backends.emulated.seed``; ignored by the
            deterministic simulators.

    Raises:
        BackendInputError: Unknown name (the message lists the valid ones).
        ConfigError: A bad value in ``backends`` (naming file and key).
        BackendModelError: The engine cannot build the arm.
    """
    node = config["backends"]
    shared = BackendsConfig.from_config(node, kinematics.n_joints)
    chosen = engine(default_backend(config) if name is None else name)
    backend = chosen.build(node, shared, kinematics, seed)
    if backend.joint_names != kinematics.joint_names:
        backend.close()
        raise BackendModelError(
            f"{chosen.name} joints {backend.joint_names} differ from the kinematics' joints {kinematics.joint_names}"
        )
    return backend
