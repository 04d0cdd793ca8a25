"""The ray-parity inside test agrees with exact references: uniform points, a thin band, vertex rays."""

from __future__ import annotations

import numpy as np
import pytest

from cosim_validation.anatomy import builtin_mesh
from cosim_validation.common.exceptions import InputError
from cosim_validation.monitor.metrics import InsideTest
from test.monitor.metrics.inside_reference import band_points, parity_along_x, winding_number


@pytest.mark.parametrize("name", ["left_lung", "heart", "torso"])
def test_agrees_with_exact_parity_on_100k_uniform_points(name: str) -> None:
    mesh = builtin_mesh(name)
    rng = np.random.default_rng(1)
    lo, hi = mesh.vertices_m.min(axis=0), mesh.vertices_m.max(axis=0)
    points = rng.uniform(lo - 0.01, hi + 0.01, size=(100_000, 3))
    ours = InsideTest(mesh.vertices_m, mesh.faces).contains(points)
    reference = parity_along_x(mesh.vertices_m, mesh.faces, points)
    assert 0.05 < ours.mean() < 0.95  # both sides are exercised
    assert np.array_equal(ours, reference)


@pytest.mark.parametrize("name", ["left_lung", "heart"])
def test_agrees_with_exact_parity_in_a_thin_band_around_the_surface(name: str) -> None:
    mesh = builtin_mesh(name)
    points = band_points(mesh.vertices_m, mesh.faces, 50_000, np.random.default_rng(2))
    ours = InsideTest(mesh.vertices_m, mesh.faces).contains(points)
    assert 0.3 < ours.mean() < 0.7
    assert np.array_equal(ours, parity_along_x(mesh.vertices_m, mesh.faces, points))


def test_agrees_with_the_winding_number_including_the_band() -> None:
    mesh = builtin_mesh("heart")
    rng = np.random.default_rng(3)
    lo, hi = mesh.vertices_m.min(axis=0), mesh.vertices_m.max(axis=0)
    points = np.vstack([rng.uniform(lo, hi, size=(10_000, 3)), band_points(mesh.vertices_m, mesh.faces, 10_000, rng)])
    winding = winding_number(mesh.vertices_m, mesh.faces, points)
    assert np.all(np.abs(winding - np.round(winding)) < 1e-6)  # closed mesh: 0 or 1 exactly
    assert np.array_equal(InsideTest(mesh.vertices_m, mesh.faces).contains(points), winding > 0.5)


def test_rays_through_vertices_and_edges_count_each_crossing_once() -> None:
    mesh = builtin_mesh("left_lung")
    v, f = mesh.vertices_m, mesh.faces
    rng = np.random.default_rng(4)
    lo, hi = v.min(axis=0), v.max(axis=0)
    # points straight below or above vertices and edge midpoints: their +z rays pass exactly through them
    edge_mid = 0.5 * (v[f[:, 0]] + v[f[:, 1]])
    anchors = np.vstack([v[rng.choice(len(v), 5000)], edge_mid[rng.choice(len(f), 5000)]])
    points = anchors.copy()
    points[:, 2] = rng.uniform(lo[2], hi[2], len(points))
    winding = winding_number(v, f, points)
    assert np.array_equal(InsideTest(v, f).contains(points), winding > 0.5)


def test_points_outside_the_box_are_outside() -> None:
    mesh = builtin_mesh("heart")
    test = InsideTest(mesh.vertices_m, mesh.faces)
    far = mesh.vertices_m.max(axis=0) + 1.0
    assert not test.contains(far[None, :])[0]
    assert test.contains(np.zeros((0, 3))).shape == (0,)


def test_bad_meshes_are_input_errors() -> None:
    with pytest.raises(InputError, match=r"vertices must be \(V >= 3, 3\)"):
        InsideTest(np.zeros((2, 3)), np.zeros((1, 3), dtype=int))
    with pytest.raises(InputError, match=r"faces must be \(F >= 1, 3\)"):
        InsideTest(np.zeros((3, 3)), np.zeros((0, 3), dtype=int))
