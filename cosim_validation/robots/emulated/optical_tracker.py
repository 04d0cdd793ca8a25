"""An optical tracker following a marker on the robot's last link.

It is the instrument of [Barragan et al. 2024]'s actual poses.

What a stereo infrared tracker reports per frame, for one rigid marker (Atracsys fusionTrack user manual, section
"Information provided by the fusionTrack device"): the marker's position and orientation in the tracker's frame and
a registration error, the RMS of the least-squares fit of the marker geometry to the measured fiducials; nothing
when the fiducials are not seen. The emulation:

- the marker sits on the tool at ``T_tool_marker`` and the tracker in base_link at ``T_base_tracker`` (the X and Y
  of hand-eye calibration, AX = YB); the marker pose reported is ``inv(T_base_tracker) T_base_tool T_tool_marker``
  of the *true* tool pose, plus noise;
- noise grows with the square of the distance (stereo triangulation) and with the foreshortening of the marker
  (1 / cos of the angle between its normal and the line of sight); along the line of sight it is
  ``depth_noise_factor`` times larger than across it (the depth of a stereo pair is its weakest axis); the
  orientation noise is the position noise over the fiducials' spread;
- the reported registration error follows the same field (distance and viewing angle), with a random spread:
  samples with a large registration error are the noisy ones, as on a real tracker;
- the marker is not seen outside the range along the line of sight, beyond the maximum viewing angle, or during
  an occlusion (occlusions start at ``dropout_rate_hz`` and last ``dropout_duration_s`` on average).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from cosim_validation.common.record import NO_MARKER_POS, NO_MARKER_QUAT
from cosim_validation.robots.emulated.optical_tracker_config import OpticalTrackerConfig
from cosim_validation.robots.emulated.tracker_kernels import marker_pose, noisy_marker


class MarkerReading(NamedTuple):
    """One frame of the tracker for the marker.

    Attributes:
        pos_m: (3,) marker position in the tracker's frame [m]; NaN when not seen.
        quat_wxyz: (4,) marker orientation in the tracker's frame (w >= 0); NaN when not seen.
        registration_error_m: Reported registration error (fiducial-fit RMS) [m]; NaN when not seen.
    """

    pos_m: np.ndarray
    quat_wxyz: np.ndarray
    registration_error_m: float

    @property
    def seen(self) -> bool:
        """Whether the tracker saw the marker."""
        return math.isfinite(self.registration_error_m)


#: The reading of a frame in which the marker was not seen.
NOT_SEEN = MarkerReading(NO_MARKER_POS, NO_MARKER_QUAT, math.nan)


class OpticalTracker:
    """Reports the marker of one tool, frame by frame.

    Args:
        config: The set-up (true transforms) and the tracker's error model.
        rng: The tracker's random stream (restart it per case for reproducible cases).
    """

    def __init__(self, config: OpticalTrackerConfig, rng: np.random.Generator) -> None:
        self.config = config
        self._rng = rng
        self._T_tracker_base = np.linalg.inv(config.T_base_tracker)
        self._occluded = False
        self._last_t_s: float | None = None

    def true_marker_pose(self, tool_pos_m: np.ndarray, tool_quat_wxyz: np.ndarray) -> np.ndarray:
        """(4, 4) the marker's true pose in the tracker's frame, for the true tool pose in base_link.

        Args:
            tool_pos_m: The tool's position in base_link, shape (3,), in [m].
            tool_quat_wxyz: The tool's orientation in base_link, (w, x, y, z), shape (4,).

        Returns:
            T_tracker_marker, shape (4, 4), translation in [m].
        """
        T, _, _ = marker_pose(self._T_tracker_base, self.config.T_tool_marker, tool_pos_m, tool_quat_wxyz)
        return T

    def measure(self, t_s: float, tool_pos_m: np.ndarray, tool_quat_wxyz: np.ndarray) -> MarkerReading:
        """The frame at time ``t_s`` [s] of the true tool pose ((3,) [m], (4,) wxyz in base_link).

        Args:
            t_s: The frame's time, in [s] (drives the occlusion process).
            tool_pos_m: The tool's true position in base_link, shape (3,), in [m].
            tool_quat_wxyz: The tool's true orientation in base_link, (w, x, y, z), shape (4,).

        Returns:
            The marker's noisy pose in the tracker's frame and the registration error, or :data:`NOT_SEEN`.
        """
        c = self.config
        visible = self._update_occlusion(t_s)
        T, distance, cos_view = marker_pose(self._T_tracker_base, c.T_tool_marker, tool_pos_m, tool_quat_wxyz)
        near, far = c.range_m
        if not visible or not near <= distance <= far or cos_view < math.cos(c.max_view_angle_rad):
            return NOT_SEEN
        scale = (distance / c.reference_distance_m) ** 2 / cos_view
        registration = c.registration_error_m * scale * max(0.0, 1.0 + c.registration_error_spread * self._rng.normal())
        across = c.fiducial_noise_std_m * scale
        noise = self._rng.normal(0.0, across, 3)  # the stretch along the line of sight is the kernel's
        rotation_noise = self._rng.normal(0.0, across / c.marker_radius_m, 3)
        position, quat = noisy_marker(T, distance, noise, rotation_noise, c.depth_noise_factor)
        return MarkerReading(position, quat, registration)

    def _update_occlusion(self, t_s: float) -> bool:
        """Advance the occlusion process to ``t_s``; whether the line of sight is free."""
        c = self.config
        dt = 0.0 if self._last_t_s is None else max(0.0, t_s - self._last_t_s)
        self._last_t_s = t_s
        draw = self._rng.random()  # one draw per frame either way: the stream does not depend on the state
        if self._occluded:
            self._occluded = draw >= -math.expm1(-dt / c.dropout_duration_s)
        else:
            self._occluded = draw < -math.expm1(-dt * c.dropout_rate_hz)
        return not self._occluded
