"""The segment-to-mesh kernel against a float64 brute force on a non-convex mesh (a torus), degenerate cases included.

The brute force samples each segment densely and takes every sample's exact distance to every triangle: the true
minimum lies between that sampled minimum and it minus half the sample spacing (the distance is 1-Lipschitz
along the segment), and the kernel's point at its returned parameter must be at its returned distance.
"""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from cosim_validation.monitor.metrics import MeshDistance
from cosim_validation.monitor.metrics.segment_kernels import GROUP_SIZE, segments_to_mesh, triangle_groups
from test.monitor.metrics.reference import point_triangle_distance

SAMPLES = 301


@pytest.fixture(scope="module")
def torus() -> trimesh.Trimesh:
    """A torus (major radius 6 cm, minor 2 cm) off the origin: concave where segments pass through its hole."""
    mesh = trimesh.creation.torus(major_radius=0.06, minor_radius=0.02, major_sections=32, minor_sections=12)
    mesh.apply_translation([0.45, -0.02, 0.1])
    return mesh


def _segments(mesh: trimesh.Trimesh, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    centre = mesh.bounds.mean(axis=0)
    a = centre + rng.normal(0.0, 0.06, (count, 3))
    b = a + rng.normal(0.0, 0.05, (count, 3))
    b[: count // 10] = a[: count // 10]  # points (a degenerate segment)
    b[count // 10 : count // 5, 2] = a[count // 10 : count // 5, 2]  # level with the torus' plane
    return a, b


def test_the_kernel_finds_the_exact_minimum_and_where_it_is(torus: trimesh.Trimesh) -> None:
    a, b = _segments(torus, 50, np.random.default_rng(5))
    distance, where = segments_to_mesh(a, b, triangle_groups(torus.vertices, torus.faces))
    t = np.linspace(0.0, 1.0, SAMPLES)
    checked = 0
    for k in range(len(a)):
        points = a[k] + t[:, None] * (b[k] - a[k])
        sampled = point_triangle_distance(points, torus.vertices, torus.faces)
        if sampled.min() < 1e-4:
            continue  # touches or nearly touches the torus: contact is decided before the kernel is asked
        spacing = np.linalg.norm(b[k] - a[k]) / (SAMPLES - 1)
        assert sampled.min() - 0.5 * spacing - 1e-12 <= distance[k] <= sampled.min() + 1e-12, k
        attained = point_triangle_distance((a[k] + where[k] * (b[k] - a[k]))[None], torus.vertices, torus.faces)
        assert attained[0] == pytest.approx(distance[k], abs=1e-12), k
        checked += 1
    assert checked > 25


def test_groups_hold_every_triangle_once_in_compact_groups(torus: trimesh.Trimesh) -> None:
    groups = triangle_groups(torus.vertices, torus.faces)
    assert groups.group_start[0] == 0
    assert groups.group_start[-1] == len(torus.faces)
    assert (np.diff(groups.group_start) <= GROUP_SIZE).all()
    original = {tuple(sorted(map(tuple, tri))) for tri in np.round(torus.vertices[torus.faces], 12)}
    grouped = np.stack([groups.v0, groups.v1, groups.v2], axis=1)
    assert {tuple(sorted(map(tuple, tri))) for tri in np.round(grouped, 12)} == original
    for g in range(len(groups.group_radius)):  # every vertex of a group inside its sphere
        rows = slice(groups.group_start[g], groups.group_start[g + 1])
        corners = grouped[rows].reshape(-1, 3)
        reach = np.linalg.norm(corners - groups.group_centre[g], axis=1)
        assert (reach <= groups.group_radius[g] + 1e-15).all()
    assert np.median(groups.group_radius) < 0.3 * np.ptp(torus.vertices, axis=0).max()  # compact, not spread
    assert groups.cluster_start[0] == 0
    assert groups.cluster_start[-1] == len(groups.group_radius)
    assert (np.diff(groups.cluster_start) >= 1).all()
    for h in range(len(groups.cluster_radius)):  # every group's sphere inside its cluster's
        rows = slice(groups.cluster_start[h], groups.cluster_start[h + 1])
        reach = np.linalg.norm(groups.group_centre[rows] - groups.cluster_centre[h], axis=1) + groups.group_radius[rows]
        assert (reach <= groups.cluster_radius[h] + 1e-15).all()


def test_a_single_triangle_and_points_on_its_regions() -> None:
    vertices = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    groups = triangle_groups(vertices, np.array([[0, 1, 2]]))
    a = np.array([[0.2, 0.2, 0.5], [-1.0, -1.0, 0.0], [2.0, -1.0, 0.3], [0.5, 0.5, 1.0], [-1.0, 0.5, 0.0]])
    b = a.copy()  # points: the face, vertex a, edge ab's end b, above the hypotenuse, beside edge ca
    distance, where = segments_to_mesh(a, b, groups)
    expected = [0.5, np.sqrt(2.0), np.hypot(np.hypot(1.0, 1.0), 0.3), 1.0, 1.0]
    np.testing.assert_allclose(distance, expected, rtol=0, atol=1e-15)
    assert (where == 0.0).all()
    crossing_above = segments_to_mesh(np.array([[-1.0, 0.25, 0.2]]), np.array([[1.0, 0.25, 0.2]]), groups)
    assert crossing_above[0][0] == pytest.approx(0.2, abs=1e-15)  # parallel to the face, 0.2 above it


@pytest.mark.parametrize(
    "corners",
    [
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]],  # a == b (divided 0 by 0: found by a hostile review)
        [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0]],  # a == c
        [[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]],  # b == c
        [[0.0, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 1.0, 0.0]],  # collinear
    ],
)
def test_a_zero_area_triangle_is_its_longest_edge(corners: list[list[float]]) -> None:
    groups = triangle_groups(np.array(corners), np.array([[0, 1, 2]]))
    points = np.array([[0.0, 0.5, 1.0], [0.0, -1.0, 0.0], [0.0, 2.0, 2.0], [3.0, 0.25, 4.0]])
    distance, _ = segments_to_mesh(points, points, groups)
    np.testing.assert_allclose(distance, [1.0, 1.0, np.sqrt(5.0), 5.0], rtol=0, atol=1e-15)
    if corners[0] == corners[1]:  # through the public query: a mesh with such a face (an STL's duplicate vertex)
        vertices = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]])
        faces = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3], [0, 4, 2]])
        result = MeshDistance(vertices, faces).segment_distance([-1.0, 0.5, 0.5], [-2.0, 0.5, 0.5])
        assert result.distance_m[0] == pytest.approx(1.0, abs=1e-12)
