"""A robot as the lockstep loop sees it: reset, send a setpoint, wait for the answer.

The batch runner drives in-process backends through :class:`BackendPort`; the controller node drives ROS
drivers through the same protocol (``nodes/robot_link.py``), and every driver node answers its commands with a
:class:`BackendPort` too, so a setpoint reaches a backend the same way in every mode: the first setpoint
after a reset only samples the arm at rest, setpoint k (stamped t_k) is reached linearly within
t_k - t_(k-1) and the arm is read then.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, cast

import numpy as np

from cosim_validation.common.exceptions import CosimError, InputError
from cosim_validation.common.record import RobotRole
from cosim_validation.robots.robot_backend import BackendSample, Reseedable, RobotBackend, StageAware


class RobotLostError(CosimError):
    """A robot did not answer in time, or refused; the message says which and why."""


class Measurement(NamedTuple):
    """What a robot reported with its answer to one setpoint (what the task supervisor's sources read).

    Attributes:
        q_measured: (J,) measured joints (rad, or m for a prismatic joint).
        tip_pos_m: (3,) the actual tip (tracker or simulator ground truth), base_link [m]; NaN if unknown.
        tip_quat_wxyz: (4,) its orientation (+z along the needle); NaN if unknown.
    """

    q_measured: np.ndarray
    tip_pos_m: np.ndarray
    tip_quat_wxyz: np.ndarray


class RobotPort(Protocol):
    """One robot in lockstep with the controller."""

    @property
    def role(self) -> RobotRole:
        """Which robot (VIRTUAL or PHYSICAL)."""
        ...

    def reset(self, test_id: str, q0: np.ndarray, case_seed: int) -> None:
        """Bring the robot to rest at ``q0`` for case ``test_id``; reseed its noise.

        Args:
            test_id: The case.
            q0: The start pose, shape (J,), in [rad], or [m] for a prismatic joint.
            case_seed: The case's seed, for the robot's random streams.

        Raises:
            RobotLostError: The robot did not answer or refused.
        """
        ...

    def send(self, stamp_ns: int, q: np.ndarray) -> None:
        """Stream the setpoint stamped ``stamp_ns`` [ns of session time].

        Args:
            stamp_ns: The setpoint's stamp on the session clock, in [ns].
            q: The setpoint, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        ...

    def wait(self, stamp_ns: int) -> None:
        """Block until the robot answered the setpoint stamped ``stamp_ns``.

        Args:
            stamp_ns: The setpoint's stamp on the session clock, in [ns].

        Raises:
            RobotLostError: No answer in time.
        """
        ...

    def answered_since(self, monotonic_s: float) -> bool:
        """Whether the robot sent anything after ``monotonic_s`` (``time.monotonic()``).

        A lost robot that answers again (a driver that was frozen) may drive the next case.

        Args:
            monotonic_s: A time of ``time.monotonic()`` (when the robot was lost), in [s].
        """
        ...

    def measurement(self, stamp_ns: int) -> Measurement:
        """What the robot reported with its answer to the setpoint stamped ``stamp_ns`` (after :meth:`wait`).

        A tip pose that did not come is NaN.

        Args:
            stamp_ns: The stamp of the setpoint answered, on the session clock, in [ns].
        """
        ...


class BackendPort:
    """A :class:`RobotBackend` driven by stamped setpoints (batch robot, and the core of a driver node).

    Args:
        backend: The robot; reseeded with the case seed on reset when it is
            :class:`~cosim_validation.robots.robot_backend.Reseedable`.
        role: Its role in the case (default: the backend's own).
    """

    def __init__(self, backend: RobotBackend, role: RobotRole | None = None) -> None:
        self.backend = backend
        self._stage_aware = isinstance(backend, StageAware)  # checked once: stage() runs at every setpoint
        self._role = backend.role if role is None else role
        self._last_ns: int | None = None
        self._pending: BackendSample | None = None  # the sample read at reset, the answer to the first setpoint
        self.reset_sample: BackendSample | None = None  # the arm at rest after the last reset
        self.samples: list[BackendSample] = []

    @property
    def role(self) -> RobotRole:
        """Which robot."""
        return self._role

    def reset(self, test_id: str, q0: np.ndarray, case_seed: int) -> None:
        """Reseed, put the arm at rest at ``q0``, read it (the answer to the first setpoint).

        Args:
            test_id: The case (not used in-process).
            q0: The start pose, shape (J,), in [rad], or [m] for a prismatic joint.
            case_seed: The case's seed; a :class:`~cosim_validation.robots.robot_backend.Reseedable` backend is
                reseeded with it.
        """
        if isinstance(self.backend, Reseedable):
            self.backend.reseed(int(case_seed))  # a case's noise depends on the case only, not on what ran before
        self.backend.reset(q0)
        self._pending = self.reset_sample = self.backend.read()  # read once: a read draws the arm's noise
        self._last_ns = None
        self.samples = []

    def send(self, stamp_ns: int, q: np.ndarray) -> None:
        """Track the setpoint until ``stamp_ns`` and read the arm (the first one after a reset only reads).

        Args:
            stamp_ns: The setpoint's stamp on the session clock, in [ns]; after the previous setpoint's.
            q: The setpoint, shape (J,), in [rad], or [m] for a prismatic joint (not used for the first setpoint
                after a reset).

        Raises:
            InputError: A setpoint before any reset, or not after the previous one.
            BackendInputError: A malformed setpoint (naming the joint).
        """
        if self._pending is not None:
            sample, self._pending = self._pending, None
        else:
            if self._last_ns is None:
                raise InputError("setpoint before any reset: reset the robot first")
            dt_s = (int(stamp_ns) - self._last_ns) / 1e9
            if dt_s <= 0:
                raise InputError(f"setpoint stamped {int(stamp_ns)} ns is not after the previous one ({self._last_ns})")
            self.backend.command(q, dt_s)
            self.backend.advance(dt_s)
            sample = self.backend.read()
        self._last_ns = int(stamp_ns)
        self.samples.append(sample)

    def stage(self, stage: int) -> None:
        """Set the stage of the next setpoint to :meth:`send` (a ``Stage`` value).

        A robot whose filters use it (:class:`~cosim_validation.robots.filters.robot_filter.FilteredBackend`) is told;
        other backends ignore it.

        Args:
            stage: The next setpoint's stage, as an int.
        """
        if self._stage_aware:
            cast(StageAware, self.backend).stage(int(stage))

    def wait(self, stamp_ns: int) -> None:
        """In-process: the answer is there as soon as :meth:`send` returned.

        Args:
            stamp_ns: The setpoint's stamp, in [ns] (nothing to wait for).
        """

    def answered_since(self, monotonic_s: float) -> bool:
        """In-process: always.

        Args:
            monotonic_s: A time of ``time.monotonic()``, in [s] (not used).
        """
        return True

    def measurement(self, stamp_ns: int) -> Measurement:
        """In-process: the reading of the last setpoint.

        Args:
            stamp_ns: The setpoint's stamp, in [ns] (not used: the last setpoint's reading is returned).

        Raises:
            InputError: No setpoint was sent since the last reset.
        """
        sample = self.latest
        return Measurement(sample.q_measured, sample.actual_tip_pos_m, sample.actual_tip_quat_wxyz)

    @property
    def latest(self) -> BackendSample:
        """The answer to the last setpoint."""
        if not self.samples:
            raise InputError("no setpoint sent since the last reset")
        return self.samples[-1]
