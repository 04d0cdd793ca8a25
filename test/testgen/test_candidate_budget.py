"""The grid generator's candidate budget and the refinement of partial cubes it samples in.

Candidates are the points the generators count where they draw them (``points_generated``), valid
or not, checked or not. The random baseline's count is the one of drawing its candidates one by one.
"""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.anatomy import AnatomyScene
from cosim_validation.testgen import (
    CubeClass,
    CubeGrid,
    TestgenConfig,
    TestgenRequest,
    build_region,
    discretize,
    generate_suite,
)
from cosim_validation.testgen.cube_refinement import Leaves, refine_cubes
from cosim_validation.testgen.generators import _in_leaves
from cosim_validation.testgen.target_region import TargetRegion
from test.monitor.metrics.inside_reference import parity_along_x

BUDGET_PER_CASE = 1.5
Refined = tuple[TargetRegion, CubeGrid, np.ndarray, Leaves]


@pytest.mark.parametrize("granularity_m", [0.02, 0.01])
@pytest.mark.parametrize("region", ["near_heart", "left_lung", "heart_side_7pct"])
def test_grid_draws_at_most_1_5_candidates_per_case_and_fewer_than_random(
    scene: AnatomyScene, testgen_cfg: TestgenConfig, region: str, granularity_m: float
) -> None:
    suite, grid = generate_suite(scene, testgen_cfg, TestgenRequest("grid", granularity_m, 3, region=region))
    same = TestgenRequest("random", granularity_m, 3, count=len(suite), region=region)
    _, random = generate_suite(scene, testgen_cfg, same)
    assert grid.coverage == 1.0
    assert random.valid_cases == grid.valid_cases == len(suite)
    assert grid.points_generated >= grid.valid_cases
    assert grid.points_generated <= BUDGET_PER_CASE * grid.valid_cases
    assert grid.points_generated <= random.points_generated


def _valid_reference(scene: AnatomyScene, region: TargetRegion, points: np.ndarray) -> np.ndarray:
    """Validity with the reference parity for the lung, the region's own test for the distances."""
    lung = scene.model("left_lung")
    return np.asarray(parity_along_x(lung.vertices_m, lung.faces, points) & region.valid(points))


@pytest.fixture(scope="module")
def refined(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> Refined:
    region, _ = build_region(scene, testgen_cfg, "near_heart")
    grid, classes = discretize(region, 0.02)
    cubes = np.argwhere(classes == CubeClass.PARTIAL)
    return region, grid, cubes, refine_cubes(region, grid, cubes)


def test_full_leaves_hold_only_valid_targets(scene: AnatomyScene, refined: Refined) -> None:
    region, _, _, leaves = refined
    full = np.flatnonzero(leaves.full)
    assert len(full) > 0
    rng = np.random.default_rng(2)
    pick = rng.choice(full, size=min(len(full), 4000), replace=False)
    points = leaves.lo_m[pick] + rng.random((len(pick), 3)) * leaves.edge_m[pick, None]
    assert _valid_reference(scene, region, points).all()


def _leaves_holding(refined: Refined, points: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """(P,) int64: how many leaves of its cube ``owner[p]`` hold each point."""
    _, _, cubes, leaves = refined
    count = np.zeros(len(points), dtype=np.int64)
    for i in range(len(cubes)):
        first, last = np.searchsorted(leaves.owner, [i, i + 1])
        mine, mask = np.arange(first, last), owner == i
        lo, hi = leaves.lo_m[mine], leaves.lo_m[mine] + leaves.edge_m[mine, None]
        p = points[mask][:, None, :]
        count[mask] = np.sum(np.all((p >= lo) & (p < hi), axis=2), axis=1)
    return count


def _uniform_in_partial_cubes(refined: Refined, per_cube: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    _, grid, cubes, _ = refined
    rng = np.random.default_rng(seed)
    points = grid.origin_m + (cubes[:, None, :] + rng.random((len(cubes), per_cube, 3))) * grid.granularity_m
    return points.reshape(-1, 3), np.repeat(np.arange(len(cubes)), per_cube)


def test_outside_the_leaves_no_point_is_valid(scene: AnatomyScene, refined: Refined) -> None:
    points, owner = _uniform_in_partial_cubes(refined, 300, 3)
    held = _leaves_holding(refined, points, owner)
    valid = _valid_reference(scene, refined[0], points)
    assert valid.any()
    assert (held == 0).any()
    assert not valid[held == 0].any()


def test_leaves_lie_in_their_cube_and_never_overlap(refined: Refined) -> None:
    _, grid, cubes, leaves = refined
    assert np.all(np.diff(leaves.owner) >= 0)
    corner = grid.origin_m + cubes[leaves.owner] * grid.granularity_m
    assert np.all(leaves.lo_m >= corner - 1e-12)
    assert np.all(leaves.lo_m + leaves.edge_m[:, None] <= corner + grid.granularity_m + 1e-12)
    points, owner = _uniform_in_partial_cubes(refined, 300, 4)
    assert _leaves_holding(refined, points, owner).max() == 1


def test_lattice_points_find_the_leaf_that_holds_them(refined: Refined) -> None:
    """The lattice fallback's lookup: a point found in a leaf lies in its box (closed: lattice points may
    lie on the faces of leaves finer than the lattice), a point found in none lies inside no leaf."""
    _, grid, cubes, leaves = refined
    steps = (np.arange(16) + 0.5) / 16
    lattice = np.stack(np.meshgrid(steps, steps, steps, indexing="ij"), -1).reshape(-1, 3) * grid.granularity_m
    deep = np.unique(leaves.owner[leaves.edge_m < grid.granularity_m / 16])  # leaves finer than the lattice
    assert len(deep) > 0
    for i in [*deep[:3], *np.unique(leaves.owner)[:3]]:
        lo = grid.origin_m + cubes[i] * grid.granularity_m
        points = lo + lattice
        leaf = _in_leaves(leaves, int(i), lo, grid.granularity_m, points)
        hit = leaf >= 0
        corner, edge = leaves.lo_m[leaf[hit]], leaves.edge_m[leaf[hit], None]
        assert np.all((points[hit] >= corner - 1e-12) & (points[hit] <= corner + edge + 1e-12))
        first, last = np.searchsorted(leaves.owner, [i, i + 1])
        box_lo, box_hi = leaves.lo_m[first:last], leaves.lo_m[first:last] + leaves.edge_m[first:last, None]
        missed = points[~hit][:, None, :]
        strictly_inside = np.all((missed > box_lo + 1e-12) & (missed < box_hi - 1e-12), axis=2)
        assert not strictly_inside.any()
