"""What the monitor needs besides the samples, built once from the configuration (live node and replay)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cosim_validation.anatomy import load_anatomy
from cosim_validation.config import ConfigNode, load_config
from cosim_validation.properties import PropertySet
from cosim_validation.properties.context import DistanceField, SelfDistance
from cosim_validation.properties.scene_context import scene_obstacles
from cosim_validation.robot import Kinematics, RobotConfig
from cosim_validation.robot.self_collision import SelfCollision
from cosim_validation.robot.self_distance import SelfDistance as ArmSelfDistance


@dataclass(frozen=True)
class MonitorWorld:
    """Properties and KPIs, the nominal arm, the forbidden regions and the arm's self distance."""

    properties: PropertySet
    kinematics: Kinematics
    obstacles: dict[str, DistanceField]
    self_distance: SelfDistance
    properties_root: ConfigNode  # the properties file as read (its optional ``topics`` section)


def load_monitor_world(config_path: str | Path, properties_path: str | Path) -> MonitorWorld:
    """Read the case-study configuration (robot, anatomy) and the properties file."""
    config = load_config(config_path)
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    root = load_config(properties_path)
    return MonitorWorld(
        properties=PropertySet.from_config(root),
        kinematics=kinematics,
        obstacles=scene_obstacles(load_anatomy(config["anatomy"])),
        self_distance=ArmSelfDistance(SelfCollision(kinematics)),
        properties_root=root,
    )
