"""Cube grids: covering, indexing, centres, and subdivision into 8 children."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.testgen import CubeGrid

GRID = CubeGrid.covering(np.array([[0.1, -0.2, 0.0], [0.125, -0.155, 0.021]]), 0.01)


def test_covering_grid_holds_the_box() -> None:
    assert GRID.shape.tolist() == [3, 5, 3]
    assert np.all(GRID.origin_m + GRID.shape * GRID.granularity_m >= [0.125, -0.155, 0.021])


def test_cube_index_and_centres_round_trip() -> None:
    rng = np.random.default_rng(0)
    points = GRID.origin_m + rng.random((1000, 3)) * GRID.shape * GRID.granularity_m
    index = GRID.cube_index(points)
    assert np.all(np.abs(points - GRID.centres_m(index)) <= GRID.granularity_m / 2 + 1e-15)
    assert np.array_equal(GRID.all_centres_m()[tuple(index.T)], GRID.centres_m(index))


def test_points_outside_get_minus_one() -> None:
    index = GRID.cube_index(np.array([[0.0, 0.0, 0.0], [0.105, -0.195, 0.005]]))
    assert index.tolist() == [[-1, -1, -1], [0, 0, 0]]


@pytest.mark.parametrize("parent", [(0, 0, 0), (2, 4, 2), (1, 3, 0)])
def test_children_tile_their_parent(parent: tuple[int, int, int]) -> None:
    children = GRID.children(parent)
    fine = GRID.refined()
    assert len({tuple(c) for c in children}) == 8
    assert fine.granularity_m == GRID.granularity_m / 2
    rng = np.random.default_rng(1)
    lo = GRID.origin_m + np.array(parent) * GRID.granularity_m
    points = lo + rng.random((2000, 3)) * GRID.granularity_m
    assert {tuple(i) for i in fine.cube_index(points)} == {tuple(c) for c in children}


def test_bad_grid_requests_are_input_errors() -> None:
    with pytest.raises(InputError, match=r"granularity must be > 0 m, got 0\.0"):
        CubeGrid.covering(np.zeros((2, 3)), 0.0)
    with pytest.raises(InputError, match=r"cube index \[3, 0, 0\] is outside the grid of shape \[3, 5, 3\]"):
        GRID.children((3, 0, 0))
