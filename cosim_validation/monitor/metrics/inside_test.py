"""Point-in-model test by exact ray parity, for millions of points against one closed mesh."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.monitor.metrics import parity_kernels as kernels
from cosim_validation.monitor.metrics.errors import MetricInputError

# Aim for about this many triangles per xy cell (a cell is a column the rays of its points share).
_TRIANGLES_PER_CELL = 0.25
#: Query points above which the parity runs on every core (below, starting the threads costs more).
PARALLEL_POINTS = 1 << 15


class InsideTest:
    """Whether points lie inside a closed triangle mesh ([Actuators 2025]'s ray casting with odd/even parity).

    Rays are cast along +z; triangles are bucketed once by xy cell, so a query visits only the
    triangles above and below its own column. Exact for points off the surface (see
    :mod:`parity_kernels`); the mesh must be closed (watertight), as every loaded AnatomyModel is.

    Args:
        vertices_m: (V, 3) float64 vertices [m], any frame (queries in the same frame).
        faces: (F, 3) integer triangles.
    """

    def __init__(self, vertices_m: ArrayLike, faces: ArrayLike) -> None:
        vertices = np.ascontiguousarray(vertices_m, dtype=np.float64)
        tri = np.ascontiguousarray(faces, dtype=np.int64)
        if vertices.ndim != 2 or vertices.shape[1] != 3 or len(vertices) < 3:
            raise MetricInputError(f"inside test: vertices must be (V >= 3, 3), got shape {vertices.shape!r}")
        if tri.ndim != 2 or tri.shape[1] != 3 or len(tri) < 1:
            raise MetricInputError(f"inside test: faces must be (F >= 1, 3), got shape {tri.shape!r}")
        self.vx, self.vy, self.vz = (np.ascontiguousarray(vertices[:, k]) for k in range(3))
        self.faces = tri
        self.lo = vertices.min(axis=0)
        self.hi = vertices.max(axis=0)
        span = np.maximum(self.hi[:2] - self.lo[:2], 1e-12)
        self.cell_m = float(np.sqrt(span[0] * span[1] * _TRIANGLES_PER_CELL / len(tri)))
        self.nx = int(span[0] / self.cell_m) + 1
        self.ny = int(span[1] / self.cell_m) + 1
        self.start, self.ids = kernels.build_bins(
            self.vx, self.vy, tri, float(self.lo[0]), float(self.lo[1]), self.cell_m, self.nx, self.ny
        )

    def contains(self, points_m: ArrayLike) -> np.ndarray:
        """Inside (True) or outside for each point.

        Args:
            points_m: (N, 3) float64 points [m], frame of the mesh.

        Returns:
            (N,) bool.
        """
        points = np.ascontiguousarray(points_m, dtype=np.float64).reshape(-1, 3)
        kernel = kernels.contains_points_parallel if points.shape[0] >= PARALLEL_POINTS else kernels.contains_points
        return np.asarray(
            kernel(
                self.vx,
                self.vy,
                self.vz,
                self.faces,
                self.start,
                self.ids,
                self.lo,
                self.hi,
                self.cell_m,
                self.nx,
                self.ny,
                points,
            )
        )
