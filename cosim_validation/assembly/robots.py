"""Building the robot that plays a role in a case: the one place the batch runner and the driver nodes get it.

The registry (:mod:`cosim_validation.robots.registry`) builds the engine; whatever wraps a robot (injected learned
errors, injected hazards) is applied here, so it is present in a campaign, in ``cosim run-case`` and behind a
session's driver nodes alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from cosim_validation.common.config import ConfigNode
from cosim_validation.robots.filters.robot_filter import FilteredBackend
from cosim_validation.robots.filters.robot_filters import make_filters
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.robot_backend import RobotBackend


def build_robot(
    config: ConfigNode,
    engine_name: str | None,
    kinematics: Kinematics | None = None,
    seed: int | None = None,
    filters: Sequence[str] = (),
) -> RobotBackend:
    """The robot ``engine_name`` (None: ``backends.default``) of the case study ``config``, seen through ``filters``.

    Args:
        config: The case-study configuration.
        engine_name: A registry name (``mujoco``, ``pybullet``, ``emulated``) or None.
        kinematics: The nominal arm and needle (default: the configuration's ``robot`` section).
        seed: Seed of an emulated arm's drawn errors (None: ``backends.emulated.seed``).
        filters: ``KIND:OPTIONS`` of each layer around the robot, innermost first
            (:mod:`~cosim_validation.robots.filters.robot_filters`); live, the proxy node applies the same ones.
    """
    kinematics = kinematics or RobotConfig.from_config(config["robot"]).kinematics
    layers = make_filters(config, filters, kinematics)  # bad options fail before an engine is built
    backend = make_backend(engine_name, config, kinematics, seed=seed)
    return FilteredBackend(backend, layers) if layers else backend
