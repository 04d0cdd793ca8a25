"""What a driver needs to know of a ros2_control controller manager, without ROS (plain values only).

- :func:`check_trajectory_controller`: the answer of ``<controller_manager>/list_controllers``
  (controller_manager_msgs/srv/ListControllers, ros2_control ``humble``) must list the configured joint
  trajectory controller, ``active``, claiming ``<joint>/position`` of every joint of the arm;
- :func:`segment`: the two points a setpoint is streamed as, so that a joint trajectory controller's linear
  spline between them is the first-order hold a batch robot applies to the same setpoints;
- :class:`UpdateLoop`: the controller manager's update loop over an emulated arm, run in the session's time.

rokae_ros2's names (../shared/ROBOTS.md 1.6): controller manager ``/controller_manager``, trajectory controller
``arm_controller`` (``joint_trajectory_controller/JointTrajectoryController``), joints ``joint1``..``joint7``
with the ``position`` command interface, update rate 250 Hz on the real arm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from cosim_validation.assembly import BackendPort
from cosim_validation.common.exceptions import CosimError
from cosim_validation.robots.robot_backend import BackendSample

ACTIVE = "active"
JTC_TYPE = "joint_trajectory_controller/JointTrajectoryController"
COMMAND_INTERFACE = "position"


class ControllerManagerError(CosimError):
    """The controller manager does not answer, or does not run the trajectory controller the driver needs."""


class ListedController(NamedTuple):
    """One entry of a ListControllers answer (controller_manager_msgs/msg/ControllerState)."""

    name: str
    state: str
    type: str
    claimed_interfaces: tuple[str, ...]


def check_trajectory_controller(
    manager: str, listed: Sequence[ListedController], controller: str, joint_names: Sequence[str]
) -> ListedController:
    """The configured trajectory controller of ``listed``, checked: present, active, claiming every joint.

    Args:
        manager: The controller manager's namespace (for the message), e.g. ``/controller_manager``.
        listed: Every controller the manager listed.
        controller: The controller's name, e.g. ``arm_controller``.
        joint_names: (J,) the arm's joints; ``<joint>/position`` of each must be claimed.

    Raises:
        ControllerManagerError: One message naming what is missing (the controller, its state, the joints).
    """
    found = next((c for c in listed if c.name == controller), None)
    names = sorted(c.name for c in listed)
    if found is None:
        raise ControllerManagerError(
            f"{manager} has no controller {controller!r} (it lists {names or 'none'}); load and activate it, "
            f"or set the driver's controller parameter"
        )
    if found.state != ACTIVE:
        raise ControllerManagerError(
            f"{manager}: controller {controller!r} is {found.state or '(no state)'!r}, expected {ACTIVE!r}; "
            f"activate it (ros2 control switch_controllers --activate {controller})"
        )
    wanted = [f"{j}/{COMMAND_INTERFACE}" for j in joint_names]
    missing = [i for i in wanted if i not in found.claimed_interfaces]
    if missing:
        raise ControllerManagerError(
            f"{manager}: controller {controller!r} does not claim {missing}; it claims "
            f"{list(found.claimed_interfaces)} (the arm's joints are {list(joint_names)})"
        )
    return found


class Segment(NamedTuple):
    """A streamed setpoint as a trajectory: ``start_ns`` its header stamp, then (time_from_start ns, (J,) q)."""

    start_ns: int
    times_ns: tuple[int, ...]
    positions: tuple[np.ndarray, ...]


def segment(previous: tuple[int, np.ndarray] | None, stamp_ns: int, q: np.ndarray) -> Segment:
    """The trajectory that carries setpoint ``q`` (J,) [rad] due at ``stamp_ns``.

    From the previous setpoint ``(stamp_ns, q)`` it is two points, the previous one at 0 and ``q`` at the
    interval: a joint trajectory controller's linear spline between them is the first-order hold of the batch
    robot. Without one (the first setpoint of a case, at the reset pose) it is ``q`` alone, at once.
    """
    q = np.asarray(q, dtype=np.float64)
    if previous is None:
        return Segment(int(stamp_ns), (0,), (q,))
    start_ns, q_start = previous
    return Segment(int(start_ns), (0, int(stamp_ns) - int(start_ns)), (np.asarray(q_start, dtype=np.float64), q))


#: the joint trajectory controller: the command (J,) for a time [s] given the measured joints, None: hold
Setpoint = Callable[[float, np.ndarray], "np.ndarray | None"]


class UpdateLoop:
    """A controller manager's update loop over an emulated arm, in the session's time.

    Each update (every ``1 / update_rate_hz`` s) asks the trajectory controller for its command at the end of
    the period and lets the arm track it over the period (the hardware's write); the arm is read (the
    broadcaster's state, the encoders' noise drawn) once, at the end of each command, as the batch robot is
    read once per setpoint. Between reads the controller sees the last reading.

    Args:
        port: The emulated arm (reset and reseeded through it).
        update_rate_hz: The controller manager's update rate [Hz] (rokae_ros2: 250 on the real arm).
    """

    def __init__(self, port: BackendPort, update_rate_hz: float) -> None:
        self.port = port
        self.period_ns = max(1, round(1e9 / float(update_rate_hz)))
        self._now_ns: int | None = None
        self._q = np.zeros(len(port.backend.joint_names))
        self._command: np.ndarray | None = None

    @property
    def now_ns(self) -> int | None:
        """The arm's time [ns] (None: not since the last reset)."""
        return self._now_ns

    def reset(self) -> None:
        """After the port's reset: the arm rests, its time starts with the next command."""
        rest = self.port.reset_sample
        assert rest is not None
        self._now_ns, self._q, self._command = None, rest.q_measured.copy(), None

    def run_until(self, end_ns: int, setpoint: Setpoint) -> BackendSample | None:
        """Run the updates up to ``end_ns``; the reading there, or None if the arm is there already.

        The first command after a reset only reads the arm at rest (as the batch robot's first setpoint).
        """
        if self._now_ns is None:
            rest = self.port.reset_sample
            assert rest is not None
            self._now_ns = int(end_ns)
            self._command = setpoint(end_ns / 1e9, self._q)
            return rest
        if end_ns <= self._now_ns:
            return None
        backend, t_ns = self.port.backend, self._now_ns
        while t_ns < end_ns:
            next_ns = min(t_ns + self.period_ns, int(end_ns))
            desired = setpoint(next_ns / 1e9, self._q)
            if desired is not None:
                self._command = desired
            if self._command is not None:
                backend.command(self._command, (next_ns - t_ns) / 1e9)
            backend.advance((next_ns - t_ns) / 1e9)
            t_ns = next_ns
        sample = backend.read()
        self._now_ns, self._q = int(end_ns), sample.q_measured.copy()
        return sample
