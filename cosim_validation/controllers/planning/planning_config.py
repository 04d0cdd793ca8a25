"""The ``planning:`` section: sampling rate, speeds along the lines, joint-motion headroom, clearances."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.common.config.config_node import MAX_CLEARANCE_M, MAX_POINT_M, MAX_SEED, ConfigNode
from cosim_validation.controllers.planning.cartesian_line import CartesianLimits

_KEYS = (
    "sampling_rate_hz",
    "default_source_m",
    "standoff_m",
    "needle_reserve_m",
    "joint_velocity_scale",
    "joint_acceleration_scale",
    "approach",
    "injection",
    "arm_clearance_m",
    "collision_step_rad",
    "ompl",
)
_LINE_KEYS = ("velocity_m_s", "acceleration_m_s2", "jerk_m_s3")
#: The tip limits of a straight stage a needle insertion can have: slow enough for an hour's case at the least (a
#: velocity of 1e-9 m/s or a jerk of 1e-15 m/s^3 ended the time scaling in a traceback), at most what no arm reaches
#: (a velocity of 1e9 m/s was taken)
_LINE_RANGES = dict(zip(_LINE_KEYS, ((1e-3, 10.0), (1e-3, 1e3), (1e-3, 1e6)), strict=True))
_OMPL_KEYS = ("planner", "time_limit_s", "seed")
OMPL_PLANNERS = ("RRTConnect", "RRT", "RRTstar")


#: The smallest fraction of the arm's joint speed and acceleration limits planned motion may use
MIN_SCALE = 0.01


@dataclass(frozen=True)
class OmplSettings:
    """Joint-space planning when the straight joint move is blocked.

    Attributes:
        planner: OMPL geometric planner name.
        time_limit_s: Planning time limit [s].
        seed: Seed of OMPL's random generator (deterministic plans).
    """

    planner: str = "RRTConnect"
    time_limit_s: float = 2.0
    seed: int = 0


@dataclass(frozen=True)
class PlanningConfig:
    """How a case is planned (see config/needle_insertion.yaml, section ``planning``).

    Attributes:
        sampling_rate_hz: Setpoint rate of the plan [Hz] ([Actuators 2025]: 10 Hz).
        default_source_m: (3,) source point in base_link when a case gives none [m].
        standoff_m: Pre-entry point this far outside the skin on the insertion line [m].
        needle_reserve_m: The needle goes in at most (needle length - reserve), so the holder stays out [m].
        joint_velocity_scale: Fraction of the commanding velocity limits used by planned motion.
        joint_acceleration_scale: Fraction of the commanding acceleration limits used by planned motion.
        approach: Tip limits of the approach (and of the reset, its reverse).
        injection: Tip limits of the injection (and of the extraction, its reverse).
        arm_clearance_m: Arm links and holder stay this far outside the skin [m].
        collision_step_rad: Joint-space motion is collision-checked at least this finely [rad].
        ompl: Joint-space planner settings.
    """

    sampling_rate_hz: float
    default_source_m: np.ndarray
    standoff_m: float
    needle_reserve_m: float
    joint_velocity_scale: float
    joint_acceleration_scale: float
    approach: CartesianLimits
    injection: CartesianLimits
    arm_clearance_m: float
    collision_step_rad: float
    ompl: OmplSettings

    @property
    def dt_s(self) -> float:
        """Sample period [s]."""
        return 1.0 / self.sampling_rate_hz

    @classmethod
    def from_config(cls, node: ConfigNode) -> PlanningConfig:
        """Read and validate the ``planning`` section (``node`` is that section).

        Args:
            node: The ``planning`` section.
        """
        node.reject_unknown(_KEYS)
        ompl = node["ompl"]
        ompl.reject_unknown(_OMPL_KEYS)
        return cls(
            # at least 1 Hz: slower setpoints are no motion plan a servo can follow (the shipped plans use 10 Hz)
            sampling_rate_hz=node["sampling_rate_hz"].to_float(minimum=1.0, maximum=1000.0),
            default_source_m=node["default_source_m"].to_vector(3, minimum=-MAX_POINT_M, maximum=MAX_POINT_M),
            standoff_m=node["standoff_m"].to_float(minimum=0.0, maximum=0.5),
            needle_reserve_m=node["needle_reserve_m"].to_float(minimum=0.0),
            # at least 1 %: at 0.1 % a move of the case study took 19 min, and below 1e-6 the jerk-limited time
            # parametrisation fails (ruckig)
            joint_velocity_scale=node["joint_velocity_scale"].to_float(minimum=MIN_SCALE, maximum=1.0),
            joint_acceleration_scale=node["joint_acceleration_scale"].to_float(minimum=MIN_SCALE, maximum=1.0),
            approach=_line_limits(node["approach"]),
            injection=_line_limits(node["injection"]),
            arm_clearance_m=node["arm_clearance_m"].to_float(minimum=0.0, maximum=MAX_CLEARANCE_M),
            # 1e-12 rad asked for a 368 GiB array of checked configurations
            collision_step_rad=node["collision_step_rad"].to_float(minimum=1e-4, maximum=0.5),
            ompl=OmplSettings(
                planner=ompl["planner"].to_str(choices=OMPL_PLANNERS),
                time_limit_s=ompl["time_limit_s"].to_float(minimum=1e-3, maximum=3600.0),
                seed=ompl["seed"].to_int(minimum=0, maximum=MAX_SEED),
            ),
        )


def _line_limits(node: ConfigNode) -> CartesianLimits:
    node.reject_unknown(_LINE_KEYS)
    return CartesianLimits(
        *(node[key].to_float(minimum=low, maximum=high) for key, (low, high) in _LINE_RANGES.items())
    )
