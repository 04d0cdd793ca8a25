"""Physical robots behind the sim protocol; here the emulated ER3 Pro (a perturbed twin with real errors)."""

from cosim_validation.hardware.arm_perturbation import ArmPerturbation
from cosim_validation.hardware.emulated_config import (
    DynamicsErrorConfig,
    EmulatedArmConfig,
    EncoderConfig,
    KinematicErrorConfig,
    TrackerConfig,
)
from cosim_validation.hardware.emulated_er3_pro import EmulatedEr3Pro
from cosim_validation.hardware.external_tracker import ExternalTracker
from cosim_validation.hardware.joint_encoder import JointEncoder
from cosim_validation.hardware.lost_motion import LostMotion

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
