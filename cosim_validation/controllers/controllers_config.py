"""The ``controllers:`` section of the configuration.

Which controller runs by default, the guarded controller's settings and the shape of joint-space cases (``joint_space``,
optional: defaults of :class:`JointSpaceSettings`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cosim_validation.common.config import ConfigNode
from cosim_validation.common.config.config_node import MAX_CLEARANCE_M
from cosim_validation.common.exceptions import InputError
from cosim_validation.controllers.moveit_spec import MoveItSettings, moveit_settings
from cosim_validation.controllers.planning.collection_motion import CollectSettings
from cosim_validation.controllers.planning.joint_space_motion import JointSpaceSettings
from cosim_validation.controllers.plugin_controllers import import_factory
from cosim_validation.controllers.plugin_loader import PluginSpec, entry_points, plugin_of_name, plugin_of_node

CONTROLLER_NAMES: tuple[str, ...] = (
    "straight",
    "guarded",
    "joint_goals",
    "teleoperation",
    "error_collection",
    "moveit",
)
_KEYS = ("default", "guarded", "joint_space", "collection", "moveit")
_GUARDED_KEYS = ("clearance_m", "n_directions", "max_deviation_rad", "max_attempts")
_JOINT_SPACE_KEYS = ("goals", "range_fraction", "hold_s", "teleoperation_s", "max_frequency_hz", "max_attempts")


@dataclass(frozen=True)
class GuardedSettings:
    """How the guarded controller searches for a safe insertion direction.

    Attributes:
        clearance_m: The whole needle path keeps at least this distance from every forbidden region [m].
        n_directions: Candidate directions on the unit sphere (Fibonacci lattice, deterministic).
        max_deviation_rad: Candidates deviate at most this much from the source-to-target direction [rad].
        max_attempts: Full plans tried (in order of deviation) before refusing.
    """

    clearance_m: float = 0.01
    n_directions: int = 2000
    max_deviation_rad: float = 0.8
    max_attempts: int = 8


@dataclass(frozen=True)
class ControllersConfig:
    """The ``controllers:`` section, read and validated.

    Attributes:
        default: The default controller's name.
        guarded: The guarded controller's settings.
        joint_space: The shape of joint-space cases.
        collection: The ``error_collection`` case ([Barragan et al. 2024]'s data collection; its ``seed`` is unused
            there: a case draws from its case seed).
        plugin: The default controller when it is a user's plugin (its factory importable and callable), else None.
        moveit: How the ``moveit`` controller talks to move_group (docs/MOVEIT.md).
    """

    default: str
    guarded: GuardedSettings
    joint_space: JointSpaceSettings = field(default_factory=JointSpaceSettings)
    collection: CollectSettings = field(default_factory=CollectSettings)
    plugin: PluginSpec | None = None
    moveit: MoveItSettings = field(default_factory=MoveItSettings)

    @classmethod
    def from_config(cls, node: ConfigNode) -> ControllersConfig:
        """Read and validate the ``controllers`` section (``node`` is that section).

        Args:
            node: The ``controllers`` section.
        """
        node.reject_unknown(_KEYS)
        guarded = node["guarded"]
        guarded.reject_unknown(_GUARDED_KEYS)
        plugin = default_plugin(node["default"])
        return cls(
            default=node["default"].to_str() if plugin is None else plugin.name,
            guarded=GuardedSettings(
                clearance_m=guarded["clearance_m"].to_float(minimum=0.0, maximum=MAX_CLEARANCE_M),
                n_directions=guarded["n_directions"].to_int(minimum=1, maximum=100_000),
                max_deviation_rad=guarded["max_deviation_rad"].to_float(minimum=0.0, maximum=3.1416),
                max_attempts=guarded["max_attempts"].to_int(minimum=1),
            ),
            joint_space=_joint_space(node["joint_space"]) if node.has("joint_space") else JointSpaceSettings(),
            collection=_collection(node["collection"]) if node.has("collection") else CollectSettings(),
            plugin=plugin,
            moveit=moveit_settings(node["moveit"]) if node.has("moveit") else MoveItSettings(),
        )


def default_plugin(node: ConfigNode) -> PluginSpec | None:
    """The plugin ``controllers.default`` names, or None for a built-in controller.

    The plugin's factory is imported to check it, within the plugin's ``call_limit_s``.

    Args:
        node: The ``controllers.default`` node: a name (built-in, entry point, or import path ``module:attribute``) or a
            mapping with ``plugin``, ``entry_point`` or ``external``.

    Raises:
        ConfigError: Neither a built-in name, an entry point nor an import path; a factory that cannot be loaded.
    """
    if isinstance(node.value, dict):
        spec = plugin_of_node(node)
    else:
        name = node.to_str()
        if name in CONTROLLER_NAMES:
            return None
        found = plugin_of_name(name, node.source, node.key)
        if found is None:
            known = ", ".join((*CONTROLLER_NAMES, *sorted(entry_points())))
            raise node.error(
                f"unknown controller {name!r}; expected one of: {known}, an import path 'module:attribute' or a "
                "mapping with 'plugin' or 'entry_point'"
            )
        spec = found
    import_factory(spec)
    return spec


def _joint_space(node: ConfigNode) -> JointSpaceSettings:
    """The ``joint_space`` section; a key left out keeps its default."""
    node.reject_unknown(_JOINT_SPACE_KEYS)
    default = JointSpaceSettings()

    def number(key: str, **bounds: float) -> float:
        return node[key].to_float(**bounds) if node.has(key) else float(getattr(default, key))

    def count(key: str, maximum: int) -> int:
        return node[key].to_int(minimum=1, maximum=maximum) if node.has(key) else int(getattr(default, key))

    return JointSpaceSettings(
        goals=count("goals", 1000),
        range_fraction=number("range_fraction", exclusive_minimum=0.0, maximum=1.0),
        hold_s=number("hold_s", minimum=0.0, maximum=60.0),
        teleoperation_s=number("teleoperation_s", minimum=2.5, maximum=3600.0),
        max_frequency_hz=number("max_frequency_hz", exclusive_minimum=0.0, maximum=5.0),
        max_attempts=count("max_attempts", 100_000),
    )


_COLLECTION_COUNTS = ("goals", "repeats")


def _collection(node: ConfigNode) -> CollectSettings:
    """The ``collection`` section (keys of :class:`CollectSettings` but ``seed``); a key left out keeps its default."""
    default = CollectSettings()
    keys = tuple(k for k in vars(default) if k != "seed")
    node.reject_unknown(keys)
    given: dict[str, float | int] = {}
    for key in keys:
        if node.has(key):
            given[key] = node[key].to_int(minimum=1) if key in _COLLECTION_COUNTS else node[key].to_float()
    try:
        return CollectSettings(**given)  # type: ignore[arg-type]
    except InputError as exc:
        raise node.error(str(exc)) from None
