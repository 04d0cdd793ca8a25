"""MeshDistance against exact float64 references: a convex polyhedron (analytic inside test, trimesh
closest points) and, where present, a real anatomical mesh; needle segments; bad input."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from cosim_validation.monitor.metrics import MeshDistance, MetricInputError
from test.monitor.metrics.reference import point_triangle_distance

RNG = np.random.default_rng(11)
# open3d works in float32 on coordinates relative to the model centre (|x| <~ 0.1 m here)
F32_M = 1e-7


@pytest.fixture(scope="module")
def polyhedron() -> trimesh.Trimesh:
    """A convex, closed polyhedron: an icosphere of radius 5 cm placed off the origin."""
    mesh = trimesh.creation.icosphere(subdivisions=3, radius=0.05)
    mesh.apply_translation([0.4, -0.1, 0.3])
    return mesh


@pytest.fixture(scope="module")
def scene(polyhedron: trimesh.Trimesh) -> MeshDistance:
    return MeshDistance(polyhedron.vertices, polyhedron.faces)


def _inside_convex(mesh: trimesh.Trimesh, points: np.ndarray) -> np.ndarray:
    """Exact inside test for a convex mesh: behind every face plane."""
    v0 = mesh.vertices[mesh.faces[:, 0]]
    side = np.einsum("fk,pfk->pf", mesh.face_normals, points[:, None, :] - v0[None])
    return np.all(side < 0.0, axis=1)


def _exact_unsigned(mesh: trimesh.Trimesh, points: np.ndarray) -> np.ndarray:
    """Brute force over all triangles (trimesh.proximity.closest_point is off by up to 2e-5 m here)."""
    return point_triangle_distance(points, mesh.vertices, mesh.faces)


def _band_points(mesh: trimesh.Trimesh, count: int) -> np.ndarray:
    """Points on the surface and within +-1 mm of it, along face normals."""
    surface, face = trimesh.sample.sample_surface(mesh, count, seed=3)
    offset = RNG.choice([-1e-3, -1e-4, -1e-5, 0.0, 1e-5, 1e-4, 1e-3], size=count)
    return surface + offset[:, None] * mesh.face_normals[face]


def _query_points(mesh: trimesh.Trimesh) -> np.ndarray:
    lo, hi = mesh.bounds
    uniform = RNG.uniform(lo - 0.03, hi + 0.03, size=(600, 3))
    return np.concatenate([uniform, _band_points(mesh, 600), mesh.vertices[:50]])


def test_unsigned_signed_p2m_and_inside_match_exact_references(
    polyhedron: trimesh.Trimesh, scene: MeshDistance
) -> None:
    points = _query_points(polyhedron)
    exact = _exact_unsigned(polyhedron, points)
    inside = _inside_convex(polyhedron, points)
    np.testing.assert_allclose(scene.distance(points), exact, atol=F32_M)
    decided = exact > F32_M  # on the surface itself the sign is a matter of rounding
    np.testing.assert_array_equal(scene.contains(points)[decided], inside[decided])
    signed = np.where(inside, -exact, exact)
    np.testing.assert_allclose(scene.signed_distance(points)[decided], signed[decided], atol=F32_M)
    np.testing.assert_allclose(scene.p2m(points), np.maximum(signed, 0.0), atol=F32_M)
    assert np.all(scene.distance(polyhedron.vertices) < F32_M)


def test_closest_points_lie_on_the_surface_at_the_distance(polyhedron: trimesh.Trimesh, scene: MeshDistance) -> None:
    points = _query_points(polyhedron)
    closest = scene.closest_points(points)
    assert closest.shape == points.shape
    assert np.all(_exact_unsigned(polyhedron, closest) < F32_M)  # on the surface
    np.testing.assert_allclose(
        np.linalg.norm(points - closest, axis=1), _exact_unsigned(polyhedron, points), atol=F32_M
    )
    single = scene.closest_points(polyhedron.centroid + np.array([0.0, 0.0, 0.15]))
    np.testing.assert_allclose(single, polyhedron.centroid + np.array([0.0, 0.0, 0.05]), atol=2e-3)  # a facet


def test_single_point_queries_return_floats(polyhedron: trimesh.Trimesh, scene: MeshDistance) -> None:
    centre = polyhedron.centroid
    assert scene.p2m(centre) == 0.0
    assert scene.contains(centre) is True
    assert scene.signed_distance(centre) < -0.04
    assert scene.distance(centre + np.array([0.0, 0.0, 0.15])) == pytest.approx(0.1, abs=1e-6)


def _segment_reference(mesh: trimesh.Trimesh, a: np.ndarray, b: np.ndarray) -> float:
    """Minimum distance along a segment outside a convex mesh: the distance is convex in t, ternary search."""
    lo, hi = 0.0, 1.0
    for _ in range(80):
        t1, t2 = lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0
        f = _exact_unsigned(mesh, np.array([a + t1 * (b - a), a + t2 * (b - a)]))
        lo, hi = (lo, t2) if f[0] < f[1] else (t1, hi)
    return float(_exact_unsigned(mesh, (a + 0.5 * (lo + hi) * (b - a))[None])[0])


def test_segments_contact_and_minimum_distance(polyhedron: trimesh.Trimesh, scene: MeshDistance) -> None:
    c = polyhedron.centroid
    a = np.array(
        [
            c + np.array([0.2, -0.2, 0.0]),  # passes beside the sphere
            c + np.array([0.2, 0.0, 0.0]),  # crosses it
            c + np.array([0.01, 0.0, 0.0]),  # lies inside
            c + np.array([0.2, 0.06, 0.01]),  # passes close by (about 1 cm)
            c + np.array([0.08, 0.0, 0.0]),  # points away
            c + np.array([0.0, 0.0, 0.0501]),  # grazes the top, inside the faceted sphere's circumsphere band
        ]
    )
    b = np.array(
        [
            c + np.array([0.2, 0.2, 0.0]),
            c - np.array([0.2, 0.0, 0.0]),
            c + np.array([-0.01, 0.01, 0.0]),
            c + np.array([-0.2, 0.06, 0.01]),
            c + np.array([0.3, 0.0, 0.0]),
            c + np.array([0.0, 0.0, 0.2]),
        ]
    )
    result = scene.segment_distance(a, b, tolerance_m=1e-7)
    np.testing.assert_array_equal(result.contact, [False, True, True, False, False, False])
    assert result.distance_m[1] == 0.0
    assert result.distance_m[2] == 0.0
    assert result.t_closest[2] == 0.0
    assert 0.2 < result.t_closest[1] < 0.5  # first crossing of the 5 cm sphere from 20 cm away, 40 cm long
    for k in (0, 3, 4, 5):
        expected = _segment_reference(polyhedron, a[k], b[k])
        assert expected - F32_M <= result.distance_m[k] <= expected + 1e-7 + F32_M
    point = a[0] + result.t_closest[0] * (b[0] - a[0])
    assert scene.distance(point) == pytest.approx(result.distance_m[0], abs=F32_M)
    single = scene.segment_distance(a[3], b[3])
    assert single.distance_m.shape == (1,)
    assert single.distance_m[0] == pytest.approx(result.distance_m[3], abs=1e-6)


def test_degenerate_segment_is_a_point(polyhedron: trimesh.Trimesh, scene: MeshDistance) -> None:
    p = polyhedron.centroid + np.array([0.0, 0.0, 0.1])
    result = scene.segment_distance(p, p)
    assert not result.contact[0]
    # the segment's minimum is exact in float64; the point's distance is open3d's, in float32 near the model
    assert result.distance_m[0] == pytest.approx(scene.distance(p), abs=1e-7)


def test_real_anatomy_distance_matches_brute_force(shared_anatomy: Path | None) -> None:
    """The aorta (open tubes, 17k faces): the unsigned distance is exact even where the sign is not defined."""
    if shared_anatomy is None:
        pytest.skip("the shared anatomy meshes are not on this machine")
    mesh = trimesh.load_mesh(shared_anatomy / "aorta.stl")
    scene = MeshDistance(mesh.vertices, mesh.faces)
    points = np.concatenate([_band_points(mesh, 300), RNG.uniform(*mesh.bounds, size=(200, 3))])
    np.testing.assert_allclose(scene.distance(points), _exact_unsigned(mesh, points), atol=2e-7)


@pytest.mark.parametrize(
    ("vertices", "faces", "match"),
    [
        (np.zeros((3, 2)), [[0, 1, 2]], r"vertices_m: expected points of dimension 3"),
        (np.eye(3), [[0, 1, 3]], r"faces: indices must lie in \[0, 3\).*got range \[0, 3\]"),
        (np.eye(3), [[0, 1, -1]], r"faces: indices must lie"),
        (np.eye(3), [[0.0, 1.0, 2.0]], r"faces: expected an integer array, got dtype 'float64'"),
        (np.eye(3), np.zeros((0, 3), dtype=int), r"faces: expected shape \(F, 3\) with F >= 1"),
        (np.eye(3), [0, 1, 2], r"faces: expected shape \(F, 3\)"),
        (np.array([[0.0, 0.0, np.nan], [1, 0, 0], [0, 1, 0]]), [[0, 1, 2]], r"vertices_m: coordinates must be finite"),
    ],
)
def test_bad_meshes(vertices: np.ndarray, faces: object, match: str) -> None:
    with pytest.raises(MetricInputError, match=match):
        MeshDistance(vertices, faces)  # type: ignore[arg-type]


def test_bad_queries(scene: MeshDistance) -> None:
    with pytest.raises(MetricInputError, match=r"points_m: expected points of dimension 3"):
        scene.p2m(np.zeros((4, 2)))
    with pytest.raises(MetricInputError, match=r"points_m: coordinates must be finite"):
        scene.distance([0.0, np.inf, 0.0])
    with pytest.raises(MetricInputError, match=r"a_m and b_m must have the same shape"):
        scene.segment_distance(np.zeros((2, 3)), np.zeros((3, 3)))
    with pytest.raises(MetricInputError, match=r"tolerance_m: expected a finite distance > 0"):
        scene.segment_distance(np.zeros(3), np.ones(3), tolerance_m=0.0)


def test_integer_millimetre_grid_vertices_and_strided_queries(polyhedron: trimesh.Trimesh, scene: MeshDistance) -> None:
    cube = trimesh.creation.box(extents=[2, 2, 2])
    integer_scene = MeshDistance(cube.vertices.astype(np.int64), cube.faces.astype(np.int32))
    assert integer_scene.distance([0.0, 0.0, 3.0]) == pytest.approx(2.0)
    points = _query_points(polyhedron)
    strided = np.asfortranarray(points)[::3]
    np.testing.assert_array_equal(scene.distance(strided), scene.distance(np.ascontiguousarray(points[::3])))
