"""A regular grid of cubes over a box in base_link: indices, centres and subdivision into 8 children."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.exceptions import InputError


class CubeClass(IntEnum):
    """How a cube meets the region of valid targets."""

    EMPTY = 0  # holds no valid target
    PARTIAL = 1  # holds some: every candidate point is checked
    FULL = 2  # every point of the cube is a valid target: no check needed


@dataclass(frozen=True, eq=False)
class CubeGrid:
    """Cubes of edge ``granularity_m``; cube (i, j, k) spans ``origin_m + [i, j, k] * g`` to ``+ g``.

    Attributes:
        origin_m: (3,) float64 minimum corner of cube (0, 0, 0) in base_link [m].
        granularity_m: Cube edge [m], > 0.
        shape: (3,) int64 number of cubes along x, y, z.
    """

    origin_m: np.ndarray
    granularity_m: float
    shape: np.ndarray

    @classmethod
    def covering(cls, bounds_m: ArrayLike, granularity_m: float) -> CubeGrid:
        """The grid starting at ``bounds_m[0]`` with enough cubes to cover the box ``bounds_m`` (2, 3).

        Args:
            bounds_m: Minimum and maximum corner of the box in base_link, shape (2, 3), in [m].
            granularity_m: Cube edge, > 0, in [m].

        Raises:
            InputError: ``granularity_m`` is not > 0.
        """
        bounds = np.asarray(bounds_m, dtype=np.float64)
        if not granularity_m > 0:
            raise InputError(f"granularity must be > 0 m, got {granularity_m!r}")
        shape = np.maximum(np.ceil((bounds[1] - bounds[0]) / granularity_m), 1).astype(np.int64)
        shape += bounds[0] + shape * granularity_m < bounds[1]  # rounding must not leave the top face out
        return cls(bounds[0].copy(), float(granularity_m), shape)

    @property
    def n_cubes(self) -> int:
        """Number of cubes of the grid."""
        return int(np.prod(self.shape))

    def cube_index(self, points_m: ArrayLike) -> np.ndarray:
        """(N, 3) int64 index of the cube holding each point; a row of -1 outside the grid.

        Args:
            points_m: Points in base_link, shape (N, 3) (or anything that reshapes to it), in [m].
        """
        points = np.asarray(points_m, dtype=np.float64).reshape(-1, 3)
        index = np.floor((points - self.origin_m) / self.granularity_m).astype(np.int64)
        outside = np.any((index < 0) | (index >= self.shape), axis=1)
        index[outside] = -1
        return np.asarray(index)

    def centres_m(self, index: ArrayLike) -> np.ndarray:
        """(N, 3) float64 centres of the cubes ``index`` (N, 3) [m].

        Args:
            index: Cube indices (i, j, k), shape (N, 3).

        Returns:
            The centres in base_link, shape (N, 3), in [m].
        """
        return np.asarray(self.origin_m + (np.asarray(index, dtype=np.float64) + 0.5) * self.granularity_m)

    def all_centres_m(self) -> np.ndarray:
        """(nx, ny, nz, 3) float64 centres of every cube [m]."""
        axes = [self.origin_m[k] + (np.arange(self.shape[k]) + 0.5) * self.granularity_m for k in range(3)]
        return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)

    def flat(self, index: ArrayLike) -> np.ndarray:
        """(N,) int64 row-major number of each cube (N, 3).

        Args:
            index: Cube indices (i, j, k) inside the grid, shape (N, 3).
        """
        return np.asarray(np.ravel_multi_index(np.asarray(index, dtype=np.int64).T, tuple(self.shape)))

    def refined(self) -> CubeGrid:
        """The grid of half the edge over the same box: every cube becomes 8 children."""
        return CubeGrid(self.origin_m.copy(), self.granularity_m / 2.0, self.shape * 2)

    def children(self, index: ArrayLike) -> np.ndarray:
        """(8, 3) int64 indices in :meth:`refined` of the 8 children of cube ``index`` (3,).

        Args:
            index: One cube index (i, j, k), shape (3,), inside the grid.

        Raises:
            InputError: ``index`` is outside the grid.
        """
        parent = np.asarray(index, dtype=np.int64).reshape(3)
        if np.any(parent < 0) or np.any(parent >= self.shape):
            raise InputError(f"cube index {parent.tolist()!r} is outside the grid of shape {self.shape.tolist()!r}")
        offsets = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=np.int64)
        return 2 * parent + offsets

    def as_dict(self) -> dict[str, object]:
        """JSON-ready description (origin_m, granularity_m, shape)."""
        return {"origin_m": self.origin_m.tolist(), "granularity_m": self.granularity_m, "shape": self.shape.tolist()}
