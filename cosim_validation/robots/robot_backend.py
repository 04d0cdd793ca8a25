"""The one protocol every robot implements: virtual robots (physics engines) and physical ones.

A backend is driven in simulated or real time by four calls: :meth:`RobotBackend.reset` puts the arm at
rest at a joint vector, :meth:`RobotBackend.command` streams a joint setpoint, :meth:`RobotBackend.advance`
lets time pass, :meth:`RobotBackend.read` samples the arm. ROS driver nodes wrap a backend; the batch
runner (:func:`cosim_validation.robots.virtual.execute.execute_trajectory`) calls it directly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.exceptions import CosimError
from cosim_validation.common.record import NO_MARKER_POS, NO_MARKER_QUAT, RobotRole


class ArmLostError(CosimError):
    """A robot that is one arm reached over a network (``ros2_control``) stopped answering: no later case can run.

    A campaign stops at it (the case is not stored) and says how to continue once the arm answers again.
    """


class BackendSample(NamedTuple):
    """One sample of a robot.

    Attributes:
        t_s: Time since the last reset [s].
        q_setpoint: (J,) the last commanded joint setpoint [rad] (the reset pose before any command).
        q_measured: (J,) measured joint positions [rad]: the simulator state, or the encoders.
        actual_tip_pos_m: (3,) actual needle-tip position in base_link [m]: simulator ground truth or an
            external tracker; NaN where the robot cannot know it.
        actual_tip_quat_wxyz: (4,) actual needle-tip orientation (tip +z along the needle); NaN if unknown.
        marker_pos_m: (3,) position of the tool's marker in an optical tracker's frame (not base_link) [m]; NaN if
            the robot has no such tracker or it did not see the marker.
        marker_quat_wxyz: (4,) orientation of the marker in the tracker's frame; NaN likewise.
        marker_error_m: The tracker's registration error for this frame [m]; NaN likewise.
    """

    t_s: float
    q_setpoint: np.ndarray
    q_measured: np.ndarray
    actual_tip_pos_m: np.ndarray
    actual_tip_quat_wxyz: np.ndarray
    marker_pos_m: np.ndarray = NO_MARKER_POS
    marker_quat_wxyz: np.ndarray = NO_MARKER_QUAT
    marker_error_m: float = math.nan


def marker_arrays(samples: Sequence[BackendSample]) -> dict[str, np.ndarray]:
    """The marker fields of ``samples`` as a record's arrays.

    ``marker_pos_m`` (n, 3), ``marker_quat_wxyz`` (n, 4), ``marker_error_m`` (n,).

    Args:
        samples: The n samples, in time order.
    """
    n = len(samples)
    return {
        "marker_pos_m": np.array([s.marker_pos_m for s in samples], dtype=np.float64).reshape(n, 3),
        "marker_quat_wxyz": np.array([s.marker_quat_wxyz for s in samples], dtype=np.float64).reshape(n, 4),
        "marker_error_m": np.array([s.marker_error_m for s in samples], dtype=np.float64).reshape(n),
    }


class JointSet:
    """The joint names and position limits of a backend's arm, as the :class:`RobotBackend` protocol exposes them.

    A backend derives from it and sets ``_joint_names`` ((J,) names), ``_joint_units`` ((J,) ``rad`` or ``m``),
    ``_q_lower`` and ``_q_upper`` ((J,) limits [rad, m for a prismatic joint]) in its constructor; the limits are
    handed out as copies.
    """

    _joint_names: tuple[str, ...]
    _joint_units: tuple[str, ...]
    _q_lower: np.ndarray
    _q_upper: np.ndarray

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the J joints."""
        return self._joint_names

    @property
    def joint_units(self) -> tuple[str, ...]:
        """The unit of each joint's position: ``rad``, or ``m`` for a prismatic joint."""
        return self._joint_units

    @property
    def q_lower(self) -> np.ndarray:
        """(J,) lower joint limits [rad, or m for a prismatic joint]."""
        return self._q_lower.copy()

    @property
    def q_upper(self) -> np.ndarray:
        """(J,) upper joint limits [rad, or m for a prismatic joint]."""
        return self._q_upper.copy()


@runtime_checkable
class Reseedable(Protocol):
    """An optional capability of a robot or filter with random streams (an emulated arm's noise, a hazard's draws).

    The case's seed is given before each reset, so a case's noise depends on the case only.
    """

    def reseed(self, case_seed: int) -> None:
        """Restart the random streams from ``case_seed``.

        Args:
            case_seed: The case's seed.
        """
        ...


@runtime_checkable
class StageAware(Protocol):
    """An optional capability of a robot or filter whose behaviour depends on the case's stage.

    Such as a hazard triggered by a stage; it is told the stage of each setpoint before that setpoint is commanded.
    """

    def stage(self, stage: int) -> None:
        """The :class:`~cosim_validation.common.record.Stage` value of the next setpoint.

        Args:
            stage: The stage of the next setpoint, an ``int`` of :class:`~cosim_validation.common.record.Stage`.
        """
        ...


@runtime_checkable
class RobotBackend(Protocol):
    """A robot arm behind one small interface (virtual or physical).

    Setpoints are interpolated the way a real-time joint interface does: a first-order hold at the
    physics (servo) rate, i.e. the joint reference moves linearly from where it is to the new setpoint
    over the given duration, then holds it.
    """

    @property
    def name(self) -> str:
        """Backend name as accepted by :func:`cosim_validation.robots.registry.make_backend` (``mujoco``, ...)."""
        ...

    @property
    def role(self) -> RobotRole:
        """VIRTUAL for a simulator, PHYSICAL for a real arm or its emulator."""
        ...

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the J actuated joints, base to tool."""
        ...

    @property
    def joint_units(self) -> tuple[str, ...]:
        """The unit of each joint's position: ``rad``, or ``m`` for a prismatic joint (for messages)."""
        ...

    @property
    def q_lower(self) -> np.ndarray:
        """(J,) lower joint position limits [rad, or m for a prismatic joint]."""
        ...

    @property
    def q_upper(self) -> np.ndarray:
        """(J,) upper joint position limits [rad, or m for a prismatic joint]."""
        ...

    def reset(self, q0: ArrayLike) -> None:
        """Put the arm at rest at ``q0`` and the clock at 0.

        Args:
            q0: Joint positions, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        ...

    def command(self, q_setpoint: ArrayLike, duration_s: float) -> None:
        """Stream a setpoint: reach ``q_setpoint`` linearly within ``duration_s``.

        Args:
            q_setpoint: Joint positions, shape (J,), in [rad], or [m] for a prismatic joint.
            duration_s: Time to reach it, in [s].
        """
        ...

    def advance(self, dt_s: float) -> None:
        """Let robot time pass.

        Args:
            dt_s: Robot time to let pass, > 0, in [s].
        """
        ...

    def read(self) -> BackendSample:
        """Sample the arm now."""
        ...

    def close(self) -> None:
        """Release the engine or connection (idempotent)."""
        ...
