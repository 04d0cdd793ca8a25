"""Joining a CRTK arm's answers to the setpoints a driver sent.

Which ``measured_js`` (and tracker frames) answer which ``servo_jp``.

An emulated arm stamps its answer with the setpoint's stamp; a real one with its own clock, at its own rate.
Either way the answer to the oldest unanswered setpoint is the first message of each kind whose stamp is not
older than it. A sample is complete once it has its joints and, when a tracker is used, the tip and the marker.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.common.record import NO_MARKER_POS, NO_MARKER_QUAT
from cosim_validation.robots.robot_backend import BackendSample

_UNKNOWN_POS = np.full(3, np.nan)
_UNKNOWN_QUAT = np.full(4, np.nan)


class AnswerJoiner:
    """Setpoints waiting for their answers, in the order they were sent.

    Args:
        joint_names: Names of the J joints.
        tracked: Whether the tracker's tip and marker belong to every answer (else they are NaN: unknown).
    """

    def __init__(self, joint_names: tuple[str, ...], tracked: bool) -> None:
        self._names = joint_names
        self._tracked = tracked
        self._pending: list[tuple[int, np.ndarray, dict[str, Any]]] = []

    def clear(self) -> None:
        """Forget every unanswered setpoint (a new case)."""
        self._pending.clear()

    def expect(self, stamp_ns: int, q_setpoint: np.ndarray) -> None:
        """A setpoint ((J,) rad, or m for a prismatic joint) was sent stamped ``stamp_ns``.

        Args:
            stamp_ns: The setpoint's stamp in [ns].
            q_setpoint: The commanded joints, shape (J,), in [rad] (or [m] for a prismatic joint).
        """
        self._pending.append((int(stamp_ns), np.asarray(q_setpoint, dtype=np.float64), {}))

    def joints(self, stamp_ns: int, q_measured: np.ndarray) -> tuple[int, BackendSample] | None:
        """A ``measured_js``; the setpoint's stamp and its sample if that is now complete.

        Args:
            stamp_ns: The message's stamp in [ns]: the setpoint's (an emulated arm) or the arm's own clock.
            q_measured: The measured joints, shape (J,), in [rad] (or [m] for a prismatic joint).
        """
        return self._add(stamp_ns, "q", np.asarray(q_measured, dtype=np.float64))

    def tip(self, stamp_ns: int, pos_m: np.ndarray, quat_wxyz: np.ndarray) -> tuple[int, BackendSample] | None:
        """The tracker's tip (base_link); the setpoint's stamp and its sample if that is now complete.

        Args:
            stamp_ns: The message's stamp in [ns].
            pos_m: The tip's position in base_link, shape (3,), in [m].
            quat_wxyz: The tip's orientation in base_link, a quaternion (w, x, y, z), shape (4,).
        """
        return self._add(stamp_ns, "tip", (pos_m, quat_wxyz)) if self._tracked else None

    def marker(self, frame: Any) -> tuple[int, BackendSample] | None:
        """The tracker's marker (a ``convert.MarkerFrame``); the stamp and the sample if now complete.

        Args:
            frame: One tracker frame of the marker: its stamp [ns], its pose in the tracker's frame [m] and its
                registration error [m] (NaN: not seen).
        """
        return self._add(frame.t_ns, "marker", frame) if self._tracked else None

    def _add(self, stamp_ns: int, key: str, value: Any) -> tuple[int, BackendSample] | None:
        for i, (t_ns, q_set, parts) in enumerate(self._pending):
            if key in parts or t_ns > stamp_ns:
                continue
            parts[key] = value
            if "q" not in parts or (self._tracked and len(parts) < 3):
                return None
            del self._pending[i]
            return t_ns, _sample(q_set, parts)
        return None


def _sample(q_setpoint: np.ndarray, parts: dict[str, Any]) -> BackendSample:
    pos, quat = parts.get("tip", (_UNKNOWN_POS, _UNKNOWN_QUAT))
    marker = parts.get("marker")
    if marker is None:
        return BackendSample(0.0, q_setpoint, parts["q"], pos, quat, NO_MARKER_POS, NO_MARKER_QUAT, float("nan"))
    return BackendSample(
        0.0, q_setpoint, parts["q"], pos, quat, marker.position_m, marker.quat_wxyz, marker.registration_error_m
    )
