"""The ``tracker.marker`` section of an emulated robot: an optical tracker watching a marker on the last link.

Seed 001 measured the actual pose of a dVRK with an optically tracked marker on the robot's last link and a
fusionTrack 500 (Atracsys) about one metre away, then found the two unknown transforms by hand-eye calibration
(AX = YB). These are the true values of that set-up in the emulator; software under test is never told them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.anatomy import pose_from_config
from cosim_validation.common.config import ConfigNode

_KEYS = (
    "tool_to_marker",
    "base_to_tracker",
    "reference_distance_m",
    "range_m",
    "max_view_angle_rad",
    "fiducial_noise_std_m",
    "depth_noise_factor",
    "marker_radius_m",
    "registration_error_m",
    "registration_error_spread",
    "dropout_rate_hz",
    "dropout_duration_s",
)


@dataclass(frozen=True)
class OpticalTrackerConfig:
    """An optical (stereo, infrared) tracker and the marker it follows.

    Attributes:
        T_tool_marker: (4, 4) the marker in the tool (needle-tip) frame: X of AX = YB (hidden from calibration).
        T_base_tracker: (4, 4) the tracker's frame in base_link, its +z the viewing axis: Y (hidden too).
        reference_distance_m: Distance at which the noise and registration error have their stated values [m].
        range_m: (near, far) distances along the line of sight where the marker can be seen [m].
        max_view_angle_rad: Angle between the marker's normal (+z) and the line of sight beyond which the
            fiducials are not seen [rad].
        fiducial_noise_std_m: Noise of the marker position across the line of sight, face-on at the reference
            distance [m] (per axis).
        depth_noise_factor: Noise along the line of sight relative to across it (stereo triangulation).
        marker_radius_m: Spread of the fiducials; the orientation noise is the position noise over it [m].
        registration_error_m: Registration error the tracker reports (fiducial-fit RMS), face-on at the reference
            distance [m].
        registration_error_spread: Relative standard deviation of the reported registration error.
        dropout_rate_hz: Occlusions (a hand, a cable, the drape) start at this rate [1/s].
        dropout_duration_s: Mean length of an occlusion [s].
    """

    T_tool_marker: np.ndarray
    T_base_tracker: np.ndarray
    reference_distance_m: float
    range_m: tuple[float, float]
    max_view_angle_rad: float
    fiducial_noise_std_m: float
    depth_noise_factor: float
    marker_radius_m: float
    registration_error_m: float
    registration_error_spread: float
    dropout_rate_hz: float
    dropout_duration_s: float

    @classmethod
    def from_config(cls, node: ConfigNode) -> OpticalTrackerConfig:
        """Read a ``tracker.marker`` section (every key required: a tracker's set-up is explicit).

        Args:
            node: A ``tracker.marker`` section (e.g. ``backends.emulated.tracker.marker``).
        """
        node.reject_unknown(_KEYS)
        near, far = (float(v) for v in node["range_m"].to_vector(2))
        if not 0.0 < near < far <= 10.0:
            raise node["range_m"].error(f"expected [near, far] with 0 < near < far <= 10 m, got {[near, far]}")
        return cls(
            T_tool_marker=pose_from_config(node["tool_to_marker"], max_offset_m=1.0),
            T_base_tracker=pose_from_config(node["base_to_tracker"]),
            reference_distance_m=node["reference_distance_m"].to_float(exclusive_minimum=0.0, maximum=10.0),
            range_m=(near, far),
            max_view_angle_rad=node["max_view_angle_rad"].to_float(exclusive_minimum=0.0, maximum=np.pi / 2),
            fiducial_noise_std_m=node["fiducial_noise_std_m"].to_float(minimum=0.0, maximum=0.01),
            depth_noise_factor=node["depth_noise_factor"].to_float(minimum=1.0, maximum=20.0),
            marker_radius_m=node["marker_radius_m"].to_float(exclusive_minimum=0.0, maximum=0.5),
            registration_error_m=node["registration_error_m"].to_float(minimum=0.0, maximum=0.01),
            registration_error_spread=node["registration_error_spread"].to_float(minimum=0.0, maximum=1.0),
            dropout_rate_hz=node["dropout_rate_hz"].to_float(minimum=0.0, maximum=100.0),
            dropout_duration_s=node["dropout_duration_s"].to_float(exclusive_minimum=0.0, maximum=60.0),
        )
