"""SignedDistanceGrid: the proven interval always contains the exact signed distance, decisions equal the
exact ones, open meshes are refused, bad arguments are rejected."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import trimesh

from cosim_validation.anatomy.builtin_models import builtin_mesh
from cosim_validation.monitor.metrics import MeshDistance, MetricInputError, distance_grid
from cosim_validation.monitor.metrics.distance_grid import SignedDistanceGrid

RNG = np.random.default_rng(23)


@pytest.fixture(scope="module")
def heart() -> trimesh.Trimesh:
    """The project's built-in heart (closed, outward wound), in the patient frame [m]."""
    mesh = builtin_mesh("heart")
    return trimesh.Trimesh(mesh.vertices_m, mesh.faces, process=False)


@pytest.fixture(scope="module")
def heart_distance(heart: trimesh.Trimesh) -> MeshDistance:
    return MeshDistance(heart.vertices, heart.faces)


@pytest.fixture(scope="module")
def grid(heart_distance: MeshDistance) -> SignedDistanceGrid:
    return SignedDistanceGrid(heart_distance, spacing_m=0.004, margin_m=0.01)


def _queries(mesh: trimesh.Trimesh, grid: SignedDistanceGrid) -> np.ndarray:
    """Uniform points in and around the grid box, surface points, thin-band points and grid nodes."""
    lo, hi = grid.lower_corner_m, grid.upper_corner_m
    uniform = RNG.uniform(lo - 0.03, hi + 0.03, size=(20000, 3))
    surface, face = trimesh.sample.sample_surface(mesh, 4000, seed=1)
    band = surface + RNG.uniform(-2e-3, 2e-3, size=(4000, 1)) * mesh.face_normals[face]
    nodes = lo + grid.spacing_m * np.stack([RNG.integers(0, s, size=500) for s in grid.values.shape], axis=1)
    return np.concatenate([uniform, surface, band, nodes])


@pytest.mark.parametrize("parallel_points", [0, 1 << 62])  # the parallel and the serial kernel
def test_interval_contains_the_exact_signed_distance(
    monkeypatch: pytest.MonkeyPatch,
    heart: trimesh.Trimesh,
    heart_distance: MeshDistance,
    grid: SignedDistanceGrid,
    parallel_points: int,
) -> None:
    monkeypatch.setattr(distance_grid, "PARALLEL_POINTS", parallel_points)
    points = _queries(heart, grid)
    lower, upper = grid.bounds(points)
    exact = heart_distance.signed(points)
    assert np.all(lower <= exact)
    assert np.all(exact <= upper)
    inside_box = np.all((points >= grid.lower_corner_m) & (points <= grid.upper_corner_m), axis=1)
    half = 0.5 * (upper - lower)
    assert np.all(half[inside_box] <= grid.max_error_m * (1 + 1e-12))
    assert grid.max_error_m < 0.9 * grid.spacing_m
    nodes = points[-500:]
    assert np.all(half[-500:] <= grid.rounding_m * (1 + 1e-3))  # at a node only rounding is left
    np.testing.assert_allclose(0.5 * (upper + lower)[-500:], heart_distance.signed(nodes), atol=grid.rounding_m)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_closest_points_make_the_far_side_second_order(
    heart: trimesh.Trimesh, heart_distance: MeshDistance, grid: SignedDistanceGrid, side: float
) -> None:
    """Off the surface the interval's far side (upper outside, lower inside) comes from the corners' closest
    surface points: its gap to the exact value is O(h² / φ), not interpolation's O(h)."""
    surface, face = trimesh.sample.sample_surface(heart, 20000, seed=5)
    depth = RNG.uniform(0.004, 0.008, size=(20000, 1))
    points = surface + side * depth * heart.face_normals[face]
    exact = heart_distance.signed(points)
    keep = np.abs(exact) > 0.003  # clear of the other side of thin parts and the medial axis of the notch
    lower, upper = grid.bounds(points[keep])
    far = upper - exact[keep] if side > 0 else exact[keep] - lower
    assert np.all(far >= 0.0)
    plain = SignedDistanceGrid(heart_distance, spacing_m=grid.spacing_m, margin_m=0.01, closest_points=False)
    p_lower, p_upper = plain.bounds(points[keep])
    plain_far = p_upper - exact[keep] if side > 0 else exact[keep] - p_lower
    assert np.all(p_lower <= lower)  # never wider
    assert np.all(upper <= p_upper)
    # interpolation alone: up to (√3 / 2) h; the closest points: a fraction of it at 3-8 mm from a 4 mm grid
    assert np.median(far) < 0.2 * np.median(plain_far)
    assert np.quantile(far, 0.99) < 0.25 * grid.spacing_m


