"""Suites from the shipped scene: validity, full coverage, truly full cubes, determinism, sub-regions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cosim_validation.anatomy import AnatomyScene
from cosim_validation.common.exceptions import ConfigError, InputError
from cosim_validation.testgen import (
    CubeClass,
    Suite,
    SuiteMetrics,
    TestgenConfig,
    TestgenRequest,
    build_region,
    discretize,
    generate_suite,
)
from cosim_validation.testgen.model_distance import signed_distance_m
from test.monitor.metrics.inside_reference import parity_along_x


@pytest.fixture(scope="module")
def grid_suite(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> tuple[Suite, SuiteMetrics]:
    return generate_suite(scene, testgen_cfg, TestgenRequest("grid", 0.008, 3, seed=7))


def _inside(model_name: str, scene: AnatomyScene, points: np.ndarray) -> np.ndarray:
    model = scene.model(model_name)
    return parity_along_x(model.vertices_m, model.faces, points)


def test_every_grid_target_is_inside_the_lung_and_outside_the_heart(
    grid_suite: tuple[Suite, SuiteMetrics], scene: AnatomyScene
) -> None:
    suite, _ = grid_suite
    assert _inside("left_lung", scene, suite.target_m).all()
    assert not _inside("heart", scene, suite.target_m).any()


def test_grid_coverage_is_full_with_k_cases_per_cube(grid_suite: tuple[Suite, SuiteMetrics]) -> None:
    suite, metrics = grid_suite
    assert metrics.coverage == 1.0
    assert metrics.gave_up_cubes == 0
    assert metrics.covered_cubes == metrics.nonempty_cubes == metrics.full_cubes + metrics.partial_cubes
    assert metrics.valid_cases == len(suite) == 3 * metrics.nonempty_cubes
    assert metrics.max_cases_per_cube == 3
    assert metrics.points_generated >= metrics.valid_cases
    _, counts = np.unique(suite.cube_index, axis=0, return_counts=True)
    assert np.all(counts == 3)


def test_cases_lie_in_their_recorded_cube_with_their_depth(
    grid_suite: tuple[Suite, SuiteMetrics], scene: AnatomyScene
) -> None:
    suite, _ = grid_suite
    g = suite.metadata["grid"]
    lo = np.array(g["origin_m"]) + suite.cube_index * g["granularity_m"]
    assert np.all((suite.target_m >= lo) & (suite.target_m <= lo + g["granularity_m"]))
    depth = -signed_distance_m(scene.model("left_lung"), suite.target_m)
    np.testing.assert_allclose(suite.target_depth_m, depth, atol=1e-6)
    assert np.all(suite.target_depth_m >= 0)


def test_sources_lie_in_the_box_outside_every_model(
    grid_suite: tuple[Suite, SuiteMetrics], scene: AnatomyScene, testgen_cfg: TestgenConfig
) -> None:
    suite, _ = grid_suite
    box = testgen_cfg.source_region
    assert np.all(np.abs(suite.source_m - box.center_m) <= box.half_extent_m)
    for model in scene:
        assert not _inside(model.name, scene, suite.source_m[::10]).any()


@pytest.mark.parametrize("granularity_m", [0.02, 0.01])
def test_full_cubes_are_truly_full_and_empty_cubes_truly_empty(
    scene: AnatomyScene, testgen_cfg: TestgenConfig, granularity_m: float
) -> None:
    region, _ = build_region(scene, testgen_cfg, "left_lung")
    grid, classes = discretize(region, granularity_m)
    rng = np.random.default_rng(5)
    for cls, expected in ((CubeClass.FULL, True), (CubeClass.EMPTY, False)):
        cubes = np.argwhere(classes == cls)
        points = (grid.origin_m + (cubes[:, None, :] + rng.random((len(cubes), 40, 3))) * granularity_m).reshape(-1, 3)
        assert np.all(_inside("left_lung", scene, points) == expected)


def test_same_seed_same_suite_and_other_seed_other_suite(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    request = TestgenRequest("grid", 0.015, 2, seed=11)
    a, _ = generate_suite(scene, testgen_cfg, request)
    b, _ = generate_suite(scene, testgen_cfg, request)
    c, _ = generate_suite(scene, testgen_cfg, dataclasses.replace(request, seed=12))
    assert a.suite_id == b.suite_id
    for name in ("source_m", "target_m", "cube_index", "target_depth_m"):
        assert np.array_equal(getattr(a, name), getattr(b, name))
    assert a.suite_id != c.suite_id
    assert not np.array_equal(a.target_m, c.target_m)


def test_random_baseline_reaches_its_count_and_covers_less(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    suite, metrics = generate_suite(scene, testgen_cfg, TestgenRequest("random", 0.01, 3, count=5000, seed=3))
    assert len(suite) == metrics.valid_cases == 5000
    assert metrics.points_generated > 5000
    assert metrics.coverage < 1.0
    assert metrics.max_cases_per_cube > 3
    assert _inside("left_lung", scene, suite.target_m).all()
    assert np.all(suite.cube_index >= 0)


def test_margin_keeps_targets_away_from_the_heart(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    cfg = dataclasses.replace(testgen_cfg, margin_m=0.01)
    suite, _ = generate_suite(scene, cfg, TestgenRequest("grid", 0.01, 2, region="near_heart", seed=1))
    assert np.all(signed_distance_m(scene.model("heart"), suite.target_m) > 0.01)


def test_sub_region_within_distance_of_the_heart(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    suite, metrics = generate_suite(scene, testgen_cfg, TestgenRequest("grid", 0.01, 2, region="near_heart", seed=1))
    assert suite.metadata["region"]["within_m"] == 0.03
    assert np.all(signed_distance_m(scene.model("heart"), suite.target_m) <= 0.03)
    assert _inside("left_lung", scene, suite.target_m).all()
    assert metrics.coverage == 1.0
    assert metrics.lattice_empty_cubes > 0  # cubes cut by both the lung surface and the 30 mm shell


def test_sub_region_by_volume_fraction(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    _region, meta = build_region(scene, testgen_cfg, "heart_side_7pct")
    lung = scene.model("left_lung")
    rng = np.random.default_rng(9)
    points = rng.uniform(*lung.bounds_m, size=(60_000, 3))  # about 26,000 inside: the share's error about 0.0016
    inside = points[_inside("left_lung", scene, points)]
    share = np.mean(np.maximum(signed_distance_m(scene.model("heart"), inside), 0.0) <= meta["within_m"])
    assert share == pytest.approx(0.07, abs=0.01)


@pytest.mark.parametrize(
    ("request_", "error", "match"),
    [
        (TestgenRequest("grid", 0.0, 3), InputError, "granularity must be > 0"),
        (TestgenRequest("grid", -0.01, 3), InputError, "granularity must be > 0"),
        (TestgenRequest("grid", 0.5, 3), InputError, "granularity 500 mm is larger than region 'left_lung'"),
        (TestgenRequest("grid", 0.01, 0), InputError, "k must be >= 1, got 0"),
        (TestgenRequest("grid", 0.01, 3, count=10), InputError, "--count applies to the random method only"),
        (TestgenRequest("random", 0.01, 3, count=0), InputError, "count must be within 1..1,000,000"),
        (TestgenRequest("grid", 0.01, 3, region="liver"), InputError, "unknown region 'liver'; target models and "),
        (TestgenRequest("grid", 0.01, 3, region="heart"), InputError, "model 'heart' has role 'obstacle'"),
        (TestgenRequest("spiral", 0.01, 3), InputError, "method: expected one of"),
    ],
)
def test_bad_requests(
    scene: AnatomyScene, testgen_cfg: TestgenConfig, request_: TestgenRequest, error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        generate_suite(scene, testgen_cfg, request_)


def test_sub_region_that_misses_the_model(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    spec = dataclasses.replace(testgen_cfg.regions["near_heart"], within_m=0.001)
    cfg = dataclasses.replace(testgen_cfg, regions={"tiny": dataclasses.replace(spec, name="tiny")})
    with pytest.raises(InputError, match="region 'tiny' holds no valid target of model 'left_lung'"):
        generate_suite(scene, cfg, TestgenRequest("grid", 0.002, 3, region="tiny"))


def test_a_margin_no_target_can_keep_is_named(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    """A margin of 0.9 m around the heart leaves the lung no target: the message says which setting did it."""
    cfg = dataclasses.replace(testgen_cfg, margin_m=0.9)
    match = r"holds no valid target of model 'left_lung' \(a target stays more than testgen\.margin_m = 0\.9 m"
    with pytest.raises(InputError, match=match):
        generate_suite(scene, cfg, TestgenRequest("random", 0.04, 1, count=5))


def test_sub_region_naming_an_unknown_model_is_a_config_error(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    spec = dataclasses.replace(testgen_cfg.regions["near_heart"], near="liver")
    cfg = dataclasses.replace(testgen_cfg, regions={"near_heart": spec})
    with pytest.raises(ConfigError, match=r"testgen\.regions\.near_heart\.near: no anatomy model named 'liver'"):
        generate_suite(scene, cfg, TestgenRequest("grid", 0.01, 3, region="near_heart"))


def test_obstacle_that_swallows_the_target(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    torso = dataclasses.replace(scene.model("torso"), role="obstacle")
    swallowed = AnatomyScene((scene.model("left_lung"), torso), scene.T_base_patient)
    with pytest.raises(ConfigError, match=r"testgen\.target: obstacle 'torso' swallows the whole target 'left_lung'"):
        generate_suite(swallowed, testgen_cfg, TestgenRequest("grid", 0.01, 3))  # the region testgen.target names
    with pytest.raises(InputError, match="--region: obstacle 'torso' swallows the whole target 'left_lung'"):
        generate_suite(swallowed, testgen_cfg, TestgenRequest("grid", 0.01, 3, region="left_lung"))


def test_source_region_inside_a_model(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    lung_centre = scene.model("left_lung").bounds_m.mean(axis=0)
    box = dataclasses.replace(testgen_cfg.source_region, center_m=lung_centre, half_extent_m=np.zeros(3))
    cfg = dataclasses.replace(testgen_cfg, source_region=box)
    with pytest.raises(InputError, match=r"source region .* lies inside the models \['left_lung', 'torso'\]"):
        generate_suite(scene, cfg, TestgenRequest("grid", 0.02, 1))


def test_sources_toward_the_target_lie_on_the_line_from_the_centre(
    scene: AnatomyScene, testgen_cfg: TestgenConfig
) -> None:
    """An arm with a remote centre of motion starts each case on the line from that centre to its target."""
    centre = testgen_cfg.source_region.center_m
    box = dataclasses.replace(testgen_cfg.source_region, half_extent_m=np.zeros(3), toward_target_m=0.015)
    cfg = dataclasses.replace(testgen_cfg, source_region=box)
    suite, _ = generate_suite(scene, cfg, TestgenRequest("grid", 0.04, 1))
    offset = suite.source_m - centre
    direction = suite.target_m - centre
    assert np.allclose(np.linalg.norm(offset, axis=1), 0.015)
    assert np.allclose(np.cross(offset, direction), 0.0, atol=1e-12)
    assert (np.einsum("ij,ij->i", offset, direction) > 0).all()


def test_a_source_moved_into_a_model_is_named(scene: AnatomyScene, testgen_cfg: TestgenConfig) -> None:
    box = dataclasses.replace(testgen_cfg.source_region, half_extent_m=np.zeros(3), toward_target_m=0.2)
    cfg = dataclasses.replace(testgen_cfg, source_region=box)
    with pytest.raises(InputError, match=r"source region: a source 0\.2 m from .* lies inside the model 'left_lung'"):
        generate_suite(scene, cfg, TestgenRequest("grid", 0.04, 1))


def test_a_random_suite_cut_short_by_its_attempt_bound_names_the_bound(
    scene: AnatomyScene, testgen_cfg: TestgenConfig
) -> None:
    """One candidate allowed, none valid: it blamed the region ("holds no valid target"), whose cubes hold many."""
    from dataclasses import replace

    from cosim_validation.common.exceptions import InputError

    with pytest.raises(
        InputError, match=r"among 1 random candidate \(testgen\.max_attempts: 1\): raise testgen\.max_attempts"
    ):
        generate_suite(scene, replace(testgen_cfg, max_attempts=1), TestgenRequest("random", 0.03, 1, count=3, seed=0))
