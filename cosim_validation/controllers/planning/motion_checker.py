"""Collision checks of planned joint configurations: self-collision, arm and needle against the skin.

Checks are cheap: points whose distance to the skin's bounding box (a lower bound of their distance to the
skin) already exceeds the requirement are not queried against the mesh. Optionally only samples that cover the
motion are checked (every other sample within ``cover_step_m`` of a checked one, added to the requirement).
"""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np

from cosim_validation.controllers.planning.collision_world import CollisionWorld
from cosim_validation.controllers.planning.coverage_samples import covering_indices
from cosim_validation.monitor.metrics import box_distance_m
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.model.arm_capsules import ArmCapsules
from cosim_validation.robots.model.self_collision import SelfCollision

_NEEDLE_SPACING_M = 0.005  # needle sample points for the skin check


def densify(q: np.ndarray, step_rad: float) -> np.ndarray:
    """Samples (n, J) with linear joint interpolation inserted so that no joint moves more than ``step_rad``.

    Args:
        q: Joint samples, shape (m, J), in [rad], or [m] for a prismatic joint.
        step_rad: Largest joint change between two samples, in [rad] (taken as [m] for a prismatic joint).

    Returns:
        The samples with the inserted ones, shape (n, J), n >= m; every original sample is kept.
    """
    out = [q[:1]]
    for a, b in pairwise(q):
        count = max(1, math.ceil(float(np.max(np.abs(b - a))) / step_rad))
        u = np.arange(1, count + 1)[:, None] / count
        out.append(a + u * (b - a))
    return np.concatenate(out)


class MotionChecker:
    """Says whether joint configurations collide, and with what.

    Args:
        kinematics: Arm and needle.
        world: The anatomy.
        arm_clearance_m: Arm links and holder must stay this far outside the skin [m].
        cover_step_m: Unchecked samples are within this distance of a checked one [m]; 0 checks every sample.
        joint_step_rad: Self-collision is checked whenever a joint moved this much [rad].
        box_prefilter: Skip mesh queries for points far from the skin's bounding box (off: query every point).
        port_links: Links that pass through the body wall at a remote centre of motion: not checked against the
            skin (an instrument through its port is meant to be inside).
    """

    def __init__(
        self,
        kinematics: Kinematics,
        world: CollisionWorld,
        arm_clearance_m: float,
        cover_step_m: float = 0.0,
        joint_step_rad: float = 0.02,
        box_prefilter: bool = True,
        port_links: tuple[str, ...] = (),
    ) -> None:
        self.kinematics = kinematics
        self.world = world
        self.capsules = ArmCapsules(kinematics, exempt_links=port_links)
        self.self_collision = SelfCollision(kinematics)
        self.arm_clearance_m = float(arm_clearance_m)
        self.cover_step_m = float(cover_step_m)
        self.joint_step_rad = float(joint_step_rad)
        self.box_prefilter = bool(box_prefilter)
        count = max(2, math.ceil(kinematics.needle_length_m / _NEEDLE_SPACING_M) + 1)
        self._needle_u = np.linspace(0.0, 1.0, count)

    def _skin_margin(self, points: np.ndarray, required: np.ndarray) -> tuple[float, int]:
        """Smallest (distance to the skin - required) over covering samples of points (n, P, 3), and its sample."""
        idx = covering_indices(points, self.cover_step_m)
        checked = points[idx]
        need = required + self.cover_step_m
        distance = box_distance_m(self.world.skin_bounds_m, checked)
        query = distance < need[None, :] if self.box_prefilter else np.ones(distance.shape, dtype=bool)
        if query.any():
            distance[query] = self.world.skin_signed_distance(checked[query])
        margin = distance - need[None, :]
        worst = np.unravel_index(int(np.argmin(margin)), margin.shape)
        return float(margin[worst]), int(idx[worst[0]])

    def arm_problem(self, q: np.ndarray) -> str | None:
        """Why the arm (links and holder) comes within the clearance of the skin in (n, J); None if it does not.

        Args:
            q: Joint vectors, shape (n, J), in [rad], or [m] for a prismatic joint.
        """
        required = self.capsules.radius_m + self.arm_clearance_m + self.capsules.slack_m
        margin, sample = self._skin_margin(self.capsules.points(q), required)
        if margin < 0:
            return f"arm within {self.arm_clearance_m * 1e3:.0f} mm of the skin at sample {sample}"
        return None

    def needle_problem(self, q: np.ndarray) -> str | None:
        """Why the needle meets the skin in (n, J); None if every needle stays outside.

        Args:
            q: Joint vectors, shape (n, J), in [rad], or [m] for a prismatic joint.
        """
        mount, tip = self.kinematics.needle_segments(q)
        points = mount[:, None, :] + self._needle_u[None, :, None] * (tip - mount)[:, None, :]
        required = np.full(len(self._needle_u), 0.5 * _NEEDLE_SPACING_M)
        margin, sample = self._skin_margin(points, required)
        if margin < 0:
            return f"needle meets the skin at sample {sample}"
        return None

    def self_collision_problem(self, q: np.ndarray) -> str | None:
        """Why (n, J) self-collides, checking a sample whenever a joint moved ``joint_step_rad``; None if free.

        Args:
            q: Joint vectors, shape (n, J), in [rad], or [m] for a prismatic joint.
        """
        for i in covering_indices(q[:, :, None], self.joint_step_rad):
            pairs = self.self_collision.colliding_pairs(q[i])
            if pairs:
                return f"self-collision {pairs[0][0]}-{pairs[0][1]} at sample {i}"
        return None

    def problem(self, q: np.ndarray, *, check_needle: bool) -> str | None:
        """The first problem of (n, J): arm near the skin, needle in the skin (if ``check_needle``), self-collision.

        Args:
            q: Joint vectors, shape (n, J), in [rad], or [m] for a prismatic joint.
            check_needle: Also check the needle against the skin.
        """
        return (
            self.arm_problem(q) or (self.needle_problem(q) if check_needle else None) or self.self_collision_problem(q)
        )

    def valid(self, q: np.ndarray) -> bool:
        """Whether one configuration (J,) is free: arm and needle outside the skin, no self-collision.

        Args:
            q: One joint vector, shape (J,), in [rad], or [m] for a prismatic joint.
        """
        return self.problem(q[None, :], check_needle=True) is None
