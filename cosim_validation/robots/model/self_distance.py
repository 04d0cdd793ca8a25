"""The smallest distance between parts of the arm that are not joined (the monitor's ``self_distance``).

Uses the collision model of :class:`SelfCollision` (URDF cylinders and the needle capsule in MuJoCo) and
MuJoCo's exact geom-geom distance for every pair of geoms on different bodies that are not connected by a
joint (those touch by construction) and not excluded. Distances are signed: <= 0 means touching.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.robots.model.self_collision import SelfCollision


class SelfDistance:
    """Callable ``(n, J) joint vectors [rad] -> (n,) smallest distance between non-adjacent parts [m]``.

    Args:
        collision: The arm's self-collision model.
        horizon_m: Distances beyond this are reported as this [m] (MuJoCo's distmax; far is far enough).
    """

    def __init__(self, collision: SelfCollision, horizon_m: float = 0.5) -> None:
        self._collision = collision
        self._mj = collision._mujoco
        self.horizon_m = float(horizon_m)
        self.pairs = collision.pairs

    def __call__(self, q: ArrayLike) -> np.ndarray:
        """The smallest distance between non-adjacent parts at each joint vector of ``q``.

        Signed (<= 0: touching) and at most :attr:`horizon_m`.

        Args:
            q: (n, J) joint vectors, or one (J,), in [rad], or [m] for a prismatic joint.

        Returns:
            (n,) distances in [m].
        """
        collision = self._collision
        batch = collision.kinematics.as_joint_batch(q)
        out = np.empty(batch.shape[0])
        model, data = collision.model, collision.data
        for i, row in enumerate(batch):
            data.qpos[collision._qpos_index] = row
            self._mj.mj_kinematics(model, data)
            best = self.horizon_m
            for a, b in self.pairs:
                best = min(best, self._mj.mj_geomDistance(model, data, int(a), int(b), self.horizon_m, None))
            out[i] = best
        return out
