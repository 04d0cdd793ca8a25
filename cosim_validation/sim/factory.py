"""Building a backend by name from the configuration."""

from __future__ import annotations

from cosim_validation.config import ConfigNode
from cosim_validation.robot import Kinematics
from cosim_validation.sim.backends_config import BACKEND_NAMES, BackendsConfig
from cosim_validation.sim.errors import BackendInputError, BackendModelError
from cosim_validation.sim.robot_backend import RobotBackend


def make_backend(
    name: str | None,
    config: ConfigNode,
    kinematics: Kinematics,
    *,
    seed: int | None = None,
) -> RobotBackend:
    """The backend ``name`` for the arm of ``kinematics`` (its URDF and needle).

    Args:
        name: ``mujoco``, ``pybullet`` or ``emulated``; None for ``backends.default``.
        config: The whole configuration (its ``backends`` section is read and validated).
        kinematics: The nominal arm and needle.
        seed: For ``emulated``, overrides ``backends.emulated.seed``; ignored by the deterministic simulators.

    Raises:
        BackendInputError: Unknown name (the message lists the valid ones).
        ConfigError: A bad value in ``backends`` (naming file and key).
        BackendModelError: The engine cannot build the arm.
    """
    node = config["backends"]
    shared = BackendsConfig.from_config(node, kinematics.n_joints)
    chosen = shared.default if name is None else name
    if chosen not in BACKEND_NAMES:
        raise BackendInputError(f"unknown backend {name!r}; expected one of: {', '.join(BACKEND_NAMES)}")
    backend: RobotBackend
    if chosen == "mujoco":
        from cosim_validation.sim.mujoco_backend import MujocoBackend

        backend = MujocoBackend(shared, kinematics)
    elif chosen == "pybullet":
        from cosim_validation.sim.pybullet_backend import PybulletBackend

        backend = PybulletBackend(shared, kinematics)
    else:
        from cosim_validation.hardware.emulated_config import EmulatedArmConfig
        from cosim_validation.hardware.emulated_er3_pro import EmulatedEr3Pro

        emulated = EmulatedArmConfig.from_config(node["emulated"], kinematics.n_joints)
        backend = EmulatedEr3Pro(shared, emulated, kinematics, seed=seed)
    if backend.joint_names != kinematics.joint_names:
        backend.close()
        raise BackendModelError(
            f"{chosen} joints {backend.joint_names} differ from the kinematics' joints {kinematics.joint_names}"
        )
    return backend
