"""Generating a suite: region, discretization, targets, sources, depths, metrics, metadata."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.anatomy import AnatomyScene
from cosim_validation.common.exceptions import InputError
from cosim_validation.testgen.cube_grid import CubeClass, CubeGrid
from cosim_validation.testgen.generators import Targets, grid_targets, random_targets
from cosim_validation.testgen.model_distance import surface_distance_m
from cosim_validation.testgen.region_builder import build_region
from cosim_validation.testgen.suite import Suite
from cosim_validation.testgen.suite_metrics import SuiteMetrics, suite_metrics
from cosim_validation.testgen.target_region import TargetRegion
from cosim_validation.testgen.testgen_config import TestgenConfig

METHODS: tuple[str, ...] = ("grid", "random")


@dataclass(frozen=True)
class TestgenRequest:
    """What to generate.

    Attributes:
        method: ``grid`` or ``random``.
        granularity_m: Cube edge [m], > 0 and not larger than the region.
        per_cube: k, targets per non-empty cube (grid), and the default budget of random (k x cubes).
        count: Random only: number of valid targets (default: per_cube x non-empty cubes).
        region: Region name (a target model or a configured sub-region); None: the configured default.
        seed: Generator seed.
    """

    __test__ = False

    method: str
    granularity_m: float
    per_cube: int
    count: int | None = None
    region: str | None = None
    seed: int = 0


#: The most cubes a grid may have over its region's box (the left lung's box holds 5 million at 1.2 mm; at 0.5 mm a
#: grid did not finish within a minute, at 0.01 mm it ran out of memory)
MAX_CUBES = 5_000_000
#: The most cases one suite may hold (seed 000's whole study ran 88,554)
MAX_CASES = 1_000_000


def _check_request(request: TestgenRequest) -> None:
    if request.method not in METHODS:
        raise InputError(f"method: expected one of {METHODS!r}, got {request.method!r}")
    if not request.granularity_m > 0:
        raise InputError(f"granularity must be > 0, got {request.granularity_m * 1e3!r} mm")
    if request.per_cube < 1:
        raise InputError(f"per-cube count k must be >= 1, got {request.per_cube!r}")
    if request.count is not None and request.method != "random":
        raise InputError("--count applies to the random method only (grid makes k per non-empty cube)")
    if request.count is not None and not 1 <= request.count <= MAX_CASES:
        raise InputError(f"count must be within 1..{MAX_CASES:,}, got {request.count!r}")
    if request.per_cube > MAX_CASES:
        raise InputError(f"per-cube count k must be within 1..{MAX_CASES:,}, got {request.per_cube!r}")
    if request.seed < 0:
        raise InputError(f"seed must be >= 0, got {request.seed!r}")


def discretize(region: TargetRegion, granularity_m: float) -> tuple[CubeGrid, np.ndarray]:
    """The grid over the region's box and every cube's :class:`CubeClass`.

    Args:
        region: The target region.
        granularity_m: Cube edge, in [m].

    Returns:
        The grid and the classes, shape (nx, ny, nz).

    Raises:
        InputError: The granularity exceeds the region, or no cube holds a valid target.
    """
    extent = region.bounds_m[1] - region.bounds_m[0]
    if np.any(extent <= 0):
        raise InputError(f"region {region.name!r} misses model {region.target.name!r}: its box is empty")
    if granularity_m > float(extent.max()):
        raise InputError(
            f"granularity {granularity_m * 1e3:g} mm is larger than region {region.name!r} "
            f"(largest extent {float(extent.max()) * 1e3:.1f} mm)"
        )
    # in logarithms first: 1e-300 m overflowed numpy's product with a RuntimeWarning before this error
    log_cubes = float(np.sum(np.log(extent) - math.log(granularity_m)))
    cubes = float(np.prod(np.ceil(extent / granularity_m))) if log_cubes < 100 else math.inf
    if cubes > MAX_CUBES:
        finest = float(np.cbrt(np.prod(extent) / MAX_CUBES)) * 1e3
        many = f"{cubes:.3g}" if math.isfinite(cubes) else f"about 1e{log_cubes / math.log(10):.0f}"
        raise InputError(
            f"granularity {granularity_m * 1e3:g} mm makes {many} cubes over region {region.name!r} "
            f"(at most {MAX_CUBES:,}: a granularity of at least {np.ceil(finest * 10) / 10:g} mm)"
        )
    grid = CubeGrid.covering(region.bounds_m, granularity_m)
    classes = region.classify(grid)
    if not np.any(classes != CubeClass.EMPTY):
        margin = (
            f" (a target stays more than testgen.margin_m = {region.margin_m:g} m outside every obstacle)"
            if region.margin_m > 0 and region.obstacles
            else ""
        )
        raise InputError(f"region {region.name!r} holds no valid target of model {region.target.name!r}{margin}")
    return grid, classes


def _targets(
    region: TargetRegion, grid: CubeGrid, classes: np.ndarray, request: TestgenRequest, cfg: TestgenConfig
) -> Targets:
    if request.method == "grid":
        return grid_targets(region, grid, classes, request.per_cube, request.seed, cfg.max_attempts_per_cube)
    count = request.count or request.per_cube * int(np.sum(classes != CubeClass.EMPTY))
    return random_targets(region, count, request.seed, cfg.max_attempts)


def location_free(source: str) -> str:
    """A model's source as a suite stores it: ``builtin:<name>``, or a mesh file's name, never the path.

    The mesh's SHA-256 beside it says which content. Without the path, one configuration gives one suite id in any
    folder or clone.

    Args:
        source: The model's ``source``: ``builtin:<name>`` or the mesh file's path.
    """
    return source if source.startswith("builtin:") else Path(source).name


def generate_suite(
    scene: AnatomyScene, cfg: TestgenConfig, request: TestgenRequest, config: dict[str, Any] | None = None
) -> tuple[Suite, SuiteMetrics]:
    """Generate a suite and its metrics.

    Args:
        scene: The anatomy, placed in base_link.
        cfg: The ``testgen`` configuration.
        request: Method, granularity, k, count, region, seed.
        config: Raw configuration to record in the suite's metadata.

    Raises:
        InputError, ConfigError: Bad request or configuration; nothing is generated.
    """
    _check_request(request)
    region, region_meta = build_region(scene, cfg, request.region)
    start = time.perf_counter()
    grid, classes = discretize(region, request.granularity_m)
    wanted = request.per_cube * int(np.count_nonzero(classes != CubeClass.EMPTY))
    if request.method == "grid" and wanted > MAX_CASES:
        raise InputError(
            f"per-cube count k = {request.per_cube} makes {wanted:,} cases over the {wanted // request.per_cube:,} "
            f"non-empty cubes (at most {MAX_CASES:,} per suite)"
        )
    made = _targets(region, grid, classes, request, cfg)
    if not len(made.targets_m) and request.method == "random" and len(made.gave_up):
        raise InputError(  # it blamed the region, whose grid holds valid targets, for the bound on candidates
            f"no valid target in region {region.name!r} among {made.points_generated:,} random "
            f"candidate{'s' if made.points_generated != 1 else ''} (testgen.max_attempts: {cfg.max_attempts:,}): "
            "raise testgen.max_attempts"
        )
    if not len(made.targets_m):
        margin = (
            f" (a target stays more than testgen.margin_m = {region.margin_m:g} m outside every obstacle)"
            if region.margin_m > 0 and region.obstacles
            else ""
        )
        raise InputError(f"region {region.name!r} holds no valid target of model {region.target.name!r}{margin}")
    generation_s = time.perf_counter() - start
    classes[tuple(made.lattice_empty.T)] = CubeClass.EMPTY
    cubes = grid.cube_index(made.targets_m)
    metrics = suite_metrics(
        request.method,
        grid,
        classes,
        cubes,
        made.points_generated,
        len(made.gave_up),
        len(made.lattice_empty),
        generation_s,
    )
    rng = np.random.default_rng([request.seed, 1])
    sources = cfg.source_region.sample(rng, len(made.targets_m), scene.models, made.targets_m)
    depth = surface_distance_m(region.target, made.targets_m)
    meta = {
        "generator": request.method,
        "seed": request.seed,
        "granularity_m": request.granularity_m,
        "per_cube": request.per_cube,
        "count": request.count,
        "region": region_meta,
        "grid": grid.as_dict(),
        "gave_up_cubes": made.gave_up.tolist(),
        "lattice_empty_cubes": made.lattice_empty.tolist(),
        "models": [
            {"name": m.name, "role": m.role, "source": location_free(m.source), "sha256": m.sha256, "unit": m.unit}
            | ({"repair": m.repair.to_dict()} if m.repair is not None else {})
            for m in scene
        ],
        "T_base_patient": scene.T_base_patient.tolist(),
        "metrics": metrics.as_dict(),
        "config": config or {},
    }
    return Suite.build(sources, made.targets_m, cubes, depth, meta), metrics
