"""Distance and trajectory-similarity kernels (seed 000): p2p, p2t, p2m and t2t (discrete Fréchet).

Public API (all distances in the unit of the coordinates, metres in this project):

- :func:`p2p` point to point; :func:`p2t` point to trajectory (polyline);
- :func:`frechet`, :func:`within` discrete Fréchet distance of two trajectories and its decision version;
- :class:`MeshDistance` exact distance, signed distance, p2m, inside test and needle-segment queries
  against a triangle mesh;
- :class:`TrajectoryBatch` many trajectories packed once for batch queries;
- :class:`MetricInputError` raised for every bad input.
"""

from cosim_validation.metrics.errors import MetricInputError
from cosim_validation.metrics.frechet import frechet, within
from cosim_validation.metrics.mesh_distance import MeshDistance, SegmentDistance
from cosim_validation.metrics.point_distance import p2p
from cosim_validation.metrics.polyline_distance import p2t
from cosim_validation.metrics.trajectory_batch import TrajectoryBatch

__all__ = [
    "MeshDistance",
    "MetricInputError",
    "SegmentDistance",
    "TrajectoryBatch",
    "frechet",
    "p2p",
    "p2t",
    "within",
]
