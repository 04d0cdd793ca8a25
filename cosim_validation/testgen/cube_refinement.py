"""Refining partial cubes into octree leaves proved full (every point valid), empty or still partial.

A partial cube is split into 8 children, level by level. A child the target's surface does not touch
(exact triangle-cube test) lies wholly inside or wholly outside the target: its centre decides. Each
distance band of the region (:meth:`TargetRegion.distance_bands`; distances are 1-Lipschitz) is
decided for the child by the distance at its centre against its half diagonal, as in the cube
classification; a band decided for a cell holds for its children.

A cube stops being refined once its partial leaves are at most a share of its non-empty volume
(``partial_share``, :func:`share_for_budget`) or at :data:`MAX_DEPTH`; it goes on to :data:`DEEP_DEPTH`
while that share exceeds :data:`DEEP_SHARE`, and to :data:`SLIVER_DEPTH` while it has no full leaf
(its valid part is a sliver). Sampling uniformly in its non-empty leaves and checking only candidates
in partial leaves is then uniform sampling of its valid part, with few rejections.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cosim_validation.monitor.metrics import box_distance_m
from cosim_validation.testgen.box_kernels import child_pairs, surface_pairs
from cosim_validation.testgen.cube_grid import CubeGrid
from cosim_validation.testgen.model_distance import signed_distance_m
from cosim_validation.testgen.target_region import TargetRegion

#: Deepest level of a cube with full leaves: leaves of 1/16 of the cube's edge.
MAX_DEPTH = 4
#: A cube goes on to :data:`DEEP_DEPTH` (1/64 of the edge) while its partial share exceeds this.
DEEP_SHARE = 0.5
DEEP_DEPTH = 6
#: Deepest level of a cube without any full leaf (its valid part is a sliver): 1/1024 of the edge. At 1/256
#: the slivers of the sub-model by the heart (lung squeezed between the lung's surface and the margin around the
#: heart) kept only partial leaves, about 8 % of them valid: 12-14 candidates per case there.
SLIVER_DEPTH = 10
#: A cube is refined further while its partial leaves exceed this share of its non-empty volume
#: (the default; :func:`share_for_budget` allows more where full cubes leave room).
PARTIAL_SHARE = 0.25
# Allowance of the float32 distance queries [m], as in the cube classification.
_DISTANCE_SLACK_M = 1e-6
# Growth of every cell in the triangle-cube test [m], so rounding can only keep a surface cell.
_PAD_M = 1e-9
_OFFSETS = np.array([[i, j, k] for i in (0, 1) for j in (0, 1) for k in (0, 1)], dtype=np.int64)


class Leaves(NamedTuple):
    """The non-empty leaves of refined cubes, grouped by cube.

    Attributes:
        owner: (L,) int64 position of each leaf's cube in the refined list, ascending.
        lo_m: (L, 3) float64 minimum corner of each leaf in base_link [m].
        edge_m: (L,) float64 edge of each leaf [m].
        full: (L,) bool: every point of the leaf is a valid target (no check needed).
        cells_classified: Cells classified over all levels (the refinement's work).
    """

    owner: np.ndarray
    lo_m: np.ndarray
    edge_m: np.ndarray
    full: np.ndarray
    cells_classified: int


class _Level(NamedTuple):
    """Cells of one level: index in the grid of edge g / 2^depth, cube, surface pairs, open distance bands."""

    cells: np.ndarray  # (C, 3) int64
    owner: np.ndarray  # (C,) int64
    pair_cell: np.ndarray  # (P,) int64 cell of each (cell, face) pair
    pair_face: np.ndarray  # (P,) int64
    inside: np.ndarray  # (C,) bool: centre inside the target (meaningful for cells off the surface)
    open_: np.ndarray  # (C, n_bands) bool: distance band not yet decided for the cell


def _first_level(region: TargetRegion, grid: CubeGrid, cubes: np.ndarray, n_bands: int) -> _Level:
    slot = np.full(tuple(grid.shape), -1, dtype=np.int64)
    slot[tuple(cubes.T)] = np.arange(len(cubes))
    target = region.target
    cells, faces = surface_pairs(target.vertices_m, target.faces, grid.origin_m, grid.granularity_m, slot, _PAD_M)
    inside = np.zeros(len(cubes), dtype=bool)
    return _Level(cubes, np.arange(len(cubes)), cells, faces, inside, np.ones((len(cubes), n_bands), bool))


def _decide_bands(region: TargetRegion, level: _Level, centres: np.ndarray, h: float, empty: np.ndarray) -> None:
    """Decide the open distance bands of the cells not yet empty; marks ``empty`` and ``level.open_``.

    A band ``above < d(p) <= at_most`` holds in a cell of half diagonal h if ``d(c) - h > above`` and
    ``d(c) + h <= at_most``, fails in it if ``d(c) + h <= above`` or ``d(c) - h > at_most``. The distance
    to a model's box (a lower bound of d outside it) decides far cells without a distance query.
    """
    bands = region.distance_bands()
    for model in {id(b.model): b.model for b in bands}.values():
        mine = [i for i, b in enumerate(bands) if b.model is model]
        ask = np.flatnonzero(level.open_[:, mine].any(axis=1) & ~empty)
        low = box_distance_m(model.bounds_m, centres[ask]) - h
        for i in mine:
            empty[ask[low > bands[i].at_most_m]] = True
            if bands[i].at_most_m == np.inf:
                level.open_[ask[low > bands[i].above_m], i] = False
        ask = ask[level.open_[ask][:, mine].any(axis=1) & ~empty[ask]]
        d = signed_distance_m(model, centres[ask])
        for i in mine:
            empty[ask[(d + h <= bands[i].above_m) | (d - h > bands[i].at_most_m)]] = True
            level.open_[ask[(d - h > bands[i].above_m) & (d + h <= bands[i].at_most_m)], i] = False


def _classify(region: TargetRegion, grid: CubeGrid, level: _Level, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(C,) bool full and (C,) bool empty of the level's cells; updates ``level.open_`` in place."""
    edge = grid.granularity_m / 2**depth
    centres = grid.origin_m + (level.cells + 0.5) * edge
    surface = np.zeros(len(level.cells), dtype=bool)
    surface[level.pair_cell] = True
    empty = ~surface & ~level.inside
    _decide_bands(region, level, centres, edge * np.sqrt(3.0) / 2.0 + _DISTANCE_SLACK_M, empty)
    full = ~surface & level.inside & ~level.open_.any(axis=1) & ~empty
    return full, empty


def _children(region: TargetRegion, grid: CubeGrid, level: _Level, split: np.ndarray, depth: int) -> _Level:
    """The 8 children of the cells ``split`` (S,), at ``depth`` + 1, with their surface pairs."""
    index = (2 * level.cells[split][:, None, :] + _OFFSETS[None]).reshape(-1, 3)
    rank = np.full(len(level.cells), -1, dtype=np.int64)
    rank[split] = np.arange(len(split))
    edge = grid.granularity_m / 2 ** (depth + 1)
    target = region.target
    pair_cell, pair_face = child_pairs(
        target.vertices_m,
        target.faces,
        rank[level.pair_cell],
        level.pair_face,
        level.cells[split],
        grid.origin_m,
        edge,
        _PAD_M,
    )
    inside = np.repeat(level.inside[split], 8)
    surface = np.zeros(len(index), dtype=bool)
    surface[pair_cell] = True
    on_surface = np.zeros(len(level.cells), dtype=bool)
    on_surface[level.pair_cell] = True
    parent_surface = np.repeat(on_surface[split], 8)
    ask = np.flatnonzero(parent_surface & ~surface)  # off the surface now: the centre decides
    inside[ask] = region.inside_test(target).contains(grid.origin_m + (index[ask] + 0.5) * edge)
    return _Level(
        index, np.repeat(level.owner[split], 8), pair_cell, pair_face, inside, np.repeat(level.open_[split], 8, axis=0)
    )


def share_for_budget(candidates_per_case: float, full_cubes: int, partial_cubes: int) -> float:
    """The partial share a cube may keep so that sampling needs ``candidates_per_case`` on average.

    A case of a full cube costs one candidate; one of a partial cube with partial share s about
    ``1 / (1 - s / 2)`` (about half of a partial leaf is valid), so partial cubes may average
    ``r = c + (c - 1) * full / partial``, i.e. ``s = 2 (1 - 1 / r)``; never below :data:`PARTIAL_SHARE`.

    Args:
        candidates_per_case: The average number of candidates sampling may draw per case (> 1 leaves room for partial
            cubes).
        full_cubes: Number of full cubes of the grid.
        partial_cubes: Number of partial cubes of the grid (0 is taken as 1).
    """
    ratio = candidates_per_case + (candidates_per_case - 1.0) * full_cubes / max(partial_cubes, 1)
    return float(np.clip(2.0 * (1.0 - 1.0 / ratio), PARTIAL_SHARE, 1.0))


def refine_cubes(
    region: TargetRegion, grid: CubeGrid, cubes: np.ndarray, partial_share: float = PARTIAL_SHARE
) -> Leaves:
    """The non-empty leaves of the partial cubes ``cubes`` (M, 3); a cube without leaves holds no valid target.

    Args:
        region: The target region whose validity the leaves classify.
        grid: The grid ``cubes`` index.
        cubes: (M, 3) int64 grid indices of the partial cubes.
        partial_share: A cube is refined (to :data:`MAX_DEPTH`) while its partial leaves exceed this
            share of its non-empty volume.
    """
    level = _first_level(region, grid, cubes, len(region.distance_bands()))
    off_surface = np.setdiff1d(np.arange(len(cubes)), level.pair_cell)
    level.inside[off_surface] = region.inside_test(region.target).contains(grid.centres_m(cubes[off_surface]))
    full_volume = np.zeros(len(cubes))
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    classified = 0
    for depth in range(SLIVER_DEPTH + 1):
        full, empty = _classify(region, grid, level, depth)
        classified += len(level.cells)
        edge = grid.granularity_m / 2**depth
        partial = ~full & ~empty
        full_volume += np.bincount(level.owner[full], minlength=len(cubes)) * edge**3
        partial_volume = np.bincount(level.owner[partial], minlength=len(cubes)) * edge**3
        share = partial_volume / np.maximum(full_volume + partial_volume, 1e-300)
        go_on = (share > partial_share) & (depth < MAX_DEPTH)
        go_on |= (share > max(DEEP_SHARE, partial_share)) & (depth < DEEP_DEPTH)
        go_on |= (full_volume == 0) & (depth < SLIVER_DEPTH)
        split = np.flatnonzero(partial & go_on[level.owner])
        leaf = full | (partial & ~np.isin(np.arange(len(full)), split))
        lo = grid.origin_m + level.cells[leaf] * edge
        parts.append((level.owner[leaf], lo, np.full(int(leaf.sum()), edge), full[leaf]))
        if not len(split):
            break
        level = _children(region, grid, level, split, depth)
    owner, lo, edges, is_full = (np.concatenate(column) for column in zip(*parts, strict=True))
    order = np.argsort(owner, kind="stable")
    return Leaves(owner[order], lo[order], edges[order], is_full[order], classified)
