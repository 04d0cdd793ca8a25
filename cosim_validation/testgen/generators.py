"""Target generators: ``grid`` (k valid targets per non-empty cube) and ``random`` (the baseline)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cosim_validation.testgen.cube_grid import CubeClass, CubeGrid
from cosim_validation.testgen.surface_kernels import surface_candidates
from cosim_validation.testgen.target_region import TargetRegion

# Rounds of surface-guided candidates (4k each) for partial cubes that uniform sampling could not fill.
SURFACE_ROUNDS = 8


class Targets(NamedTuple):
    """Generated targets and what it took.

    Attributes:
        targets_m: (N, 3) float64 valid targets in base_link [m], cube by cube (row-major cube order).
        points_generated: Candidate points drawn, valid or not (seed 000's "generated points").
        gave_up: (G, 3) int64 partial cubes that yielded fewer than k targets within the attempt bound.
        lattice_empty: (E, 3) int64 partial cubes in which no candidate and no point of a 16^3 lattice
            was valid: counted as empty (their valid part, if any, is thinner than 1/16 of the edge).
    """

    targets_m: np.ndarray
    points_generated: int
    gave_up: np.ndarray
    lattice_empty: np.ndarray = np.zeros((0, 3), dtype=np.int64)


def _uniform_in_cubes(rng: np.random.Generator, grid: CubeGrid, cubes: np.ndarray, per_cube: int) -> np.ndarray:
    """(len(cubes), per_cube, 3) uniform points in each cube (M, 3) [m]."""
    corner = grid.origin_m + cubes.astype(np.float64) * grid.granularity_m
    return np.asarray(corner[:, None, :] + rng.random((len(cubes), per_cube, 3)) * grid.granularity_m)


def _fill_partial(
    rng: np.random.Generator, region: TargetRegion, grid: CubeGrid, cubes: np.ndarray, k: int, max_attempts: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Sample each partial cube until k of its candidates are valid or ``max_attempts`` were drawn.

    All unfinished cubes draw a batch per round (batches double each round), so the work is vectorised
    and the result depends only on the seed. Attempts of a cube stop at the candidate that completed it.

    Returns:
        targets (T, 3) float64 grouped by cube in the order of ``cubes``, the (T,) int64 position in
        ``cubes`` of each target, and the number of candidates drawn.
    """
    count = np.zeros(len(cubes), dtype=np.int64)
    drawn = np.zeros(len(cubes), dtype=np.int64)
    points: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    batch = 2 * k
    active = np.arange(len(cubes))
    while len(active):
        size = int(min(batch, max_attempts))
        candidates = _uniform_in_cubes(rng, grid, cubes[active], size)
        allowed = np.minimum(size, max_attempts - drawn[active])
        ok = region.valid(candidates.reshape(-1, 3)).reshape(len(active), size)
        ok &= np.arange(size)[None, :] < allowed[:, None]
        rank = np.cumsum(ok, axis=1)
        need = (k - count[active])[:, None]
        keep = ok & (rank <= need)
        rows, cols = np.nonzero(keep)
        points.append(candidates[rows, cols])
        owners.append(active[rows])
        done = rank[:, -1] >= need[:, 0]
        last = np.argmax(rank >= need, axis=1)  # position of the candidate that completed the cube
        drawn[active] += np.where(done, last + 1, allowed)
        count[active] += keep.sum(axis=1)
        active = active[(count[active] < k) & (drawn[active] < max_attempts)]
        batch *= 2
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    order = np.argsort(owner, kind="stable")
    targets = np.concatenate(points)[order] if points else np.zeros((0, 3))
    return targets, owner[order], int(drawn.sum())


def _fill_from_surface(
    rng: np.random.Generator, region: TargetRegion, grid: CubeGrid, cubes: np.ndarray, found: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Complete partial cubes from points just inside the target's surface (see :mod:`surface_kernels`).

    Args:
        cubes: (M, 3) partial cubes; found: (M,) targets each already has.

    Returns:
        targets (T, 3), the (T,) position in ``cubes`` of each, and the candidates drawn.
    """
    target = region.target
    inset_m = 1e-4 * grid.granularity_m
    # faces sorted by their lowest x: a cube needs only the slab of faces that can reach it in x
    tri_x = target.vertices_m[target.faces, 0]
    order = np.argsort(tri_x.min(axis=1), kind="stable")
    faces_sorted, min_x = target.faces[order], tri_x.min(axis=1)[order]
    reach_m = float(np.max(tri_x.max(axis=1) - tri_x.min(axis=1)))
    count = found.copy()
    points: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    drawn = 0
    for _ in range(SURFACE_ROUNDS):
        short = np.flatnonzero(count < k)
        if not len(short):
            break
        lo = grid.origin_m + cubes[short] * grid.granularity_m
        first = np.searchsorted(min_x, lo[:, 0] - reach_m, side="left")
        last = np.searchsorted(min_x, lo[:, 0] + grid.granularity_m, side="right")
        batch = np.stack(
            [
                surface_candidates(
                    target.vertices_m, faces_sorted[first[i] : last[i]], lo[i], lo[i] + grid.granularity_m, inset_m, u
                )
                for i, u in enumerate(rng.random((len(short), 4 * k, 3)))
            ]
        )
        flat = batch.reshape(-1, 3)
        ok = np.isfinite(flat).all(axis=1)
        home = np.repeat(cubes[short], 4 * k, axis=0)
        ok[ok] = np.all(grid.cube_index(flat[ok]) == home[ok], axis=1)  # clamped onto a far face: next cube
        ok[ok] = region.valid(flat[ok])
        ok = ok.reshape(len(short), 4 * k)
        keep = ok & (np.cumsum(ok, axis=1) <= (k - count[short])[:, None])
        rows, cols = np.nonzero(keep)
        points.append(batch[rows, cols])
        owners.append(short[rows])
        count[short] += keep.sum(axis=1)
        drawn += int(np.isfinite(batch[..., 0]).sum())
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    return (np.concatenate(points) if points else np.zeros((0, 3))), owner, drawn


LATTICE = 16


def _fill_from_lattice(
    rng: np.random.Generator, region: TargetRegion, grid: CubeGrid, cubes: np.ndarray, found: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Last resort for cubes still short of k: the valid points of a 16^3 lattice in each cube.

    Returns targets (T, 3), their (T,) position in ``cubes``, and the lattice points checked.
    """
    steps = (np.arange(LATTICE) + 0.5) / LATTICE
    lattice = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), -1).reshape(-1, 3) * grid.granularity_m
    points: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    short = np.flatnonzero(found < k)
    for i in short:
        candidates = grid.origin_m + cubes[i] * grid.granularity_m + lattice
        valid = np.flatnonzero(region.valid(candidates))
        chosen = rng.permutation(valid)[: k - found[i]]
        points.append(candidates[np.sort(chosen)])
        owners.append(np.full(len(chosen), i, dtype=np.int64))
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    return (np.concatenate(points) if points else np.zeros((0, 3))), owner, len(short) * len(lattice)


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
        max_attempts: Uniform candidates drawn per partial cube; cubes still short of k then get
            candidates just inside the target's surface within the cube (thin slivers), and cubes
            that stay short are reported in ``gave_up``.
    """
    rng = np.random.default_rng([seed, 0])
    nonempty = np.argwhere(classes != CubeClass.EMPTY)
    is_full = classes[tuple(nonempty.T)] == CubeClass.FULL
    full_points = _uniform_in_cubes(rng, grid, nonempty[is_full], per_cube).reshape(-1, 3)
    partial = nonempty[~is_full]
    partial_points, owner, attempts = _fill_partial(rng, region, grid, partial, per_cube, max_attempts)
    found = np.bincount(owner, minlength=len(partial))
    if np.any(found < per_cube):
        for fill in (_fill_from_surface, _fill_from_lattice):
            extra, extra_owner, extra_attempts = fill(rng, region, grid, partial, found, per_cube)
            partial_points = np.concatenate([partial_points, extra])
            owner = np.concatenate([owner, extra_owner])
            attempts += extra_attempts
            found = np.bincount(owner, minlength=len(partial))
            if np.all(found >= per_cube):
                break
    # every target in row-major cube order: full and partial cubes interleaved as in the grid
    slot = np.concatenate([np.repeat(np.flatnonzero(is_full), per_cube), np.flatnonzero(~is_full)[owner]])
    order = np.argsort(slot, kind="stable")
    targets = np.concatenate([full_points, partial_points])[order]
    found = np.bincount(owner, minlength=len(partial))
    short = (found < per_cube) & (found > 0)
    return Targets(
        targets, len(full_points) + attempts, partial[short].reshape(-1, 3), partial[found == 0].reshape(-1, 3)
    )


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
