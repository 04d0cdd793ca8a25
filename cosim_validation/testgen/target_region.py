"""The region of valid test targets: inside the target model, away from obstacles, in a sub-region.

A valid target lies inside the target model, more than ``margin_m`` outside every obstacle, and, for
a sub-region, within ``within_m`` of a ``near`` model (e.g. the part of the left lung within 30 mm of
the heart). Cubes are classified against this region exactly: the surface of the target decides
through an exact triangle-cube overlap test, distances through 1-Lipschitz bounds at the cube centre.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import NamedTuple

import numpy as np

from cosim_validation.anatomy import AnatomyModel
from cosim_validation.monitor.metrics import box_distance_m
from cosim_validation.testgen.box_kernels import mark_surface_cubes
from cosim_validation.testgen.cube_grid import CubeClass, CubeGrid
from cosim_validation.testgen.inside_test import InsideTest
from cosim_validation.testgen.model_distance import signed_distance_m

# Rounding allowance of the float32 distance queries [m] (well above their ~1e-8 m error).
_DISTANCE_SLACK_M = 1e-6


class DistanceBand(NamedTuple):
    """Valid targets p keep ``above_m < signed_distance(model, p) <= at_most_m`` [m] (negative inside)."""

    model: AnatomyModel
    above_m: float
    at_most_m: float


@dataclass(frozen=True, eq=False)
class TargetRegion:
    """Where valid targets lie.

    Attributes:
        name: The region's name (a model name or a configured sub-region).
        target: The target model.
        obstacles: Models a target must stay out of.
        margin_m: Targets stay more than this far outside every obstacle [m], >= 0.
        near: The model of a sub-region "within ``within_m`` of ``near``", or None.
        within_m: Radius of that sub-region [m]; ignored without ``near``.
    """

    name: str
    target: AnatomyModel
    obstacles: tuple[AnatomyModel, ...] = ()
    margin_m: float = 0.0
    near: AnatomyModel | None = None
    within_m: float = 0.0
    _inside: dict[str, InsideTest] = field(default_factory=dict, repr=False)

    def inside_test(self, model: AnatomyModel) -> InsideTest:
        """The (cached) exact inside test of ``model``.

        Args:
            model: The model (the target, an obstacle or ``near``); tests are cached by model name.
        """
        if model.name not in self._inside:
            self._inside[model.name] = InsideTest(model.vertices_m, model.faces)
        return self._inside[model.name]

    @cached_property
    def bounds_m(self) -> np.ndarray:
        """(2, 3) box holding the region: the target's box, cut to the sub-region's box."""
        bounds = self.target.bounds_m.copy()
        if self.near is not None:
            near = self.near.bounds_m
            bounds[0] = np.maximum(bounds[0], near[0] - self.within_m)
            bounds[1] = np.minimum(bounds[1], near[1] + self.within_m)
        return bounds

    def _clear_of_obstacles(self, points_m: np.ndarray) -> np.ndarray:
        """(N,) bool: more than margin_m outside every obstacle."""
        ok = np.ones(len(points_m), dtype=bool)
        for obstacle in self.obstacles:
            if self.margin_m == 0.0:
                ok &= ~self.inside_test(obstacle).contains(points_m)
                continue
            near = ok & (box_distance_m(obstacle.bounds_m, points_m) <= self.margin_m)
            if near.any():
                ok[near] = signed_distance_m(obstacle, points_m[near]) > self.margin_m
        return ok

    def _in_subregion(self, points_m: np.ndarray) -> np.ndarray:
        if self.near is None:
            return np.ones(len(points_m), dtype=bool)
        ok = box_distance_m(self.near.bounds_m, points_m) <= self.within_m
        if ok.any():
            ok[ok] = np.maximum(signed_distance_m(self.near, points_m[ok]), 0.0) <= self.within_m
        return ok

    def valid(self, points_m: np.ndarray) -> np.ndarray:
        """(N,) bool: which of the (N, 3) points [m] are valid targets.

        Args:
            points_m: Candidate targets in base_link, shape (N, 3) (or anything that reshapes to it), in [m].
        """
        points = np.ascontiguousarray(points_m, dtype=np.float64).reshape(-1, 3)
        ok = self.inside_test(self.target).contains(points)
        if ok.any():
            ok[ok] = self._in_subregion(points[ok])
        if ok.any():
            ok[ok] = self._clear_of_obstacles(points[ok])
        return ok

    def classify(self, grid: CubeGrid) -> np.ndarray:
        """(nx, ny, nz) int8 :class:`CubeClass` of every cube of ``grid``.

        Args:
            grid: The grid of cubes over the region's box, in base_link.
        """
        surface = mark_surface_cubes(
            self.target.vertices_m, self.target.faces, grid.origin_m, grid.granularity_m, grid.shape, 1e-9
        )
        centres = grid.all_centres_m().reshape(-1, 3)
        classes = np.where(surface.ravel(), CubeClass.PARTIAL, CubeClass.EMPTY).astype(np.int8)
        whole = ~surface.ravel()
        classes[whole] = np.where(self.inside_test(self.target).contains(centres[whole]), CubeClass.FULL, 0)
        half_diagonal_m = grid.granularity_m * np.sqrt(3.0) / 2.0 + _DISTANCE_SLACK_M
        self._limit_by_distance(classes, centres, half_diagonal_m)
        return classes.reshape(tuple(grid.shape))

    def distance_bands(self) -> list[DistanceBand]:
        """The bands of signed distance a valid target keeps.

        Within ``within_m`` of ``near`` (if any), more than ``margin_m`` outside each obstacle. Signed distances are
        1-Lipschitz in the point.
        """
        bands = [DistanceBand(self.near, -np.inf, self.within_m)] if self.near is not None else []
        return bands + [DistanceBand(obstacle, self.margin_m, np.inf) for obstacle in self.obstacles]

    def _limit_by_distance(self, classes: np.ndarray, centres: np.ndarray, h: float) -> None:
        """Demote cubes by the sub-region and the obstacle margins.

        Each constraint is ``u(p) <= 0`` for a 1-Lipschitz u: ``p2m_near(p) - within_m`` for the
        sub-region, ``margin_m - signed_distance_obstacle(p)`` for an obstacle. A cube of half diagonal
        h is wholly valid if ``u(centre) + h <= 0`` and wholly invalid if ``u(centre) - h > 0``; a cube
        its centre cannot decide is split into 4 x 4 x 4 sub-cubes and decided by them if they agree.
        """
        if self.near is not None:
            near, radius = self.near, self.within_m
            self._demote(
                classes,
                centres,
                h,
                lambda p: np.maximum(signed_distance_m(near, p), 0.0) - radius,
                box_distance_m(near.bounds_m, centres) - h > radius,
                None,
            )
        for obstacle in self.obstacles:
            self._demote(
                classes,
                centres,
                h,
                partial(self._margin_excess, obstacle),
                None,
                box_distance_m(obstacle.bounds_m, centres) - h > self.margin_m,
            )

    def _margin_excess(self, obstacle: AnatomyModel, points_m: np.ndarray) -> np.ndarray:
        """``margin_m - signed distance``: > 0 where a point is too close to (or in) the obstacle."""
        return np.asarray(self.margin_m - signed_distance_m(obstacle, points_m))

    @staticmethod
    def _demote(
        classes: np.ndarray,
        centres: np.ndarray,
        h: float,
        u: Callable[[np.ndarray], np.ndarray],
        surely_out: np.ndarray | None,
        surely_in: np.ndarray | None,
    ) -> None:
        """Apply one constraint ``u <= 0`` to the cube classes (see :meth:`_limit_by_distance`)."""
        live = classes != CubeClass.EMPTY
        if surely_out is not None:
            classes[live & surely_out] = CubeClass.EMPTY
            live &= ~surely_out
        if surely_in is not None:
            live &= ~surely_in
        index = np.flatnonzero(live)
        value = u(centres[index])
        classes[index[value - h > 0]] = CubeClass.EMPTY
        undecided = index[(value - h <= 0) & (value + h > 0)]
        g = 2.0 * (h - _DISTANCE_SLACK_M) / np.sqrt(3.0)
        offsets = (np.stack(np.meshgrid(*[np.arange(4)] * 3, indexing="ij"), -1).reshape(-1, 3) + 0.5) / 4 - 0.5
        sub = u((centres[undecided][:, None, :] + offsets[None] * g).reshape(-1, 3)).reshape(len(undecided), 64)
        sub_h = (h - _DISTANCE_SLACK_M) / 4.0 + _DISTANCE_SLACK_M
        classes[undecided[np.all(sub - sub_h > 0, axis=1)]] = CubeClass.EMPTY
        mixed = undecided[~np.all(sub - sub_h > 0, axis=1) & ~np.all(sub + sub_h <= 0, axis=1)]
        classes[mixed[classes[mixed] == CubeClass.FULL]] = CubeClass.PARTIAL
