"""p2p: Euclidean distance between points ([Actuators 2025])."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from cosim_validation.monitor.metrics.arrays import as_point_or_points
from cosim_validation.monitor.metrics.errors import MetricInputError


def p2p(a: ArrayLike, b: ArrayLike) -> float | NDArray[np.float64]:
    """Euclidean distance between points, row by row.

    Args:
        a: One point (d,) or n points (n, d), e.g. actual needle-tip positions in base_link [m].
        b: One point (d,) or n points (n, d) in the same frame; one point is compared with every row of
            the other argument.

    Returns:
        A float when both are single points, else (n,) float64 distances.

    Raises:
        MetricInputError: Mismatched d or n, NaN/inf, non-numeric dtype.
    """
    A, a_single = as_point_or_points("a", a)
    B, b_single = as_point_or_points("b", b)
    if A.shape[1] != B.shape[1]:
        raise MetricInputError(f"a and b must have the same dimension, got shapes {A.shape!r} and {B.shape!r}")
    if A.shape[0] != B.shape[0] and not (a_single or b_single):
        raise MetricInputError(f"a and b must have the same number of points, got shapes {A.shape!r} and {B.shape!r}")
    diff = A - B
    dist: NDArray[np.float64] = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    if a_single and b_single:
        return float(dist[0])
    return dist
