"""Validating and following a joint trajectory as ros2_control's joint trajectory controller (JTC) does.

What a real arm under ros2_control does with a ``FollowJointTrajectory`` goal or a streamed
``trajectory_msgs/JointTrajectory``, without ROS (numpy only), so the framework serves the same behaviour to an
external controller under test. The rules are those of ros2_controllers' ``joint_trajectory_controller``
(github.com/ros-controls/ros2_controllers, branch ``kilted``: ``src/joint_trajectory_controller.cpp``
``validate_trajectory_msg`` and ``update``, ``src/trajectory.cpp`` ``Trajectory::sample`` and
``interpolate_between_points``, ``include/joint_trajectory_controller/tolerances.hpp``; user documentation at
control.ros.org, "joint_trajectory_controller"), with its default parameters: all joints in every goal
(``allow_partial_joints_goal: false``), zero velocity at the last point
(``allow_nonzero_velocity_at_trajectory_end: false``), interpolation from the measured state
(``interpolate_from_desired_state: false``), splines (linear on positions, cubic with velocities).

Added here, since a case's robot has joint limits the JTC does not check: every point must lie within the
joint limits. Not modelled: accelerations (quintic splines), velocity tolerances (the framework measures
positions only), partial-joint goals, continuous (wrapping) joints.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from cosim_validation.common.exceptions import CosimError

# control_msgs/action/FollowJointTrajectory.action, Result.error_code
SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5

# the JTC compares a last point's velocity with std::numeric_limits<float>::epsilon()
_FLOAT_EPS = float(np.finfo(np.float32).eps)
# control_msgs/msg/JointTolerance.msg: 0 keeps the default, -1 erases the tolerance (no limit)
_ERASE = -1.0


class TrajectoryRefusedError(CosimError):
    """A trajectory the joint trajectory controller would refuse; ``error_code`` is the action's result code."""

    def __init__(self, error_code: int, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


@dataclass(frozen=True)
class Tolerances:
    """Position tolerances of a trajectory, per joint; a tolerance of 0 is not checked, as in the JTC.

    Attributes:
        path_rad: (J,) largest ``|measured - desired|`` while moving, rad (the JTC's
            ``constraints.<joint>.trajectory``).
        goal_rad: (J,) largest ``|measured - last point|`` to succeed, rad (``constraints.<joint>.goal``).
        goal_time_s: time after the last point's time within which the goal tolerance must be met, s
            (``constraints.goal_time``); 0 waits without a time limit.

    ``Tolerances()`` is the JTC's defaults (all 0) for any number of joints; :meth:`sized` gives its (J,) form.
    """

    path_rad: np.ndarray = field(default_factory=lambda: np.zeros(0))
    goal_rad: np.ndarray = field(default_factory=lambda: np.zeros(0))
    goal_time_s: float = 0.0

    def __post_init__(self) -> None:
        path, goal = np.asarray(self.path_rad, dtype=float), np.asarray(self.goal_rad, dtype=float)
        if path.ndim != 1 or path.shape != goal.shape:
            raise CosimError(f"tolerances: path_rad {path.shape} and goal_rad {goal.shape} must be two (J,) vectors")
        if not (np.all(np.isfinite(path)) and np.all(np.isfinite(goal)) and np.all(path >= 0) and np.all(goal >= 0)):
            raise CosimError("tolerances: path_rad and goal_rad must be finite and >= 0 (0 = not checked)")
        if not (math.isfinite(self.goal_time_s) and self.goal_time_s >= 0):
            raise CosimError(f"tolerances: goal_time_s must be finite and >= 0, got {self.goal_time_s}")
        object.__setattr__(self, "path_rad", path)
        object.__setattr__(self, "goal_rad", goal)

    @classmethod
    def jtc_defaults(cls, n_joints: int) -> Tolerances:
        """The JTC's parameter defaults: no path or goal tolerance, no goal time limit.

        Args:
            n_joints: J, the number of joints.
        """
        return cls(np.zeros(n_joints), np.zeros(n_joints), 0.0)

    def sized(self, n_joints: int) -> Tolerances:
        """These tolerances for ``n_joints`` joints (empty vectors become zeros); CosimError on another size.

        Args:
            n_joints: J, the number of joints.
        """
        path = self.path_rad if self.path_rad.size else np.zeros(n_joints)
        goal = self.goal_rad if self.goal_rad.size else np.zeros(n_joints)
        if path.shape != (n_joints,) or goal.shape != (n_joints,):
            raise CosimError(f"tolerances: {path.size} path and {goal.size} goal values for {n_joints} joints")
        return self if path is self.path_rad and goal is self.goal_rad else Tolerances(path, goal, self.goal_time_s)

    def for_goal(
        self,
        joint_names: Sequence[str],
        path: Sequence[tuple[str, float]],
        goal: Sequence[tuple[str, float]],
        goal_time_s: float,
    ) -> Tolerances:
        """Return these defaults overridden by an action goal's tolerances.

        The goal's ``path_tolerance``, ``goal_tolerance`` (joint name, position) and ``goal_time_tolerance``
        apply as the JTC's ``get_segment_tolerances`` does: a value > 0 replaces the default, 0 keeps it, -1
        erases it; an unknown joint or another negative value makes the whole goal use the defaults.

        Args:
            joint_names: The controller's J joints, in its order.
            path: The goal's ``path_tolerance``: (joint name, position tolerance) pairs, in [rad] (or [m] for a
                prismatic joint).
            goal: The goal's ``goal_tolerance``, the same way.
            goal_time_s: The goal's ``goal_time_tolerance`` [s].
        """
        base = self.sized(len(joint_names))
        goal_time = _resolve(base.goal_time_s, goal_time_s)
        if goal_time is None:
            return base
        tables = []
        for defaults, entries in ((base.path_rad, path), (base.goal_rad, goal)):
            table = defaults.copy()
            for name, value in entries:
                resolved = _resolve(defaults[list(joint_names).index(name)], value) if name in joint_names else None
                if resolved is None:
                    return base
                table[list(joint_names).index(name)] = resolved
            tables.append(table)
        return Tolerances(tables[0], tables[1], goal_time)


def _resolve(default: float, value: float) -> float | None:
    """One tolerance of a goal against its default (tolerances.hpp ``resolve_tolerance_source``); None = illegal."""
    if value > 0.0:
        return float(value)
    if abs(value - _ERASE) < _FLOAT_EPS:
        return 0.0
    if value < 0.0 or not math.isfinite(value):
        return None
    return float(default)


def joint_order(joint_names: Sequence[str], msg_joint_names: Sequence[str]) -> np.ndarray:
    """Return the index into a message's columns that gives the controller's joint order.

    Args:
        joint_names: The controller's J joints, in its order.
        msg_joint_names: The message's ``joint_names``.

    Raises:
        TrajectoryRefusedError: INVALID_JOINTS unless the message names every controller joint exactly once and
            no other.
    """
    names = list(msg_joint_names)
    wanted = list(joint_names)
    if not names:
        raise TrajectoryRefusedError(INVALID_JOINTS, f"the trajectory names no joints; expected {wanted}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    unknown = [n for n in names if n not in wanted]
    missing = [n for n in wanted if n not in names]
    if duplicates or unknown or missing:
        parts = [
            f"{label} {items}"
            for label, items in (("duplicate", duplicates), ("unknown", unknown), ("missing", missing))
            if items
        ]
        raise TrajectoryRefusedError(INVALID_JOINTS, f"joint names {names}: {'; '.join(parts)}; expected {wanted}")
    return np.array([names.index(n) for n in wanted], dtype=int)


def _point_table(rows: Sequence[Sequence[float]], n_joints: int, field: str) -> np.ndarray:
    """(n, J) array of one field of the points; INVALID_GOAL naming the first point of a wrong size or NaN."""
    for i, row in enumerate(rows):
        if len(row) != n_joints:
            raise TrajectoryRefusedError(INVALID_GOAL, f"point {i} has {len(row)} {field}, expected {n_joints}")
    table = np.asarray(rows, dtype=float).reshape(len(rows), n_joints)
    bad = np.argwhere(~np.isfinite(table))
    if bad.size:
        i, j = bad[0]
        raise TrajectoryRefusedError(INVALID_GOAL, f"point {i} {field}[{j}] is {table[i, j]}; expected a finite number")
    return table


def _unit(units: Sequence[str], j: int) -> str:
    """Joint ``j``'s unit for a message: ``units[j]``, ``rad`` when none are given."""
    return str(units[j]) if units else "rad"


def accept(
    joint_names: Sequence[str],
    msg_joint_names: Sequence[str],
    times_s: Sequence[float],
    positions: Sequence[Sequence[float]],
    velocities: Sequence[Sequence[float]] | None,
    q_lower: np.ndarray,
    q_upper: np.ndarray,
    *,
    header_stamp_s: float = 0.0,
    now_s: float = 0.0,
    units: Sequence[str] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """Validate a trajectory as the JTC's ``validate_trajectory_msg`` does, plus the joint limits.

    Args:
        joint_names: The controller's joints, in its order.
        msg_joint_names: The message's ``joint_names`` (any order).
        times_s: Each point's ``time_from_start``, shape (n,), in [s].
        positions: n rows of J positions in the message's joint order, in [rad].
        velocities: n rows of J velocities in the message's order, in [rad/s]; None when the points have none.
        q_lower: Lower joint limits in the controller's order, shape (J,), in [rad].
        q_upper: Upper joint limits in the controller's order, shape (J,), in [rad].
        header_stamp_s: The message's ``header.stamp`` in [s] (0: start when first sampled).
        now_s: The current time in [s], against which a stamped trajectory must not end in the past.
        units: Each joint's unit in the controller's order, for messages (``rad``, or ``m`` for a prismatic joint;
            default ``rad``).

    Returns:
        The points' times, shape (n,), in [s], and their positions, shape (n, J), in [rad], in ``joint_names``
        order.

    Raises:
        TrajectoryRefusedError: INVALID_JOINTS, INVALID_GOAL or OLD_HEADER_TIMESTAMP, naming the point/joint.
    """
    order = joint_order(joint_names, msg_joint_names)
    n_joints = len(order)
    if len(positions) == 0 or len(times_s) == 0:
        raise TrajectoryRefusedError(INVALID_GOAL, "the trajectory has no points")
    if len(times_s) != len(positions):
        raise TrajectoryRefusedError(INVALID_GOAL, f"{len(times_s)} times for {len(positions)} points")
    times = np.asarray(times_s, dtype=float)
    for i, t in enumerate(times):
        if not math.isfinite(t) or t < 0:
            raise TrajectoryRefusedError(INVALID_GOAL, f"point {i} time_from_start is {t} s; expected >= 0")
        if i > 0 and t <= times[i - 1]:
            raise TrajectoryRefusedError(
                INVALID_GOAL,
                f"time_from_start of points {i - 1} and {i} is not strictly increasing ({times[i - 1]} s, {t} s)",
            )
    if header_stamp_s != 0.0 and header_stamp_s + times[-1] < now_s:
        raise TrajectoryRefusedError(
            OLD_HEADER_TIMESTAMP,
            f"the trajectory stamped {header_stamp_s} s ends at {header_stamp_s + times[-1]} s, before now ({now_s} s)",
        )
    table = _point_table(positions, n_joints, "positions")[:, order]
    if velocities is not None:
        speeds = _point_table(velocities, n_joints, "velocities")
        last = np.flatnonzero(np.abs(speeds[-1]) > _FLOAT_EPS)
        if last.size:
            name = msg_joint_names[last[0]]
            raise TrajectoryRefusedError(
                INVALID_GOAL, f"velocity of the last point of joint {name} is {speeds[-1, last[0]]}, expected 0"
            )
    lower, upper = np.asarray(q_lower, dtype=float), np.asarray(q_upper, dtype=float)
    outside = np.argwhere((table < lower) | (table > upper))
    if outside.size:
        i, j = outside[0]
        raise TrajectoryRefusedError(
            INVALID_GOAL,
            f"point {i} joint {joint_names[j]} position {table[i, j]:.6g} {_unit(units, j)} is outside its limits "
            f"[{lower[j]:.6g}, {upper[j]:.6g}] {_unit(units, j)}",
        )
    return times, table


class ActiveTrajectory:
    """A trajectory being followed: the JTC's ``Trajectory::sample`` and its tolerance checks in ``update``.

    Args:
        start_s: the time of ``time_from_start`` 0 (the first sample's time, or the header stamp), s.
        q_start: (J,) the measured state at ``start_s``, from which the motion to the first point starts, rad.
        times_s: (n,) time_from_start of the points, strictly increasing, s.
        positions: (n, J) points in the controller's joint order, rad.
        tolerances: the tolerances checked by :meth:`check`.
        velocities: (n, J) velocities at the points in the controller's order (rad/s), or None: cubic Hermite
            segments with them (the motion starts at rest), linear segments without.
        joint_names: names used in messages (default: joint indices).
        units: each joint's unit in messages (``rad``, or ``m`` for a prismatic joint; default ``rad``).
    """

    def __init__(
        self,
        start_s: float,
        q_start: np.ndarray,
        times_s: np.ndarray,
        positions: np.ndarray,
        tolerances: Tolerances,
        *,
        velocities: np.ndarray | None = None,
        joint_names: Sequence[str] = (),
        units: Sequence[str] = (),
    ) -> None:
        self.start_s = float(start_s)
        times, points = np.asarray(times_s, dtype=float), np.asarray(positions, dtype=float)
        speeds = None if velocities is None else np.asarray(velocities, dtype=float)
        if times[0] > 0.0:  # first the motion from the start state (at rest) to the first point
            times = np.concatenate([[0.0], times])
            points = np.vstack([np.asarray(q_start, dtype=float), points])
            speeds = None if speeds is None else np.vstack([np.zeros(points.shape[1]), speeds])
        self.times_s, self.positions, self.velocities = times, points, speeds
        self.tolerances = tolerances.sized(points.shape[1])
        self.joint_names = list(joint_names) or [f"joint {j}" for j in range(self.positions.shape[1])]
        self.units = tuple(units)
        self._sampled = False

    @property
    def end_s(self) -> float:
        """The time of the last point, s."""
        return self.start_s + float(self.times_s[-1])

    def sample(self, t_s: float) -> np.ndarray:
        """The desired position (J,) at ``t_s``: the first point before start_s, the last point after the end, rad.

        The first point is q_start, unless the trajectory's own first point is at ``time_from_start`` 0.

        Args:
            t_s: The time [s], on the clock of ``start_s``.
        """
        if len(self.times_s) == 1:
            return np.array(self.positions[0], dtype=float)
        tau = float(np.clip(t_s - self.start_s, 0.0, self.times_s[-1]))
        k = int(np.clip(np.searchsorted(self.times_s, tau, side="right") - 1, 0, len(self.times_s) - 2))
        t0, t1 = self.times_s[k], self.times_s[k + 1]
        p0, p1 = self.positions[k], self.positions[k + 1]
        duration, s = t1 - t0, tau - t0
        if self.velocities is None:
            return np.asarray(p0 + (p1 - p0) * (s / duration), dtype=float)
        # cubic through (p0, v0) and (p1, v1), trajectory.cpp interpolate_between_points
        v0, v1 = self.velocities[k], self.velocities[k + 1]
        c2 = (-3.0 * p0 + 3.0 * p1 - 2.0 * v0 * duration - v1 * duration) / duration**2
        c3 = (2.0 * p0 - 2.0 * p1 + v0 * duration + v1 * duration) / duration**3
        return np.asarray(p0 + v0 * s + c2 * s**2 + c3 * s**3, dtype=float)

    def check(self, t_s: float, q_measured: np.ndarray) -> tuple[int, str] | None:
        """Return the JTC's verdict at ``t_s``, or None to keep following.

        The verdict is (PATH_TOLERANCE_VIOLATED, why) while moving (and on the first check), (SUCCESSFUL, "") once
        past the last point within the goal tolerance, (GOAL_TOLERANCE_VIOLATED, why) when still outside it
        ``goal_time_s`` after the last point, else None.

        Args:
            t_s: Case time in [s], on the clock of ``start_s``.
            q_measured: The measured joints in the controller's joint order, shape (J,), in [rad].
        """
        error = np.asarray(q_measured, dtype=float) - self.sample(t_s)
        moving = t_s < self.end_s
        first, self._sampled = not self._sampled, True
        tol = self.tolerances
        if moving or first:
            j = _violation(error, tol.path_rad)
            if j is not None:
                return PATH_TOLERANCE_VIOLATED, (
                    f"path tolerance violated at t={t_s:.3f} s: joint {self.joint_names[j]} is "
                    f"{abs(error[j]):.6g} {_unit(self.units, j)} from the trajectory, "
                    f"tolerance {tol.path_rad[j]:.6g} {_unit(self.units, j)}"
                )
        if moving:
            return None
        j = _violation(error, tol.goal_rad)
        if j is None:
            return SUCCESSFUL, ""
        late = t_s - self.end_s
        if tol.goal_time_s > 0.0 and late > tol.goal_time_s:
            return GOAL_TOLERANCE_VIOLATED, (
                f"goal tolerance not met {late:.3f} s after the trajectory's end (goal_time {tol.goal_time_s} s): "
                f"joint {self.joint_names[j]} is {abs(error[j]):.6g} {_unit(self.units, j)} from the last point, "
                f"tolerance {tol.goal_rad[j]:.6g} {_unit(self.units, j)}"
            )
        return None


def _violation(error: np.ndarray, tolerance: np.ndarray) -> int | None:
    """The first joint whose |error| exceeds its checked (> 0) tolerance, or None."""
    over = np.flatnonzero((tolerance > 0.0) & (np.abs(error) > tolerance))
    return int(over[0]) if over.size else None
