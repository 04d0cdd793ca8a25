"""The ``campaign:`` section: the property set checked on every case, which engine plays which robot.

.. code-block:: yaml

    campaign:
      properties: properties.yaml       # property set and KPIs (relative to the configuration file)
      robots: {virtual: mujoco, physical: emulated}   # engine behind each robot named in --backends
      safety_property: needle_outside_forbidden_regions   # its violation makes a case "error-triggering"
      supervisor: supervisor/supervisor.yaml  # optional: every case runs under the task supervisor (docs/SUPERVISOR.md)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.registry import ENGINES

#: Engine names and the robot each one plays (from the backend registry).
ENGINE_ROLES: dict[str, RobotRole] = {name: e.role for name, e in ENGINES.items()}
ROBOT_NAMES: tuple[str, ...] = ("virtual", "physical")


@dataclass(frozen=True)
class CampaignConfig:
    """Validated ``campaign`` section.

    Attributes:
        properties_path: The property file (absolute).
        robots: Engine name per robot role (``virtual``, ``physical``).
        safety_property: Property whose violation counts as an error-triggering case in the tables.
        supervisor_path: The task supervisor's configuration every case runs under, or None (no supervisor).
    """

    properties_path: Path
    robots: dict[str, str]
    safety_property: str
    supervisor_path: Path | None = None

    @classmethod
    def from_config(cls, node: ConfigNode, properties_path: str | Path | None = None) -> CampaignConfig:
        """Read the ``campaign`` section (``node`` is that section).

        Args:
            node: The ``campaign`` section of the case-study configuration; its relative paths are relative to the
                configuration file.
            properties_path: The property file to use when the section's ``properties`` is not found (a run's own
                copy: the section names the original relative to a folder a moved run directory no longer has).
        """
        node.reject_unknown(("properties", "robots", "safety_property", "supervisor"))
        robots_node = node["robots"]
        robots_node.reject_unknown(ROBOT_NAMES)
        robots = {}
        for role in ROBOT_NAMES:
            choices = [name for name, r in ENGINE_ROLES.items() if r.label == role]
            robots[role] = robots_node[role].to_str(choices=choices)
        try:
            path = node["properties"].to_file("property file").resolve()
        except ConfigError:
            if not properties_path:
                raise
            path = Path(properties_path).resolve()  # the original is not where a moved run's copy names it
        supervisor = node.get("supervisor")
        supervisor_path = supervisor.to_file("supervisor configuration").resolve() if supervisor is not None else None
        return cls(path, robots, _safety_property(node["safety_property"], path), supervisor_path)

    def engines(self, backends: Sequence[str]) -> tuple[str, ...]:
        """Engine names for ``backends`` (robot names such as ``virtual`` or engine names), one per robot.

        Args:
            backends: Robot names (``virtual``, ``physical``: the engine :attr:`robots` gives it) or engine names
                (``mujoco``, ``emulated``, ...), as ``--backends`` lists them; at least one.

        Raises:
            InputError: An unknown name, or two engines for the same robot.
        """
        if not backends:
            raise InputError("--backends: name at least one robot (virtual, physical) or engine")
        engines: dict[RobotRole, str] = {}
        for name in backends:
            engine = self.robots.get(name, name)
            if engine not in ENGINE_ROLES:
                known = ", ".join((*ROBOT_NAMES, *ENGINE_ROLES))
                raise InputError(f"--backends: unknown backend {name!r}; expected some of: {known}")
            role = ENGINE_ROLES[engine]
            if role in engines:
                raise InputError(f"--backends: two backends for the {role.label} robot ({engines[role]!r}, {engine!r})")
            engines[role] = engine
        return tuple(engines[role] for role in sorted(engines))


def _safety_property(node: ConfigNode, properties_path: Path) -> str:
    """The safety property's name, which must be a property of the campaign's property file.

    An unknown name would count no case as error-triggering and drop Tables 2 and 3.
    """
    from cosim_validation.monitor.properties import PropertySet

    name = node.to_str()
    names = [spec.name for spec in PropertySet.load(properties_path).properties]
    if name not in names:
        raise node.error(f"{name!r} is not a property of {str(properties_path)!r}; expected one of: {', '.join(names)}")
    return name
