"""Where needle insertions start: a box in base_link, outside every anatomical model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cosim_validation.anatomy import AnatomyModel
from cosim_validation.coverage.inside_test import InsideTest
from cosim_validation.exceptions import InputError


@dataclass(frozen=True, eq=False)
class SourceRegion:
    """A box of source points; a zero half extent along an axis fixes that coordinate.

    Attributes:
        center_m: (3,) float64 box centre in base_link [m].
        half_extent_m: (3,) float64 half sizes [m], >= 0 (all zero: one fixed source point).
    """

    center_m: np.ndarray
    half_extent_m: np.ndarray

    def sample(self, rng: np.random.Generator, count: int, models: Sequence[AnatomyModel]) -> np.ndarray:
        """``count`` uniform points of the box outside every model in ``models``; (count, 3) float64 [m].

        Raises:
            InputError: The box lies (almost) entirely inside a model, so no source can be found.
        """
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
