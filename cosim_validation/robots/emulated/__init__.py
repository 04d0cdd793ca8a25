"""Physical robots behind the sim protocol; here the emulated ER3 Pro (a perturbed twin with real errors)."""

from cosim_validation.robots.emulated.arm_perturbation import ArmPerturbation
from cosim_validation.robots.emulated.emulated_config import (
    DynamicsErrorConfig,
    EmulatedArmConfig,
    EncoderConfig,
    KinematicErrorConfig,
    TrackerConfig,
)
from cosim_validation.robots.emulated.emulated_er3_pro import EmulatedEr3Pro
from cosim_validation.robots.emulated.external_tracker import ExternalTracker
from cosim_validation.robots.emulated.joint_encoder import JointEncoder
from cosim_validation.robots.emulated.lost_motion import LostMotion

__all__ = [
    "ArmPerturbation",
    "DynamicsErrorConfig",
    "EmulatedArmConfig",
    "EmulatedEr3Pro",
    "EncoderConfig",
    "ExternalTracker",
    "JointEncoder",
    "KinematicErrorConfig",
    "LostMotion",
    "TrackerConfig",
]
