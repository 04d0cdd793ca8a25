"""Distance and trajectory-similarity kernels ([Actuators 2025]): p2p, p2t, p2m and t2t (discrete Fréchet).

Public API (all distances in the unit of the coordinates, metres in this project):

- :func:`p2p` point to point; :func:`p2t` point to trajectory (polyline);
- :func:`frechet`, :func:`within` discrete Fréchet distance of two trajectories and its decision version;
  :func:`frechet_coupling` with an optimal coupling;
- :func:`frechet_pairs`, :func:`within_pairs`, :func:`frechet_all_pairs`, :func:`within_all_pairs` batches
  in parallel; :class:`TrajectoryBatch` packs trajectories once for them;
- :class:`InsideTest` exact ray-parity point-in-mesh test (numba), which signs every mesh distance;
- :class:`MeshDistance` exact distance, signed distance, p2m, inside test and needle-segment queries
  against a triangle mesh; :class:`SignedDistanceGrid` the same questions in nanoseconds with a proven
  interval, exact threshold decisions;
- :class:`MetricInputError` raised for every bad input.
"""

from cosim_validation.monitor.metrics.box_distance import box_distance_m
from cosim_validation.monitor.metrics.distance_grid import DistanceBounds, SignedDistanceGrid
from cosim_validation.monitor.metrics.errors import MetricInputError
from cosim_validation.monitor.metrics.frechet import frechet, within
from cosim_validation.monitor.metrics.frechet_batch import (
    frechet_all_pairs,
    frechet_pairs,
    within_all_pairs,
    within_pairs,
)
from cosim_validation.monitor.metrics.frechet_coupling import FrechetCoupling, frechet_coupling
from cosim_validation.monitor.metrics.inside_test import InsideTest
from cosim_validation.monitor.metrics.mesh_distance import MeshDistance, SegmentDistance
from cosim_validation.monitor.metrics.point_distance import p2p
from cosim_validation.monitor.metrics.polyline_distance import p2t
from cosim_validation.monitor.metrics.trajectory_batch import TrajectoryBatch

__all__ = [
    "DistanceBounds",
    "FrechetCoupling",
    "InsideTest",
    "MeshDistance",
    "MetricInputError",
    "SegmentDistance",
    "SignedDistanceGrid",
    "TrajectoryBatch",
    "box_distance_m",
    "frechet",
    "frechet_all_pairs",
    "frechet_coupling",
    "frechet_pairs",
    "p2p",
    "p2t",
    "within",
    "within_all_pairs",
    "within_pairs",
]
