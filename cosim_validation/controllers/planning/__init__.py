"""The five-stage needle-insertion plan, its time scaling and collision checks, and the state validator."""

from cosim_validation.controllers.planning.cartesian_line import CartesianLimits, line_motion
from cosim_validation.controllers.planning.case_check import as_point, check_case
from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.controllers.planning.errors import PlanningError
from cosim_validation.controllers.planning.five_stage_planner import FiveStagePlanner
from cosim_validation.controllers.planning.joint_motion import joint_line, joint_polyline, limit_ratios
from cosim_validation.controllers.planning.motion_checker import MotionChecker, densify
from cosim_validation.controllers.planning.plan import InsertionLine, Plan
from cosim_validation.controllers.planning.planning_config import OmplSettings, PlanningConfig
from cosim_validation.controllers.planning.state_validator import (
    SetpointVerdict,
    StateValidator,
    ValidatorSettings,
    validated_setpoints,
)
from cosim_validation.controllers.planning.time_scaling import profile_samples

__all__ = [
    "CartesianLimits",
    "CollisionWorld",
    "FiveStagePlanner",
    "InsertionLine",
    "MotionChecker",
    "OmplSettings",
    "Plan",
    "PlanningConfig",
    "PlanningError",
    "SetpointVerdict",
    "StateValidator",
    "ValidatorSettings",
    "as_point",
    "check_case",
    "densify",
    "joint_line",
    "joint_polyline",
    "limit_ratios",
    "line_motion",
    "profile_samples",
    "validated_setpoints",
]
