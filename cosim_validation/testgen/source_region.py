"""Where needle insertions start: a box in base_link, outside every anatomical model.

An arm that pivots about a remote centre of motion (the dVRK PSM, the Raven-II) inserts along the line through
that centre: its region is the centre (a box of zero extent) with ``toward_target_m``, so each case's source lies
that far from the centre on the line to its own target, and the insertion is the insertion joint's alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cosim_validation.anatomy import AnatomyModel
from cosim_validation.common.exceptions import InputError
from cosim_validation.testgen.inside_test import InsideTest


@dataclass(frozen=True, eq=False)
class SourceRegion:
    """A box of source points; a zero half extent along an axis fixes that coordinate.

    Attributes:
        center_m: (3,) float64 box centre in base_link [m].
        half_extent_m: (3,) float64 half sizes [m], >= 0 (all zero: one fixed source point).
        toward_target_m: Each source moves this far from its box point towards its case's target [m] (0: not).
    """

    center_m: np.ndarray
    half_extent_m: np.ndarray
    toward_target_m: float = 0.0

    def sample(
        self,
        rng: np.random.Generator,
        count: int,
        models: Sequence[AnatomyModel],
        targets_m: np.ndarray | None = None,
    ) -> np.ndarray:
        """``count`` uniform points of the box outside every model in ``models``; (count, 3) float64 [m].

        With ``toward_target_m`` each point then moves that far towards its target.

        Args:
            rng: The random stream.
            count: Number of source points.
            models: The anatomy models no source may lie inside.
            targets_m: The cases' targets in base_link, shape (count, 3), in [m]; needed only with ``toward_target_m``.

        Returns:
            The source points in base_link, shape (count, 3), in [m].

        Raises:
            InputError: The box lies (almost) entirely inside a model, so no source can be found, or a moved
                source lands inside a model.
        """
        points = self._box_points(rng, count, models)
        if self.toward_target_m == 0.0:
            return points
        if targets_m is None or len(targets_m) != count:
            raise InputError("source region with toward_target_m needs one target per source")
        direction = targets_m - points
        unit = direction / np.linalg.norm(direction, axis=1, keepdims=True)
        points = np.asarray(points + self.toward_target_m * unit)
        for model in models:
            inside = InsideTest(model.vertices_m, model.faces).contains(points)
            if inside.any():
                raise InputError(
                    f"source region: a source {self.toward_target_m} m from {self.center_m.tolist()!r} m towards "
                    f"its target lies inside the model {model.name!r} ({points[int(np.argmax(inside))].tolist()!r})"
                )
        return points

    def _box_points(self, rng: np.random.Generator, count: int, models: Sequence[AnatomyModel]) -> np.ndarray:
        tests = [(m.name, InsideTest(m.vertices_m, m.faces)) for m in models]
        out = np.empty((count, 3))
        have, drawn, limit = 0, 0, 100 * count + 1000
        while have < count and drawn < limit:
            size = max(2 * (count - have), 64)
            points = self.center_m + (2.0 * rng.random((size, 3)) - 1.0) * self.half_extent_m
            blocked = np.zeros(size, dtype=bool)
            for _, test in tests:
                blocked |= test.contains(points)
            free = points[~blocked][: count - have]
            out[have : have + len(free)] = free
            have += len(free)
            drawn += size
        if have < count:
            inside = [name for name, test in tests if test.contains(self.center_m[None, :])[0]]
            raise InputError(
                f"source region (centre {self.center_m.tolist()!r} m, half extent {self.half_extent_m.tolist()!r} m) "
                f"lies inside the models {inside or [m.name for m in models]!r}; sources must be outside every model"
            )
        return out
