"""The ``backends.emulated`` section: every error source of the emulated physical ER3 Pro."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.common.config.config_node import MAX_SEED, ConfigNode
from cosim_validation.robots.emulated.cable_transmission import CableTransmissionConfig
from cosim_validation.robots.emulated.optical_tracker_config import OpticalTrackerConfig
from cosim_validation.robots.virtual.config_vectors import joint_vector

#: The emulated arm's physics and servo period when ``backends.emulated.physics_timestep_s`` is not given [s]: the
#: 1 kHz cycle of the ER3 Pro's real-time interface (xCore SDK).
DEFAULT_EMULATED_TIMESTEP_S = 0.001


#: The finest encoder step taken, besides 0 (no quantisation): a 1e-9 rad step is about 32 bits per turn
MIN_RESOLUTION_RAD = 1e-9


@dataclass(frozen=True)
class KinematicErrorConfig:
    """How far the real arm's geometry is from the URDF (standard deviations of normal draws).

    Attributes:
        joint_zero_offset_std_rad: Encoder zero (mastering) error of every joint [rad].
        link_length_error_std_m: Error of every joint origin along its z axis (link length) [m].
        needle_length_error_std_m: Error of the needle length beyond ``needle_mount`` [m].
    """

    joint_zero_offset_std_rad: float
    link_length_error_std_m: float
    needle_length_error_std_m: float

    @classmethod
    def from_config(cls, node: ConfigNode) -> KinematicErrorConfig:
        """Read ``backends.emulated.kinematics``.

        Args:
            node: The ``backends.emulated.kinematics`` section.
        """
        node.reject_unknown(["joint_zero_offset_std_rad", "link_length_error_std_m", "needle_length_error_std_m"])
        return cls(
            joint_zero_offset_std_rad=node["joint_zero_offset_std_rad"].to_float(minimum=0.0, maximum=0.1),
            link_length_error_std_m=node["link_length_error_std_m"].to_float(minimum=0.0, maximum=0.01),
            needle_length_error_std_m=node["needle_length_error_std_m"].to_float(minimum=0.0, maximum=0.01),
        )


@dataclass(frozen=True)
class DynamicsErrorConfig:
    """Mechanical effects the nominal model does not have.

    Attributes:
        link_mass_error_rel_std: Relative standard deviation of each body's mass (and inertia); the servo
            still compensates the nominal gravity, leaving a steady-state error under gravity.
        coulomb_friction_nm: (J,) dry joint friction [N m]; the arm sticks short of the reference by up
            to friction / kp, on the side it came from.
        lost_motion_rad: (J,) full width of the gear play [rad] between motor (encoder) and link.
        joint_stiffness_nm_per_rad: (J,) torsional stiffness of each gear [N m/rad]; the link lags the
            motor by the transmitted torque / stiffness.
    """

    link_mass_error_rel_std: float
    coulomb_friction_nm: np.ndarray
    lost_motion_rad: np.ndarray
    joint_stiffness_nm_per_rad: np.ndarray

    @classmethod
    def from_config(cls, node: ConfigNode, n_joints: int) -> DynamicsErrorConfig:
        """Read ``backends.emulated.dynamics``.

        Args:
            node: The ``backends.emulated.dynamics`` section.
            n_joints: Number of joints J, the length of each per-joint list.
        """
        node.reject_unknown(
            ["link_mass_error_rel_std", "coulomb_friction_nm", "lost_motion_rad", "joint_stiffness_nm_per_rad"]
        )
        return cls(
            link_mass_error_rel_std=node["link_mass_error_rel_std"].to_float(minimum=0.0, maximum=0.3),
            coulomb_friction_nm=joint_vector(node["coulomb_friction_nm"], n_joints, minimum=0.0),
            lost_motion_rad=joint_vector(node["lost_motion_rad"], n_joints, minimum=0.0, maximum=0.1),
            # up to 1e15: a stiffness of 1e12 is how a rigid joint is written
            joint_stiffness_nm_per_rad=joint_vector(
                node["joint_stiffness_nm_per_rad"], n_joints, exclusive_minimum=0.0, maximum=1e15
            ),
        )


@dataclass(frozen=True)
class EncoderConfig:
    """The joint encoders.

    Attributes:
        noise_std_rad: White noise on every reading [rad].
        resolution_rad: Quantisation step [rad]; 0 for none.
    """

    noise_std_rad: float
    resolution_rad: float

    @classmethod
    def from_config(cls, node: ConfigNode) -> EncoderConfig:
        """Read ``backends.emulated.encoder``.

        Args:
            node: The ``backends.emulated.encoder`` section.
        """
        node.reject_unknown(["noise_std_rad", "resolution_rad"])
        resolution = node["resolution_rad"].to_float(minimum=0.0, maximum=0.01)
        if 0.0 < resolution < MIN_RESOLUTION_RAD:  # a subnormal step overflowed the quantisation to inf
            raise node["resolution_rad"].error(
                f"expected 0 (no quantisation) or a step >= {MIN_RESOLUTION_RAD:g} rad, got {resolution!r}"
            )
        return cls(noise_std_rad=node["noise_std_rad"].to_float(minimum=0.0, maximum=0.01), resolution_rad=resolution)


@dataclass(frozen=True)
class TrackerConfig:
    """The external tracker that reports the actual needle-tip pose.

    Attributes:
        position_noise_std_m: White noise on each position axis [m].
        orientation_noise_std_rad: White noise on each axis of the orientation's rotation vector [rad].
        marker: An optical tracker following a marker on the last link (raw marker poses for hand-eye
            calibration and error learning, [Barragan et al. 2024]), or None.
    """

    position_noise_std_m: float
    orientation_noise_std_rad: float
    marker: OpticalTrackerConfig | None = None

    @classmethod
    def from_config(cls, node: ConfigNode) -> TrackerConfig:
        """Read ``backends.emulated.tracker``.

        Args:
            node: The ``backends.emulated.tracker`` section.
        """
        node.reject_unknown(["position_noise_std_m", "orientation_noise_std_rad", "marker"])
        marker = node.get("marker")
        return cls(
            position_noise_std_m=node["position_noise_std_m"].to_float(minimum=0.0, maximum=0.01),
            orientation_noise_std_rad=node["orientation_noise_std_rad"].to_float(minimum=0.0, maximum=0.1),
            marker=None if marker is None else OpticalTrackerConfig.from_config(marker),
        )


@dataclass(frozen=True)
class EmulatedArmConfig:
    """The emulated physical arm.

    Attributes:
        seed: Seed of every random draw (geometry, masses, noise): same seed, same arm, same readings.
        reset_settle_s: How long the arm holds the reset pose (servo settling) before the clock starts [s].
        command_latency_s: Delay from a command to the servo reference starting to move [s].
        kinematics: Geometry errors.
        dynamics: Mass, friction, gear play and gear stiffness.
        encoder: Joint encoders.
        tracker: External tip tracker.
        transmission: The cable transmission's ratio and coupling errors (cable-driven arms); None: ideal.
        physics_timestep_s: The emulated arm's physics and servo period [s]: its controller's cycle (the ER3 Pro's
            real-time interface: 1 ms). Its own key, not ``backends.physics_timestep_s``: the emulated friction,
            play and command latency are resolved in these steps, while a virtual engine may take longer ones.
    """

    seed: int
    reset_settle_s: float
    command_latency_s: float
    kinematics: KinematicErrorConfig
    dynamics: DynamicsErrorConfig
    encoder: EncoderConfig
    tracker: TrackerConfig
    transmission: CableTransmissionConfig | None = None
    physics_timestep_s: float = DEFAULT_EMULATED_TIMESTEP_S

    @classmethod
    def from_config(cls, node: ConfigNode, n_joints: int = 7) -> EmulatedArmConfig:
        """Read ``backends.emulated``.

        Args:
            node: The ``backends.emulated`` section.
            n_joints: Number of joints J of the arm, the length of the per-joint lists (``dynamics``) and the bound of
                the ``transmission`` joint indices.
        """
        node.reject_unknown(
            [
                "seed",
                "reset_settle_s",
                "command_latency_s",
                "kinematics",
                "dynamics",
                "encoder",
                "tracker",
                "transmission",
                "physics_timestep_s",
            ]
        )
        transmission = node.get("transmission")
        timestep = node.get("physics_timestep_s")
        return cls(
            seed=node["seed"].to_int(minimum=0, maximum=MAX_SEED),
            reset_settle_s=node["reset_settle_s"].to_float(minimum=0.0, maximum=60.0),
            command_latency_s=node["command_latency_s"].to_float(minimum=0.0, maximum=1.0),
            kinematics=KinematicErrorConfig.from_config(node["kinematics"]),
            dynamics=DynamicsErrorConfig.from_config(node["dynamics"], n_joints),
            encoder=EncoderConfig.from_config(node["encoder"]),
            tracker=TrackerConfig.from_config(node["tracker"]),
            transmission=None if transmission is None else CableTransmissionConfig.from_config(transmission, n_joints),
            physics_timestep_s=(
                DEFAULT_EMULATED_TIMESTEP_S if timestep is None else timestep.to_float(minimum=1e-5, maximum=0.01)
            ),
        )