@pytest.mark.parametrize("threshold_m", [-0.01, 0.0, 0.002, 0.005, 0.02])
def test_decisions_equal_the_exact_ones(
    heart: trimesh.Trimesh, heart_distance: MeshDistance, grid: SignedDistanceGrid, threshold_m: float
) -> None:
    points = _queries(heart, grid)
    exact = heart_distance.signed(points) >= threshold_m
    np.testing.assert_array_equal(grid.at_least(points, threshold_m), exact)
    undecided = grid.undecided(points, threshold_m)
    assert undecided.any()  # the fallback is exercised
    assert undecided[:20000].mean() < 0.1  # and the grid decides most uniform points


def test_single_and_empty_queries(grid: SignedDistanceGrid, heart: trimesh.Trimesh) -> None:
    centre = heart.vertices.mean(axis=0)
    assert grid.at_least(np.zeros((0, 3)), 0.0).shape == (0,)
    assert grid.bounds(centre[None]).upper_m[0] < 0.0  # inside the heart
    far = centre + np.array([1.0, 0.0, 0.0])
    assert grid.bounds(far[None]).lower_m[0] > 0.9  # outside the box: the bounding-box bound keeps it tight


def test_open_mesh_is_refused() -> None:
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=0.05)
    keep = sphere.triangles_center[:, 2] < 0.03  # cut a cap off: a hole of about 6 cm across
    scene = MeshDistance(sphere.vertices, sphere.faces[keep])
    with pytest.raises(MetricInputError, match=r"signed distance jumps by .* the mesh is not closed"):
        SignedDistanceGrid(scene, spacing_m=0.005, margin_m=0.01)


def test_bad_arguments(heart_distance: MeshDistance, grid: SignedDistanceGrid) -> None:
    with pytest.raises(MetricInputError, match=r"spacing_m: expected a finite distance > 0"):
        SignedDistanceGrid(heart_distance, spacing_m=0.0, margin_m=0.01)
    with pytest.raises(MetricInputError, match=r"margin_m: expected a finite distance >= 0"):
        SignedDistanceGrid(heart_distance, spacing_m=0.01, margin_m=-1.0)
    with pytest.raises(MetricInputError, match=r"more than max_nodes=1000"):
        SignedDistanceGrid(heart_distance, spacing_m=0.001, margin_m=0.0, max_nodes=1000)
    with pytest.raises(MetricInputError, match=r"threshold_m: expected a finite distance"):
        grid.at_least(np.zeros((1, 3)), float("nan"))
    with pytest.raises(MetricInputError, match=r"points_m: expected points of dimension 3"):
        grid.bounds(np.zeros((2, 2)))


def test_segment_decisions_equal_the_exact_ones(heart_distance: MeshDistance, grid: SignedDistanceGrid) -> None:
    lo, hi = heart_distance.bounds_m
    a = RNG.uniform(lo - 0.04, hi + 0.04, size=(600, 3))
    direction = RNG.normal(size=(600, 3))
    b = a + 0.1 * direction / np.linalg.norm(direction, axis=1, keepdims=True)
    b[:5] = a[:5]  # degenerate segments are points
    threshold = 0.005
    exact = heart_distance.segment_distance(a, b, tolerance_m=1e-8)
    expected = ~exact.contact & (exact.distance_m >= threshold)
    clear = np.abs(exact.distance_m - threshold) > 1e-6  # away from the tolerance band of the fallback
    answer = grid.segment_at_least(a, b, threshold)
    np.testing.assert_array_equal(answer[clear], expected[clear])
    assert 0.2 < expected.mean() < 0.95  # both answers occur
    assert grid.segment_at_least(a[7], b[7], threshold).shape == (1,)
    assert grid.segment_at_least(np.zeros((0, 3)), np.zeros((0, 3)), threshold).shape == (0,)


