"""Target generators: ``grid`` (k valid targets per non-empty cube) and ``random`` (the baseline)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cosim_validation.coverage.cube_grid import CubeClass, CubeGrid
from cosim_validation.coverage.target_region import TargetRegion


class Targets(NamedTuple):
    """Generated targets and what it took.

    Attributes:
        targets_m: (N, 3) float64 valid targets in base_link [m], cube by cube (row-major cube order).
        points_generated: Candidate points drawn, valid or not (seed 000's "generated points").
        gave_up: (G, 3) int64 partial cubes that yielded fewer than k targets within the attempt bound.
    """

    targets_m: np.ndarray
    points_generated: int
    gave_up: np.ndarray


def _uniform_in_cubes(rng: np.random.Generator, grid: CubeGrid, cubes: np.ndarray, per_cube: int) -> np.ndarray:
    """(len(cubes), per_cube, 3) uniform points in each cube (M, 3) [m]."""
    corner = grid.origin_m + cubes.astype(np.float64) * grid.granularity_m
    return np.asarray(corner[:, None, :] + rng.random((len(cubes), per_cube, 3)) * grid.granularity_m)


def _fill_partial(
    rng: np.random.Generator, region: TargetRegion, grid: CubeGrid, cubes: np.ndarray, k: int, max_attempts: int
) -> tuple[list[np.ndarray], int]:
    """Sample each partial cube until k of its candidates are valid or ``max_attempts`` were drawn.

    All unfinished cubes draw a batch per round (batches double each round), so the work is vectorised
    and the result depends only on the seed. Returns the valid targets per cube and the attempts.
    """
    found: list[list[np.ndarray]] = [[] for _ in range(len(cubes))]
    count = np.zeros(len(cubes), dtype=np.int64)
    drawn = np.zeros(len(cubes), dtype=np.int64)
    batch = 2 * k
    active = np.arange(len(cubes))
    while len(active):
        size = int(min(batch, max_attempts))
        candidates = _uniform_in_cubes(rng, grid, cubes[active], size)
        take = np.minimum(size, max_attempts - drawn[active])
        ok = region.valid(candidates.reshape(-1, 3)).reshape(len(active), size)
        ok &= np.arange(size)[None, :] < take[:, None]
        for row, cube in enumerate(active):
            need = k - count[cube]
            hits = np.flatnonzero(ok[row])[:need]
            if len(hits):
                found[cube].append(candidates[row, hits])
                count[cube] += len(hits)
            # attempts stop at the candidate that completed the cube
            drawn[cube] += hits[-1] + 1 if len(hits) == need else take[row]
        active = active[(count[active] < k) & (drawn[active] < max_attempts)]
        batch *= 2
    return [np.concatenate(f) if f else np.zeros((0, 3)) for f in found], int(drawn.sum())


def grid_targets(
    region: TargetRegion, grid: CubeGrid, classes: np.ndarray, per_cube: int, seed: int, max_attempts: int
) -> Targets:
    """k valid targets per non-empty cube: full cubes unchecked, partial cubes sampled until k are valid.

    Args:
        region: Where valid targets lie.
        grid: The cubes.
        classes: (nx, ny, nz) int8 :class:`CubeClass` from ``region.classify(grid)``.
        per_cube: k >= 1.
        seed: Generator seed; the same seed gives the same targets.
        max_attempts: Candidates drawn per partial cube at most before giving up on it.
    """
    rng = np.random.default_rng([seed, 0])
    nonempty = np.argwhere(classes != CubeClass.EMPTY)
    is_full = classes[tuple(nonempty.T)] == CubeClass.FULL
    full_points = _uniform_in_cubes(rng, grid, nonempty[is_full], per_cube)
    partial = nonempty[~is_full]
    per_partial, attempts = _fill_partial(rng, region, grid, partial, per_cube, max_attempts)
    chunks: list[np.ndarray] = [np.zeros((0, 3))] * len(nonempty)
    for slot, points in zip(np.flatnonzero(is_full), full_points, strict=True):
        chunks[slot] = points
    for slot, points in zip(np.flatnonzero(~is_full), per_partial, strict=True):
        chunks[slot] = points
    gave_up = partial[np.array([len(p) < per_cube for p in per_partial], dtype=bool)]
    targets = np.concatenate(chunks) if chunks else np.zeros((0, 3))
    return Targets(targets, int(full_points.shape[0] * per_cube) + attempts, gave_up.reshape(-1, 3))


def random_targets(region: TargetRegion, count: int, seed: int, max_attempts: int) -> Targets:
    """Uniform candidates over the region's box until ``count`` are valid (seed 000's random method).

    Attempts are counted as if the candidates were drawn one by one: up to the one that completed
    the suite. Stops (and reports, through ``gave_up`` of shape (1, 3) filled with -1) after
    ``max_attempts`` candidates.
    """
    rng = np.random.default_rng([seed, 0])
    lo, hi = region.bounds_m
    found: list[np.ndarray] = []
    have, drawn = 0, 0
    batch = max(4 * count, 4096)
    while have < count and drawn < max_attempts:
        size = int(min(batch, max_attempts - drawn))
        candidates = lo + rng.random((size, 3)) * (hi - lo)
        hits = np.flatnonzero(region.valid(candidates))[: count - have]
        found.append(candidates[hits])
        have += len(hits)
        drawn += int(hits[-1]) + 1 if have == count else size
        batch *= 2
    gave_up = np.full((0 if have == count else 1, 3), -1, dtype=np.int64)
    return Targets(np.concatenate(found) if found else np.zeros((0, 3)), drawn, gave_up)
