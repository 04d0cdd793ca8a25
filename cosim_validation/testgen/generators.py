"""Target generators: ``grid`` (k valid targets per non-empty cube) and ``random`` (the baseline)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cosim_validation.testgen.cube_grid import CubeClass, CubeGrid
from cosim_validation.testgen.cube_refinement import Leaves, refine_cubes, share_for_budget
from cosim_validation.testgen.surface_kernels import surface_candidates
from cosim_validation.testgen.target_region import TargetRegion

# Rounds of surface-guided candidates (4k each) for partial cubes that uniform sampling could not fill.
SURFACE_ROUNDS = 8
# Candidates per valid case the refinement of partial cubes aims at (full cubes cost exactly one).
CANDIDATES_PER_CASE = 1.2


class Targets(NamedTuple):
    """Generated targets and what it took.

    Attributes:
        targets_m: (N, 3) float64 valid targets in base_link [m], cube by cube (row-major cube order).
        points_generated: Candidate points drawn, valid or not ([Actuators 2025]'s "generated points"): counted
            where they are drawn, the unchecked ones of full cubes and full leaves included.
        gave_up: (G, 3) int64 partial cubes that yielded fewer than k targets within the attempt bound.
        lattice_empty: (E, 3) int64 partial cubes found to hold no valid target: their refinement proved
            every point invalid, or no candidate and no point of a 16^3 lattice was valid (their valid
            part, if any, is thinner than 1/16 of the edge); counted as empty.
    """

    targets_m: np.ndarray
    points_generated: int
    gave_up: np.ndarray
    lattice_empty: np.ndarray = np.zeros((0, 3), dtype=np.int64)


def _uniform_in_cubes(rng: np.random.Generator, grid: CubeGrid, cubes: np.ndarray, per_cube: int) -> np.ndarray:
    """(len(cubes), per_cube, 3) uniform points in each cube (M, 3) [m]."""
    corner = grid.origin_m + cubes.astype(np.float64) * grid.granularity_m
    return np.asarray(corner[:, None, :] + rng.random((len(cubes), per_cube, 3)) * grid.granularity_m)


def _leaf_points(
    rng: np.random.Generator, leaves: Leaves, cumulative_m3: np.ndarray, cubes: np.ndarray, per_cube: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``per_cube[i]`` points uniform in the non-empty leaves of cube number ``cubes[i]``.

    Args:
        rng: The random stream.
        leaves: The non-empty leaves of the refined cubes.
        cumulative_m3: (L,) cumulative sum of the leaves' volumes [m^3], in leaf order.
        cubes: (C,) int64 cube numbers to sample.
        per_cube: (C,) int64 how many points each cube of ``cubes`` gets.

    Returns:
        (T, 3) float64 points [m], their (T,) leaf numbers and (T,) position in ``cubes``.
    """
    first = np.searchsorted(leaves.owner, cubes, side="left")
    last = np.searchsorted(leaves.owner, cubes, side="right")
    before = np.where(first > 0, cumulative_m3[np.maximum(first - 1, 0)], 0.0)
    which = np.repeat(np.arange(len(cubes)), per_cube)
    uniforms = rng.random((len(which), 4))
    volume = before[which] + uniforms[:, 0] * (cumulative_m3[last - 1] - before)[which]  # picks the leaf
    leaf = np.clip(np.searchsorted(cumulative_m3, volume, side="right"), first[which], last[which] - 1)
    points = leaves.lo_m[leaf] + uniforms[:, 1:] * leaves.edge_m[leaf, None]
    return points, leaf, which


def _fill_partial(
    rng: np.random.Generator, region: TargetRegion, leaves: Leaves, n_cubes: int, k: int, max_attempts: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Sample the non-empty leaves of each partial cube until k candidates are valid or ``max_attempts`` were drawn.

    Only candidates in partial leaves are checked.

    Each round draws, for every unfinished cube, as many candidates as it still needs, so no valid
    candidate is ever thrown away and the count is the one of drawing one by one.

    Returns:
        targets (T, 3) float64 grouped by cube (cube number order), the (T,) int64 cube number of
        each target, and the number of candidates drawn.
    """
    count = np.zeros(n_cubes, dtype=np.int64)
    drawn = np.zeros(n_cubes, dtype=np.int64)
    points: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    active = np.unique(leaves.owner)
    cumulative_m3 = np.cumsum(leaves.edge_m**3)
    candidates_drawn = 0
    while len(active):
        size = np.minimum(k - count[active], max_attempts - drawn[active])
        candidates, leaf, which = _leaf_points(rng, leaves, cumulative_m3, active, size)
        candidates_drawn += len(candidates)
        ok = leaves.full[leaf]
        ok[~ok] = region.valid(candidates[~ok])
        points.append(candidates[ok])
        owners.append(active[which[ok]])
        count[active] += np.bincount(which[ok], minlength=len(active))
        drawn[active] += size
        active = active[(count[active] < k) & (drawn[active] < max_attempts)]
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    order = np.argsort(owner, kind="stable")
    targets = np.concatenate(points)[order] if points else np.zeros((0, 3))
    return targets, owner[order], candidates_drawn


def _fill_from_surface(
    rng: np.random.Generator, region: TargetRegion, grid: CubeGrid, cubes: np.ndarray, found: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, int]:
    """Complete partial cubes from points just inside the target's surface (see :mod:`surface_kernels`).

    Args:
        rng: The random stream.
        region: The target region the points must be valid in.
        grid: The grid ``cubes`` index.
        cubes: (M, 3) int64 grid indices of the partial cubes.
        found: (M,) targets each cube already has.
        k: Targets wanted per cube.

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


def _in_leaves(leaves: Leaves, cube: int, lo_m: np.ndarray, edge_m: float, points_m: np.ndarray) -> np.ndarray:
    """(P,) int64 leaf of cube number ``cube`` (corner ``lo_m``, edge ``edge_m``) holding each point.

    ``points_m`` (P, 3) lie inside that cube; -1 for points in none of its non-empty leaves.
    """
    first, last = np.searchsorted(leaves.owner, [cube, cube + 1])
    found = np.full(len(points_m), -1, dtype=np.int64)
    for leaf_edge in np.unique(leaves.edge_m[first:last]):
        mine = first + np.flatnonzero(leaves.edge_m[first:last] == leaf_edge)
        n = round(float(edge_m / leaf_edge))
        keys = np.ravel_multi_index(np.round((leaves.lo_m[mine] - lo_m) / leaf_edge).astype(np.int64).T, (n,) * 3)
        cells = np.clip(np.floor((points_m - lo_m) / leaf_edge).astype(np.int64), 0, n - 1)
        at = np.ravel_multi_index(cells.T, (n,) * 3)
        order = np.argsort(keys)
        slot = np.minimum(np.searchsorted(keys[order], at), len(keys) - 1)
        hit = keys[order][slot] == at
        found[hit] = mine[order][slot[hit]]
    return found


def _fill_from_lattice(
    rng: np.random.Generator,
    region: TargetRegion,
    grid: CubeGrid,
    leaves: Leaves,
    cubes: np.ndarray,
    found: np.ndarray,
    k: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Last resort for cubes still short of k: the valid points of a 16^3 lattice in each cube.

    Only lattice points in the cube's non-empty leaves are candidates (the others are proved
    invalid); those in full leaves are valid without a check.

    Returns targets (T, 3), their (T,) position in ``cubes``, and the lattice points used as candidates.
    """
    steps = (np.arange(LATTICE) + 0.5) / LATTICE
    lattice = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), -1).reshape(-1, 3) * grid.granularity_m
    points: list[np.ndarray] = []
    owners: list[np.ndarray] = []
    drawn = 0
    for i in np.flatnonzero(found < k):
        lo = grid.origin_m + cubes[i] * grid.granularity_m
        leaf = _in_leaves(leaves, int(i), lo, grid.granularity_m, lo + lattice)
        candidates = (lo + lattice)[leaf >= 0]
        drawn += len(candidates)
        ok = leaves.full[leaf[leaf >= 0]]
        ok[~ok] = region.valid(candidates[~ok])
        chosen = rng.permutation(np.flatnonzero(ok))[: k - found[i]]
        points.append(candidates[np.sort(chosen)])
        owners.append(np.full(len(chosen), i, dtype=np.int64))
    owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
    return (np.concatenate(points) if points else np.zeros((0, 3))), owner, drawn


def grid_targets(
    region: TargetRegion, grid: CubeGrid, classes: np.ndarray, per_cube: int, seed: int, max_attempts: int
) -> Targets:
    """K valid targets per non-empty cube: full cubes unchecked, partial cubes refined and sampled.

    Each partial cube is refined (:func:`refine_cubes`); candidates are drawn uniformly in its non-empty
    leaves and only those in partial leaves are checked, so the targets are uniform over the cube's
    valid part.

    Args:
        region: Where valid targets lie.
        grid: The cubes.
        classes: (nx, ny, nz) int8 :class:`CubeClass` from ``region.classify(grid)``.
        per_cube: k >= 1.
        seed: Generator seed; the same seed gives the same targets.
        max_attempts: Candidates drawn in the leaves of a partial cube; cubes still short of k then
            get candidates just inside the target's surface within the cube (thin slivers), then the
            valid points of a 16^3 lattice, and cubes that stay short are reported in ``gave_up``.
    """
    rng = np.random.default_rng([seed, 0])
    nonempty = np.argwhere(classes != CubeClass.EMPTY)
    is_full = classes[tuple(nonempty.T)] == CubeClass.FULL
    full_points = _uniform_in_cubes(rng, grid, nonempty[is_full], per_cube).reshape(-1, 3)
    drawn = len(full_points)
    partial = nonempty[~is_full]
    share = share_for_budget(CANDIDATES_PER_CASE, int(is_full.sum()), len(partial))
    leaves = refine_cubes(region, grid, partial, share)
    partial_points, owner, attempts = _fill_partial(rng, region, leaves, len(partial), per_cube, max_attempts)
    drawn += attempts
    proved_empty = ~np.isin(np.arange(len(partial)), leaves.owner)  # not sampled again
    found = np.bincount(owner, minlength=len(partial))
    if np.any((found < per_cube) & ~proved_empty):
        wanted = np.where(proved_empty, per_cube, found)
        extra, extra_owner, attempts = _fill_from_surface(rng, region, grid, partial, wanted, per_cube)
        drawn += attempts
        partial_points, owner = np.concatenate([partial_points, extra]), np.concatenate([owner, extra_owner])
        found = np.bincount(owner, minlength=len(partial))
    if np.any((found < per_cube) & ~proved_empty):
        wanted = np.where(proved_empty, per_cube, found)
        extra, extra_owner, attempts = _fill_from_lattice(rng, region, grid, leaves, partial, wanted, per_cube)
        drawn += attempts
        partial_points, owner = np.concatenate([partial_points, extra]), np.concatenate([owner, extra_owner])
        found = np.bincount(owner, minlength=len(partial))
    # every target in row-major cube order: full and partial cubes interleaved as in the grid
    slot = np.concatenate([np.repeat(np.flatnonzero(is_full), per_cube), np.flatnonzero(~is_full)[owner]])
    order = np.argsort(slot, kind="stable")
    targets = np.concatenate([full_points, partial_points])[order]
    short = (found < per_cube) & (found > 0)
    return Targets(targets, drawn, partial[short].reshape(-1, 3), partial[found == 0].reshape(-1, 3))


def random_targets(region: TargetRegion, count: int, seed: int, max_attempts: int) -> Targets:
    """Uniform candidates over the region's box until ``count`` are valid ([Actuators 2025]'s random method).

    Attempts are counted as if the candidates were drawn one by one: up to the one that completed
    the suite. Stops (and reports, through ``gave_up`` of shape (1, 3) filled with -1) after
    ``max_attempts`` candidates.

    Args:
        region: The region valid targets lie in; candidates are drawn over its box ``bounds_m`` (base_link).
        count: Number of valid targets wanted.
        seed: Seed of the random generator (the same seed gives the same targets).
        max_attempts: Most candidates drawn before giving up.
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
