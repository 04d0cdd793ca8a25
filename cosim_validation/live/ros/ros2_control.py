"""What a driver needs to know of a ros2_control controller manager, without ROS (plain values only).

- :func:`check_trajectory_controller`: the answer of ``<controller_manager>/list_controllers``
  (controller_manager_msgs/srv/ListControllers, ros2_control ``humble``) must list the configured joint
  trajectory controller, ``active``, claiming ``<joint>/position`` of every joint of the arm;
- :func:`segment`: the two points a setpoint is streamed as, so that a joint trajectory controller's linear
  spline between them is the first-order hold a batch robot applies to the same setpoints.

rokae_ros2's names (public repository RokaeRobot/rokae_ros2, ``rokae_hardware/config/xMatePro3_*controllers.yaml``):
controller manager ``/controller_manager``, trajectory controller ``arm_controller``
(``joint_trajectory_controller/JointTrajectoryController``), joints ``joint1``..``joint7`` with the ``position``
command interface, update rate 250 Hz on the real arm.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from cosim_validation.common.exceptions import CosimError
from cosim_validation.robots.robot_backend import ArmLostError

ACTIVE = "active"
JTC_TYPE = "joint_trajectory_controller/JointTrajectoryController"
COMMAND_INTERFACE = "position"


class ControllerManagerError(CosimError):
    """The controller manager does not answer, or does not run the trajectory controller the driver needs."""


class ArmSilentError(ControllerManagerError, ArmLostError):
    """The controller manager or the arm stopped answering (a service gone, no joint states): the arm is lost."""


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
            f"or set controller (the driver's parameter, or backends.ros2_control.controller)"
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

    Args:
        previous: The previous setpoint's stamp in [ns] and joints, shape (J,), in [rad]; None: none in this case.
        stamp_ns: The time the setpoint is due, in [ns].
        q: The setpoint's joints, shape (J,), in [rad].
    """
    q = np.asarray(q, dtype=np.float64)
    if previous is None:
        return Segment(int(stamp_ns), (0,), (q,))
    start_ns, q_start = previous
    return Segment(int(start_ns), (0, int(stamp_ns) - int(start_ns)), (np.asarray(q_start, dtype=np.float64), q))
