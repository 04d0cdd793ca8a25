"""Robot models from ``urdf/``: forward and inverse kinematics, needle-tip pose, Jacobian, limits, collisions."""

from cosim_validation.robots.model.arm_capsules import ArmCapsules
from cosim_validation.robots.model.errors import KinematicsInputError, RobotModelError
from cosim_validation.robots.model.inverse_kinematics import IkResult, IkSettings, InverseKinematics, PathIkResult
from cosim_validation.robots.model.kinematic_chain import (
    JOINT_TYPE_NAMES,
    PRISMATIC,
    REVOLUTE,
    KinematicChain,
    load_chain,
)
from cosim_validation.robots.model.kinematics import Kinematics, RecordKinematics, TipPose
from cosim_validation.robots.model.robot_config import CommandLimits, RobotConfig, model_of
from cosim_validation.robots.model.robot_models import ROBOT_MODELS, RobotModel, robot_model
from cosim_validation.robots.model.self_collision import SelfCollision

__all__ = [
    "JOINT_TYPE_NAMES",
    "PRISMATIC",
    "REVOLUTE",
    "ROBOT_MODELS",
    "ArmCapsules",
    "CommandLimits",
    "IkResult",
    "IkSettings",
    "InverseKinematics",
    "KinematicChain",
    "Kinematics",
    "KinematicsInputError",
    "PathIkResult",
    "RecordKinematics",
    "RobotConfig",
    "RobotModel",
    "RobotModelError",
    "SelfCollision",
    "TipPose",
    "load_chain",
    "model_of",
    "robot_model",
]
