"""Everything a case needs, built once from the configuration: robot, anatomy, planner, controllers, validator."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cosim_validation.anatomy import AnatomyScene, load_anatomy
from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import InputError
from cosim_validation.controllers.collection_controller import COLLECTION_KIND, CollectionController
from cosim_validation.controllers.controller import Controller
from cosim_validation.controllers.controllers_config import CONTROLLER_NAMES, ControllersConfig
from cosim_validation.controllers.guarded_controller import GuardedController
from cosim_validation.controllers.joint_space_controller import JOINT_SPACE_KINDS, JointSpaceController
from cosim_validation.controllers.moveit_spec import MOVEIT_NAME, MOVEIT_TARGET
from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.controllers.planning.five_stage_planner import FiveStagePlanner
from cosim_validation.controllers.planning.planning_config import PlanningConfig
from cosim_validation.controllers.planning.state_validator import StateValidator, ValidatorSettings
from cosim_validation.controllers.plugin_api import ControllerContext, RunLogs
from cosim_validation.controllers.plugin_controllers import ClosedLoopPlugin, build_plugin
from cosim_validation.controllers.plugin_loader import PluginSpec, entry_points, plugin_of_name
from cosim_validation.controllers.straight_controller import StraightController
from cosim_validation.robots.model import RobotConfig


@dataclass(frozen=True)
class InsertionSetup:
    """The configured case study (sections ``robot``, ``anatomy``, ``planning``, ``controllers``, ``validator``).

    Build it once per process (loading the anatomy and the collision models takes about a second) and plan
    many cases with its controllers.
    """

    robot: RobotConfig
    scene: AnatomyScene
    planning: PlanningConfig
    controllers: ControllersConfig
    validator_settings: ValidatorSettings
    world: CollisionWorld
    planner: FiveStagePlanner
    config_path: Path = Path()

    @classmethod
    def from_config(cls, root: ConfigNode) -> InsertionSetup:
        """Read and validate the sections from the configuration root.

        Args:
            root: The configuration root (its sections ``robot``, ``anatomy``, ``planning``, ``controllers`` and
                ``validator`` are read).
        """
        robot = RobotConfig.from_config(root["robot"])
        scene = load_anatomy(root["anatomy"])
        planning = PlanningConfig.from_config(root["planning"])
        check_needle_reserve(root, robot, planning)
        world = CollisionWorld(scene)
        return cls(
            robot=robot,
            scene=scene,
            planning=planning,
            controllers=ControllersConfig.from_config(root["controllers"]),
            validator_settings=ValidatorSettings.from_config(root["validator"]),
            world=world,
            planner=FiveStagePlanner(robot, planning, world),
            config_path=Path(root.source),
        )

    def controller(self, name: str | None = None, logs: RunLogs | None = None) -> Controller | ClosedLoopPlugin:
        """The controller ``name``; a plugin's factory is called each time.

        ``name`` is ``straight``, ``guarded``, ``joint_goals``, ``teleoperation``, ``error_collection``, ``moveit``, an
        entry point of a user's package or an import path ``module:attribute``; None: ``controllers.default``, with its
        options when it is a plugin.

        Args:
            name: The controller's name (see above); None for ``controllers.default``.
            logs: Where a plugin may keep logs; None: nowhere (:class:`RunLogs` without a folder).

        Raises:
            InputError, ConfigError: An unknown name, or a plugin that cannot be built (naming where it was named).
        """
        chosen = self.controllers.default if name is None else name
        if self.controllers.plugin is not None and chosen == self.controllers.plugin.name:
            return build_plugin(self.controllers.plugin, self.context(chosen, logs))
        if chosen == "straight":
            return StraightController(self.planner)
        if chosen == "guarded":
            return GuardedController(self.planner, self.controllers.guarded)
        if chosen in JOINT_SPACE_KINDS:
            settings = self.controllers.joint_space
            return JointSpaceController(chosen, self.robot, self.planning, settings, self.planner.checker)
        if chosen == COLLECTION_KIND:
            return CollectionController(self.robot, self.controllers.collection)
        if chosen == MOVEIT_NAME:  # its ROS client lives in layer live: found by import path like a plugin
            options = self.controllers.moveit.options()
            where = str(self.config_path)
            moveit = PluginSpec(MOVEIT_NAME, MOVEIT_TARGET, options, source=where, key="controllers.moveit")
            return build_plugin(moveit, self.context(MOVEIT_NAME, logs))
        spec = plugin_of_name(chosen)
        if spec is None:
            known = ", ".join(dict.fromkeys((*CONTROLLER_NAMES, *sorted(entry_points()))))  # a name once
            raise InputError(f"unknown controller {name!r}; expected one of: {known} or an import path module:attr")
        return build_plugin(spec, self.context(chosen, logs))

    def context(self, name: str, logs: RunLogs | None = None) -> ControllerContext:
        """What a plugin factory is given about this case study (``logs``: where it may keep logs).

        Args:
            name: The controller's name, as the plugin is told it.
            logs: Where the plugin may keep logs; None: nowhere (:class:`RunLogs` without a folder).
        """
        return ControllerContext(
            name=name,
            robot=self.robot,
            kinematics=self.robot.kinematics,
            dt_s=self.planning.dt_s,
            scene=self.scene,
            world=self.world,
            planner=self.planner,
            config_path=self.config_path,
            logs=RunLogs() if logs is None else logs,
        )

    def state_validator(self) -> StateValidator:
        """A fresh state validator at the planning sampling period."""
        return StateValidator(self.robot, self.world, self.validator_settings, self.planning.dt_s)


def check_needle_reserve(root: ConfigNode, robot: RobotConfig, planning: PlanningConfig) -> None:
    """Refuse a needle reserve that leaves nothing to insert (every case would be refused as too deep).

    An instrument that enters through a port at its remote centre of motion (the dVRK PSM, the Raven-II) goes in
    as deep as the arm reaches (:attr:`FiveStagePlanner.max_depth_m`): its reserve is not used, and not checked.

    Args:
        root: The configuration root (for the error's file and key).
        robot: Its ``robot`` section, read.
        planning: Its ``planning`` section, read.

    Raises:
        ConfigError: ``planning.needle_reserve_m`` is not less than ``robot.needle_length_m``.
    """
    length = robot.kinematics.needle_length_m
    if not robot.port_links and planning.needle_reserve_m >= length:
        raise root["planning"]["needle_reserve_m"].error(
            f"{planning.needle_reserve_m:g} m leaves none of the {length:g} m needle (robot.needle_length_m) to "
            "insert, so every case would be refused; expected less than the needle's length"
        )
