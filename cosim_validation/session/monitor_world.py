"""What the monitor needs besides the samples, built once from the configuration (live node and replay)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cosim_validation.anatomy import load_anatomy
from cosim_validation.config import ConfigNode, load_case_config, load_config
from cosim_validation.properties import PropertySet
from cosim_validation.properties.context import DistanceField, SelfCollisionCheck, SelfDistance
from cosim_validation.properties.scene_context import scene_obstacles
from cosim_validation.robot import Kinematics, RobotConfig
from cosim_validation.robot.self_collision import SelfCollision
from cosim_validation.robot.self_distance import SelfDistance as ArmSelfDistance


@dataclass(frozen=True)
class MonitorWorld:
    """Properties and KPIs, the nominal arm, the forbidden regions, the arm's self-collision check and distance."""

    properties: PropertySet
    kinematics: Kinematics
    obstacles: dict[str, DistanceField]
    self_distance: SelfDistance
    self_collision: SelfCollisionCheck
    properties_root: ConfigNode  # the properties file as read (its optional ``topics`` section)


def load_monitor_world(config_path: str | Path, properties_path: str | Path) -> MonitorWorld:
    """Read the case-study configuration (robot, anatomy) and the properties file."""
    config = load_case_config(config_path)
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    root = load_config(properties_path)
    collision = SelfCollision(kinematics)
    return MonitorWorld(
        properties=PropertySet.from_config(root),
        kinematics=kinematics,
        obstacles=scene_obstacles(load_anatomy(config["anatomy"])),
        self_distance=ArmSelfDistance(collision),  # exact, ~80 us per sample: only properties naming it pay
        self_collision=collision.in_collision,  # the shipped no_self_collision: capsules first, MuJoCo near contact
        properties_root=root,
    )
