"""Robot models from ``urdf/``: forward kinematics, needle-tip pose, Jacobian, limits."""

from cosim_validation.robot.errors import KinematicsInputError, RobotModelError, UnreachableError
from cosim_validation.robot.kinematic_chain import KinematicChain, load_chain
from cosim_validation.robot.kinematics import Kinematics, RecordKinematics, TipPose
from cosim_validation.robot.robot_config import CommandLimits, RobotConfig

__all__ = [
    "CommandLimits",
    "KinematicChain",
    "Kinematics",
    "KinematicsInputError",
    "RecordKinematics",
    "RobotConfig",
    "RobotModelError",
    "TipPose",
    "UnreachableError",
    "load_chain",
]
