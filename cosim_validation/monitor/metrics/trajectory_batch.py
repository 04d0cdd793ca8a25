"""Many trajectories packed into one coordinate array, the input of the Fréchet kernels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosim_validation.monitor.metrics.arrays import as_points
from cosim_validation.monitor.metrics.errors import MetricInputError

#: The kernels' fast path works on three coordinate rows; fewer coordinates are padded with zero rows.
MIN_ROWS = 3


def pack_columns(trajectories: Sequence[NDArray[np.float64]], dim: int) -> NDArray[np.float64]:
    """Checked (n_i, dim) arrays side by side as one (max(dim, 3), sum n_i) C-contiguous array.

    Args:
        trajectories: Checked float64 trajectories, shape (n_i, dim) each; packed in this order.
        dim: d, the number of coordinates of every trajectory; rows dim.. are zero when dim < 3.
    """
    total = sum(t.shape[0] for t in trajectories)
    X = np.zeros((max(dim, MIN_ROWS), total))
    start = 0
    for t in trajectories:
        X[:dim, start : start + t.shape[0]] = t.T
        start += t.shape[0]
    return X


@dataclass(frozen=True)
class TrajectoryBatch:
    """k trajectories of one dimension d packed for the batch kernels.

    Build it once with :meth:`from_trajectories` and reuse it for many queries; the batch functions also
    accept a plain sequence of arrays and pack it themselves.

    Attributes:
        coords: (max(d, 3), N) float64, C-contiguous: coordinate r of the concatenated points in row r
            (rows d.. are zero when d < 3), trajectory i in columns ``offsets[i]:offsets[i + 1]``.
        offsets: (k + 1,) int64, non-decreasing, ``offsets[0] == 0``, ``offsets[-1] == N``.
        dim: d, the dimension of the points.
    """

    coords: NDArray[np.float64]
    offsets: NDArray[np.int64]
    dim: int

    @classmethod
    def from_trajectories(
        cls, trajectories: Sequence[ArrayLike] | NDArray[Any], *, name: str = "trajectories"
    ) -> TrajectoryBatch:
        """Check and pack trajectories.

        Args:
            trajectories: k >= 1 arrays (n_i, d), n_i >= 1, all of the same d, finite (integers are
                converted to float64), or one (k, n, d) array of equal-length trajectories.
            name: Argument name for error messages.

        Raises:
            MetricInputError: Empty sequence, empty trajectory, mixed dimensions, NaN/inf, bad dtype.
        """
        if isinstance(trajectories, np.ndarray) and trajectories.ndim != 3:
            raise MetricInputError(
                f"{name}: expected (n, d) trajectories or one (k, n, d) array, got {trajectories.shape!r}"
            )
        if len(trajectories) == 0:
            raise MetricInputError(f"{name}: expected at least one trajectory, got an empty sequence")
        arrays = [np.asarray(t) if isinstance(t, np.ndarray) else None for t in trajectories]
        if all(a is not None and a.ndim == 2 and a.shape[0] >= 1 and a.dtype.kind in "iuf" for a in arrays):
            dims = {a.shape[1] for a in arrays if a is not None}
            if len(dims) == 1 and dims.pop() >= 1:
                return cls._pack_checked_shapes(arrays, name)  # type: ignore[arg-type]
        checked = [as_points(f"{name}[{i}]", t) for i, t in enumerate(trajectories)]
        dim = checked[0].shape[1]
        for i, t in enumerate(checked):
            if t.shape[1] != dim:
                raise MetricInputError(
                    f"{name}[{i}]: every trajectory must have dimension {dim} like {name}[0], got shape {t.shape!r}"
                )
        return cls._pack_checked_shapes(checked, name)

    @classmethod
    def _pack_checked_shapes(cls, arrays: list[NDArray[Any]], name: str) -> TrajectoryBatch:
        """Pack (n_i >= 1, d) real arrays of one d; the finiteness check runs once on the packed result."""
        dim = arrays[0].shape[1]
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        np.cumsum([a.shape[0] for a in arrays], out=offsets[1:])
        coords = np.zeros((max(dim, MIN_ROWS), int(offsets[-1])))
        coords[:dim] = np.concatenate(arrays, axis=0).T
        if not np.isfinite(coords).all():
            first_bad = int(np.argmax(~np.isfinite(coords).all(axis=0)))
            i = int(np.searchsorted(offsets, first_bad, side="right") - 1)
            as_points(f"{name}[{i}]", arrays[i])  # raises the precise error
        return cls(coords, offsets, dim)

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)

    def lengths(self) -> NDArray[np.int64]:
        """(k,) number of points of each trajectory."""
        return np.diff(self.offsets)

    def trajectory(self, i: int) -> NDArray[np.float64]:
        """Trajectory i as a new (n_i, d) array.

        Args:
            i: Index of the trajectory in the batch, negative counting from the end as for a list.

        Raises:
            MetricInputError: ``i`` is out of range.
        """
        if not -len(self) <= i < len(self):
            raise MetricInputError(f"trajectory index {i!r} out of range for a batch of {len(self)}")
        i %= len(self)
        return self.coords[: self.dim, self.offsets[i] : self.offsets[i + 1]].T.copy()


def as_batch(value: TrajectoryBatch | Sequence[ArrayLike] | NDArray[Any], name: str) -> TrajectoryBatch:
    """``value`` itself if it is a :class:`TrajectoryBatch`, otherwise the packed sequence.

    Args:
        value: A batch, or trajectories as :meth:`TrajectoryBatch.from_trajectories` accepts them.
        name: Argument name for error messages.
    """
    if isinstance(value, TrajectoryBatch):
        return value
    return TrajectoryBatch.from_trajectories(value, name=name)
