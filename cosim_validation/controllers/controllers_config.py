"""The ``controllers:`` section: which controller runs by default and the guarded controller's settings."""

from __future__ import annotations

from dataclasses import dataclass

from cosim_validation.config import ConfigNode

CONTROLLER_NAMES: tuple[str, ...] = ("straight", "guarded")
_KEYS = ("default", "guarded")
_GUARDED_KEYS = ("clearance_m", "n_directions", "max_deviation_rad", "max_attempts")


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
    """Attributes: ``default`` controller name; ``guarded`` settings."""

    default: str
    guarded: GuardedSettings

    @classmethod
    def from_config(cls, node: ConfigNode) -> ControllersConfig:
        """Read and validate the ``controllers`` section (``node`` is that section)."""
        node.reject_unknown(_KEYS)
        guarded = node["guarded"]
        guarded.reject_unknown(_GUARDED_KEYS)
        return cls(
            default=node["default"].to_str(choices=CONTROLLER_NAMES),
            guarded=GuardedSettings(
                clearance_m=guarded["clearance_m"].to_float(minimum=0.0),
                n_directions=guarded["n_directions"].to_int(minimum=1, maximum=100_000),
                max_deviation_rad=guarded["max_deviation_rad"].to_float(minimum=0.0, maximum=3.1416),
                max_attempts=guarded["max_attempts"].to_int(minimum=1),
            ),
        )