def test_segment_bad_input(grid: SignedDistanceGrid) -> None:
    with pytest.raises(MetricInputError, match=r"threshold_m: expected a finite distance > 0"):
        grid.segment_at_least(np.zeros(3), np.ones(3), 0.0)
    with pytest.raises(MetricInputError, match=r"a_m and b_m must have the same shape"):
        grid.segment_at_least(np.zeros((2, 3)), np.ones((3, 3)), 0.01)
    with pytest.raises(MetricInputError, match=r"b_m: coordinates must be finite"):
        grid.segment_at_least(np.zeros(3), [np.nan, 0.0, 0.0], 0.01)


def test_a_grid_is_sampled_once_then_read_from_the_disk_cache(
    heart: trimesh.Trimesh, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Every process that checks a case builds the same grid: the second build reads what the first stored, equal to
    the value; another mesh, spacing or margin is its own entry; an entry that does not fit is sampled again."""
    monkeypatch.setenv("COSIM_CACHE_DIR", str(tmp_path))
    sampled: list[int] = []
    sample = SignedDistanceGrid._sample

    def counted(self: SignedDistanceGrid, shape: np.ndarray, closest_points: bool) -> Any:
        sampled.append(int(np.prod(shape)))
        return sample(self, shape, closest_points)

    monkeypatch.setattr(SignedDistanceGrid, "_sample", counted)
    first = SignedDistanceGrid(MeshDistance(heart.vertices, heart.faces), spacing_m=0.006, margin_m=0.01)
    again = SignedDistanceGrid(MeshDistance(heart.vertices, heart.faces), spacing_m=0.006, margin_m=0.01)
    assert len(sampled) == 1
    np.testing.assert_array_equal(again.values, first.values)
    np.testing.assert_array_equal(again.closest_local, first.closest_local)
    entries = sorted(tmp_path.glob("distance-grid-*.npz"))
    assert len(entries) == 1

    SignedDistanceGrid(MeshDistance(heart.vertices, heart.faces), spacing_m=0.007, margin_m=0.01)
    SignedDistanceGrid(MeshDistance(heart.vertices, heart.faces), spacing_m=0.006, margin_m=0.01, closest_points=False)
    moved = heart.vertices + np.array([0.0, 0.0, 1e-6])  # a micrometre: another mesh
    SignedDistanceGrid(MeshDistance(moved, heart.faces), spacing_m=0.006, margin_m=0.01)
    assert len(sampled) == 4
    assert len(list(tmp_path.glob("distance-grid-*.npz"))) == 4

    np.savez(entries[0], values=np.zeros((2, 2, 2)), closest_local=np.zeros((1, 1, 1, 3), dtype=np.float32))
    rebuilt = SignedDistanceGrid(MeshDistance(heart.vertices, heart.faces), spacing_m=0.006, margin_m=0.01)
    assert len(sampled) == 5  # the entry of another shape is not taken for the grid
    np.testing.assert_array_equal(rebuilt.values, first.values)
    entries[0].write_bytes(b"not an npz")
    SignedDistanceGrid(MeshDistance(heart.vertices, heart.faces), spacing_m=0.006, margin_m=0.01)
    assert len(sampled) == 6  # an unreadable entry is sampled again (and replaced)
    SignedDistanceGrid(MeshDistance(heart.vertices, heart.faces), spacing_m=0.006, margin_m=0.01)
    assert len(sampled) == 6
    # values of the right shape and smoothness (the closedness check passes them) but not the mesh's: 5 cm off, or
    # a constant, gave wrong margins and "minimum <= 0 but no sample <= 0"; the spot check samples it again
    for wrong in (first.values + 0.05, np.ones_like(first.values)):
        np.savez(entries[0], values=wrong, closest_local=first.closest_local)
        again = SignedDistanceGrid(MeshDistance(heart.vertices, heart.faces), spacing_m=0.006, margin_m=0.01)
        np.testing.assert_array_equal(again.values, first.values)
    assert len(sampled) == 8


def test_an_open_mesh_is_refused_from_the_cache_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The closedness check runs on cached values as on sampled ones (a refused grid is not stored)."""
    monkeypatch.setenv("COSIM_CACHE_DIR", str(tmp_path))
    sphere = trimesh.creation.icosphere(subdivisions=3, radius=0.05)
    keep = sphere.triangles_center[:, 2] < 0.03
    for _ in range(2):
        with pytest.raises(MetricInputError, match=r"the mesh is not closed"):
            SignedDistanceGrid(MeshDistance(sphere.vertices, sphere.faces[keep]), spacing_m=0.005, margin_m=0.01)
    assert list(tmp_path.glob("distance-grid-*")) == []
