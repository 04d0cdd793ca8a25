"""Adaptive refinement picks the violating zone and its boundary, and budgets are split evenly."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.runs.experiment.adaptive import evenly, refine


def test_refines_violations_and_their_boundary_only() -> None:
    # a row of five cubes along x, violations in the middle one; plus a far-away normal cube
    status = {(i, 0, 0): i == 2 for i in range(5)} | {(9, 9, 9): False}
    assert refine(status) == [(1, 0, 0), (2, 0, 0), (3, 0, 0)]


def test_disagreement_is_symmetric_and_needs_a_face_neighbour() -> None:
    diagonal = {(0, 0, 0): True, (1, 1, 0): False}  # an edge neighbour only: not a face neighbour
    assert refine(diagonal) == [(0, 0, 0)]
    uniform = {(i, j, 0): False for i in range(3) for j in range(3)}
    assert refine(uniform) == []
    assert refine(dict.fromkeys(uniform, True)) == sorted(uniform)


@pytest.mark.parametrize(("n", "budget"), [(10, 3), (10, 10), (10, 20), (1, 1), (7, 1)])
def test_evenly_keeps_the_budget_spread_out(n: int, budget: int) -> None:
    keep = evenly(n, budget)
    assert keep.sum() == min(n, budget)
    assert keep[0]
    if budget > 1:
        assert keep[-1]
    gaps = np.diff(np.flatnonzero(keep))
    assert gaps.size == 0 or gaps.max() - gaps.min() <= 1
