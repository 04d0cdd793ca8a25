"""What the monitor needs besides the samples, built in one place for every mode.

The campaign, the live monitor node, ``cosim replay`` and ``cosim check`` all load it with
:func:`load_monitor_world`: the property set (with its KPIs and behaviour machines), the nominal arm,
the forbidden regions of the anatomy, and the arm's self-collision check and distance. A case's
:class:`~cosim_validation.monitor.properties.MonitorContext` comes from :meth:`MonitorWorld.context`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from cosim_validation.anatomy import AnatomyScene, load_anatomy
from cosim_validation.common.config import ConfigNode, load_case_config, load_config
from cosim_validation.monitor.properties import MonitorContext, PropertySet
from cosim_validation.monitor.properties.context import DistanceField, SelfCollisionCheck
from cosim_validation.monitor.properties.scene_context import scene_obstacles
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.robots.model.self_collision import SelfCollision
from cosim_validation.robots.model.self_distance import SelfDistance


@dataclass
class MonitorWorld:
    """Properties and KPIs, the nominal arm, the forbidden regions, the arm's self-collision check and distance.

    Attributes:
        properties: The property set (its KPIs and machines included).
        kinematics: The nominal arm with the configured needle.
        obstacles: The scene's forbidden regions, by name.
        collision: The arm's self-collision model (the configured needle).
        properties_root: The properties file as read (its optional ``topics`` section, for replay).
        repairs: What ``repair: true`` did to the anatomy, one dict per repaired model (for ``--json``).
        repair_lines: The same as text (:meth:`AnatomyScene.repair_lines`), shown by every mode that uses it.
    """

    properties: PropertySet
    kinematics: Kinematics
    obstacles: dict[str, DistanceField]
    collision: SelfCollision
    properties_root: ConfigNode
    repairs: list[dict[str, object]] = field(default_factory=list)
    repair_lines: list[str] = field(default_factory=list)
    _by_needle: dict[float, SelfCollision] = field(default_factory=dict, repr=False)

    @property
    def self_collision(self) -> SelfCollisionCheck:
        """The shipped ``no_self_collision``'s check: capsules first, MuJoCo near contact."""
        return self.collision.in_collision

    @property
    def self_distance(self) -> SelfDistance:
        """Exact distance between non-adjacent parts (~80 us per sample: only properties naming it pay)."""
        return SelfDistance(self.collision)

    def collision_for(self, needle_length_m: float) -> SelfCollision:
        """The self-collision model with a needle of ``needle_length_m`` [m] (built once per length).

        Args:
            needle_length_m: The needle's length, in [m].
        """
        if needle_length_m == self.kinematics.needle_length_m:
            return self.collision
        if needle_length_m not in self._by_needle:
            self._by_needle[needle_length_m] = SelfCollision(self.kinematics.with_needle_length(needle_length_m))
        return self._by_needle[needle_length_m]

    def context(self, target_m: np.ndarray | None = None, needle_length_m: float | None = None) -> MonitorContext:
        """The monitor context of a case: the arm's joints, the needle, the obstacles, the target [m].

        Args:
            target_m: The case's target in base_link, shape (3,), in [m], or None.
            needle_length_m: The needle's length in [m]; None: the kinematics' needle.
        """
        needle = self.kinematics.needle_length_m if needle_length_m is None else float(needle_length_m)
        collision = self.collision_for(needle)
        return MonitorContext(
            joint_names=self.kinematics.joint_names,
            needle_length_m=needle,
            obstacles=self.obstacles,
            self_distance=SelfDistance(collision),
            target_m=target_m,
            self_collision=collision.in_collision,
            prismatic=tuple(self.kinematics.chain.prismatic.tolist()),
            q_lower=tuple(self.kinematics.q_lower.tolist()),
            q_upper=tuple(self.kinematics.q_upper.tolist()),
        )


def monitor_world(
    config: ConfigNode,
    properties_path: str | Path,
    *,
    kinematics: Kinematics | None = None,
    scene: AnatomyScene | None = None,
    collision: SelfCollision | None = None,
) -> MonitorWorld:
    """The monitor's world from a loaded configuration (pass what the caller built already to share it).

    Args:
        config: The loaded case-study configuration (its ``robot`` and ``anatomy`` sections).
        properties_path: The property file.
        kinematics: The nominal arm with its needle; None: built from ``robot``.
        scene: The anatomy; None: loaded from ``anatomy``.
        collision: The arm's self-collision model; None: built from ``kinematics``.
    """
    kinematics = kinematics or RobotConfig.from_config(config["robot"]).kinematics
    scene = scene or load_anatomy(config["anatomy"])
    root = load_config(properties_path)
    return MonitorWorld(
        properties=PropertySet.from_config(root),
        kinematics=kinematics,
        obstacles=scene_obstacles(scene),
        collision=collision or SelfCollision(kinematics),
        properties_root=root,
        repairs=scene.repairs(),
        repair_lines=scene.repair_lines(),
    )


def load_monitor_world(config_path: str | Path, properties_path: str | Path) -> MonitorWorld:
    """Read the case-study configuration (robot, anatomy) and the properties file.

    Args:
        config_path: The case-study configuration file.
        properties_path: The property file.
    """
    return monitor_world(load_case_config(config_path), properties_path)


def monitor_world_of(config_path: str | Path, properties_path: str | Path = "") -> MonitorWorld:
    """The world of a case-study configuration and a property file.

    ``properties_path`` "" stands for the configuration's ``campaign.properties``. Both files are found like shipped
    resources (``config/...`` works from anywhere).

    Args:
        config_path: The case-study configuration file.
        properties_path: The property file; "" for the configuration's ``campaign.properties``.
    """
    from cosim_validation.assembly.campaign_config import CampaignConfig
    from cosim_validation.common.config import resolve_resource

    config = load_case_config(resolve_resource(config_path))
    if properties_path:
        path = resolve_resource(properties_path)
    else:
        path = CampaignConfig.from_config(config["campaign"]).properties_path
    return monitor_world(config, path)
