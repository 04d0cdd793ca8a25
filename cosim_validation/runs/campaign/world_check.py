"""Checking, in the calling process, every section a campaign's workers will read, before the run starts.

A worker builds its world (anatomy, robot, planner, engines, properties) in its own process; a bad value
found there used to end the campaign with a traceback from a broken process pool, after the results
database had been created. The checks here read and validate every section without building
the heavy parts (collision models, MuJoCo), so the run directory is never touched for a bad configuration,
and they give the anatomy, whose repairs the run records.
"""

from __future__ import annotations

from collections.abc import Sequence

from cosim_validation.anatomy import AnatomyScene, load_anatomy
from cosim_validation.assembly.campaign_config import CampaignConfig
from cosim_validation.common.config import ConfigNode
from cosim_validation.controllers import ControllersConfig
from cosim_validation.controllers.planning import PlanningConfig, ValidatorSettings
from cosim_validation.monitor.properties import PropertySet
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.virtual.backends_config import BackendsConfig


def check_world_config(config: ConfigNode, campaign: CampaignConfig, engines: Sequence[str]) -> AnatomyScene:
    """Validate the sections a worker reads for ``engines``; return the anatomy (with its repair reports).

    Raises:
        ConfigError, InputError: The first bad value, naming the file and the key.
        MeshDefectError: A model that is not a usable solid, or whose repair removes too much.
    """
    robot = RobotConfig.from_config(config["robot"])
    scene = load_anatomy(config["anatomy"])
    PlanningConfig.from_config(config["planning"])
    ControllersConfig.from_config(config["controllers"])
    ValidatorSettings.from_config(config["validator"])
    n_joints = robot.kinematics.n_joints
    BackendsConfig.from_config(config["backends"], n_joints)
    if "emulated" in engines:
        from cosim_validation.robots.emulated import EmulatedArmConfig

        EmulatedArmConfig.from_config(config["backends"]["emulated"], n_joints)
    PropertySet.load(campaign.properties_path)
    return scene


def check_controller(config: ConfigNode, controller: str) -> None:
    """Build a user's controller plugin once here (its factory runs with the options and the case study).

    A factory that raises or returns an object without a contract is then an error naming the user's file, not the
    run directory's copy; so is ``moveit``, whose factory waits for move_group's services. The other built-in
    controllers need nothing more than :func:`check_world_config`.

    Raises:
        ConfigError, InputError: The plugin cannot be built (naming the file and key, or the option).
    """
    from cosim_validation.controllers import CONTROLLER_NAMES, InsertionSetup
    from cosim_validation.controllers.moveit_spec import MOVEIT_NAME
    from cosim_validation.controllers.plugin_controllers import release

    if controller not in CONTROLLER_NAMES or controller == MOVEIT_NAME:  # moveit: is move_group there?
        release(InsertionSetup.from_config(config).controller(controller))
