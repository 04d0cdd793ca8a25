"""What the monitor knows besides the samples: joints, needle, obstacles, self-collision, target, constants."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np

from cosim_validation.common.exceptions import InputError


@runtime_checkable
class DistanceField(Protocol):
    """A region the monitor measures distances to (an obstacle such as the heart), in base_link.

    Distances are signed: > 0 outside the region, 0 on its surface, < 0 inside [m].
    """

    def point_distance_m(self, points_m: np.ndarray) -> np.ndarray:
        """Signed distance of each point.

        Args:
            points_m: Points in base_link, shape (n, 3), in [m].

        Returns:
            The signed distances, shape (n,), in [m].
        """
        ...

    def segment_distance_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        """Signed distance of each whole segment.

        Args:
            start_m: Segment starts in base_link, shape (n, 3), in [m].
            end_m: Segment ends in base_link, shape (n, 3), in [m].

        Returns:
            The signed distances, shape (n,), in [m].
        """
        ...


@runtime_checkable
class BoundedDistanceField(DistanceField, Protocol):
    """A :class:`DistanceField` with cheap lower bounds of its distances (used to skip exact queries).

    The offline evaluator computes exact distances only where a bound cannot rule out the minimum or a
    violation, so results are identical to computing every exact distance. A field may also be a
    :class:`TightlyBoundedDistanceField`.
    """

    def point_lower_bound_m(self, points_m: np.ndarray) -> np.ndarray:
        """Lower bounds of :meth:`point_distance_m`.

        Args:
            points_m: Points in base_link, shape (n, 3), in [m].

        Returns:
            Values <= point_distance_m, shape (n,), in [m].
        """
        ...

    def segment_lower_bound_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        """Lower bounds of :meth:`segment_distance_m`.

        Args:
            start_m: Segment starts in base_link, shape (n, 3), in [m].
            end_m: Segment ends in base_link, shape (n, 3), in [m].

        Returns:
            Values <= segment_distance_m, shape (n,), in [m].
        """
        ...


@runtime_checkable
class TightlyBoundedDistanceField(BoundedDistanceField, Protocol):
    """A :class:`BoundedDistanceField` with tighter, costlier bounds besides the cheap ones.

    They are used only for the samples the cheap bounds could not rule out.
    """

    def point_tight_lower_bound_m(self, points_m: np.ndarray) -> np.ndarray:
        """Lower bounds of :meth:`point_distance_m`, at least :meth:`point_lower_bound_m`.

        Args:
            points_m: Points in base_link, shape (n, 3), in [m].

        Returns:
            Values <= point_distance_m, shape (n,), in [m].
        """
        ...

    def segment_tight_lower_bound_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        """Lower bounds of :meth:`segment_distance_m`, at least :meth:`segment_lower_bound_m`.

        Args:
            start_m: Segment starts in base_link, shape (n, 3), in [m].
            end_m: Segment ends in base_link, shape (n, 3), in [m].

        Returns:
            Values <= segment_distance_m, shape (n,), in [m].
        """
        ...


SelfDistance = Callable[[np.ndarray], np.ndarray]
"""(n, J) measured joint positions [rad] -> (n,) smallest distance between non-adjacent links [m] (<= 0: collision)."""

SelfCollisionCheck = Callable[[np.ndarray], np.ndarray]
"""(n, J) measured joint positions [rad] -> (n,) bool: whether the robot's links touch each other."""


@dataclass(frozen=True)
class MonitorContext:
    """Everything a property may refer to besides the samples.

    Attributes:
        joint_names: Names of the J joints; ``q[j]``, ``joint[j]`` take 0-based indices into this.
        needle_length_m: Needle length [m] (the needle is the segment tip - length * tip_axis .. tip).
        obstacles: Forbidden regions by name (e.g. ``heart``), the domain of ``forall o in obstacles``.
        self_distance: Self-collision distance of the robot, if known (signal ``self_distance``).
        self_collision: Self-collision check of the robot, if known (condition ``self_collision``).
        target_m: (3,) the case's target point in base_link [m] (signal ``target``), if known.
        constants: Named numbers usable in expressions (e.g. ``delta_m: 0.02``).
        prismatic: (J,) whether each joint is prismatic (its values in m, not rad); empty: every joint revolute.
        q_lower: (J,) the robot model's lower position limits (rad, or m for a prismatic joint; signal
            ``q_lower[j]``); empty: unknown.
        q_upper: (J,) its upper position limits (signal ``q_upper[j]``); empty: unknown.
    """

    joint_names: tuple[str, ...]
    needle_length_m: float
    obstacles: Mapping[str, DistanceField] = field(default_factory=dict)
    self_distance: SelfDistance | None = None
    target_m: np.ndarray | None = None
    constants: Mapping[str, float] = field(default_factory=dict)
    self_collision: SelfCollisionCheck | None = None
    prismatic: tuple[bool, ...] = ()
    q_lower: tuple[float, ...] = ()
    q_upper: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "joint_names", tuple(self.joint_names))
        object.__setattr__(self, "prismatic", tuple(bool(p) for p in self.prismatic))
        for name in ("q_lower", "q_upper"):
            limits = tuple(float(v) for v in getattr(self, name))
            if limits and len(limits) != len(self.joint_names):
                raise InputError(f"monitor context: {len(limits)} {name} values for {len(self.joint_names)} joints")
            object.__setattr__(self, name, limits)
        if self.prismatic and len(self.prismatic) != len(self.joint_names):
            raise InputError(f"monitor context: {len(self.prismatic)} joint types for {len(self.joint_names)} joints")
        if not np.isfinite(self.needle_length_m) or self.needle_length_m < 0:
            raise InputError(f"monitor context: needle_length_m must be >= 0, got {self.needle_length_m!r}")
        if self.target_m is not None:
            target = np.asarray(self.target_m, dtype=np.float64)
            if target.shape != (3,) or not np.isfinite(target).all():
                raise InputError(f"monitor context: target_m must be 3 finite numbers, got {self.target_m!r}")
            target.setflags(write=False)
            object.__setattr__(self, "target_m", target)
        for name, obstacle in self.obstacles.items():
            if not isinstance(obstacle, DistanceField):
                raise InputError(f"monitor context: obstacle {name!r} is not a DistanceField: {obstacle!r}")

    @property
    def n_joints(self) -> int:
        """Number of joints J."""
        return len(self.joint_names)

    @property
    def prismatic_mask(self) -> np.ndarray:
        """(J,) bool, the prismatic joints (all False when the context gives no joint types)."""
        return np.array(self.prismatic or (False,) * self.n_joints, dtype=bool)
