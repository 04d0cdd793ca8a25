"""Benchmark (not a test): grid test generation on the left lung against a straightforward trimesh generator.

Both generators make k = 3 targets per cube of a grid over the lung's bounding box, at 20, 10, 5 and 2 mm:

- ``cosim``: cosim_validation.testgen (cubes classified full / partial / empty once; full cubes need no
  check; partial cubes are checked by the numba ray-parity test; thin cubes sampled along the surface);
- ``trimesh``: every cube of the box is sampled until 3 candidates are inside by ``trimesh.Trimesh.contains``
  (every candidate checked, at most 64 per cube, candidates batched over all cubes).

The trimesh generator runs on every cube at 20 and 10 mm; at 5 and 2 mm it would take minutes to an hour,
so it runs on a fixed random subset of cubes and its total is estimated from the time per cube
(marked ``~``). Times are wall-clock on one core (the numba kernels are serial), after a warm-up run.
The depth of every target (distance to the lung's surface, metrics.MeshDistance) is timed separately.

A second table gives the candidates per valid case of the grid and the random generator (seed 000's
"generated points" over valid cases) on the sub-model near the heart (``near_heart``), the 7 % of the lung
next to the heart (``heart_side_7pct``, RQ2's sub-model) and the whole left lung (RQ1's), at the same
granularities, with the time of each (grid: classification, refinement and sampling; random: sampling of as
many cases as the grid made).

Run: ``nice -n 10 python benchmarks/bench_testgen.py [--quick] [--candidates-only] [--regions R,..] [--sizes-mm G,..]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np

from cosim_validation.anatomy import AnatomyScene, load_anatomy_file
from cosim_validation.common.config import load_config, resolve_resource
from cosim_validation.testgen import (
    CubeGrid,
    TestgenConfig,
    TestgenRequest,
    build_region,
    generate_suite,
    load_testgen_config,
)
from cosim_validation.testgen.generators import grid_targets, random_targets
from cosim_validation.testgen.model_distance import surface_distance_m
from cosim_validation.testgen.testgen import discretize

K, MAX_ATTEMPTS, SUBSET_CUBES = 3, 64, 3000


def trimesh_generator(mesh: object, grid: CubeGrid, cubes: np.ndarray, seed: int) -> tuple[int, int]:
    """k targets per cube with trimesh ``contains`` on every candidate; returns (targets, candidates)."""
    rng = np.random.default_rng(seed)
    count = np.zeros(len(cubes), dtype=np.int64)
    drawn = np.zeros(len(cubes), dtype=np.int64)
    active = np.arange(len(cubes))
    while len(active):
        corner = grid.origin_m + cubes[active] * grid.granularity_m
        candidates = corner[:, None, :] + rng.random((len(active), K, 3)) * grid.granularity_m
        flat = candidates.reshape(-1, 3)
        inside = np.concatenate([mesh.contains(flat[i : i + 20000]) for i in range(0, len(flat), 20000)])  # type: ignore[attr-defined]
        count[active] += np.minimum(inside.reshape(len(active), K).sum(axis=1), K - count[active])
        drawn[active] += K
        active = active[(count[active] < K) & (drawn[active] < MAX_ATTEMPTS)]
    return int(count.sum()), int(drawn.sum())


def compile_seconds() -> float:
    """Time of a first generation in a fresh process (numba cache loading or compiling)."""
    code = (
        "import time;t=time.perf_counter();"
        "from cosim_validation.anatomy import load_anatomy_file;"
        "from cosim_validation.common.config import load_config;"
        "from cosim_validation.testgen import *;"
        "s=load_anatomy_file();c=load_testgen_config(load_config('config/needle_insertion.yaml')['testgen']);"
        "r,_=build_region(s,c,None);g,k=discretize(r,0.02);grid_targets(r,g,k,3,0,64);"
        "print(time.perf_counter()-t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def candidates_table(scene: AnatomyScene, cfg: TestgenConfig, regions: list[str], sizes_mm: tuple[int, ...]) -> None:
    """Candidates per valid case and time of grid and random, per region and granularity."""
    print(
        f"{'region':>15} {'g [mm]':>6} {'cases':>8} | {'grid cand.':>10} {'per case':>8} {'time [s]':>8} |"
        f" {'random cand.':>12} {'per case':>8} {'time [s]':>8}"
    )
    for name in regions:
        region, _ = build_region(scene, cfg, name)
        for g_mm in sizes_mm:
            start = time.perf_counter()
            grid, classes = discretize(region, g_mm * 1e-3)
            made = grid_targets(region, grid, classes, K, 0, cfg.max_attempts_per_cube)
            grid_s = time.perf_counter() - start
            cases = len(made.targets_m)
            start = time.perf_counter()
            base = random_targets(region, cases, 0, cfg.max_attempts)
            random_s = time.perf_counter() - start
            print(
                f"{name:>15} {g_mm:>6} {cases:>8} | {made.points_generated:>10} {made.points_generated / cases:>8.2f} "
                f"{grid_s:>8.2f} | {base.points_generated:>12} {base.points_generated / cases:>8.2f} {random_s:>8.2f}",
                flush=True,
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 and 10 mm only")
    parser.add_argument("--candidates-only", action="store_true", help="only the candidates table")
    parser.add_argument(
        "--regions", default="near_heart,heart_side_7pct,left_lung", help="regions of the candidates table"
    )
    parser.add_argument("--sizes-mm", default="", help="granularities [mm], comma-separated (default 20,10,5,2)")
    args = parser.parse_args()
    config = load_config(resolve_resource("config/needle_insertion.yaml"))
    scene = load_anatomy_file()
    cfg = load_testgen_config(config["testgen"])
    sizes_mm: tuple[int, ...] = (20, 10) if args.quick else (20, 10, 5, 2)
    if args.sizes_mm:
        sizes_mm = tuple(int(size) for size in args.sizes_mm.split(","))
    generate_suite(scene, cfg, TestgenRequest("grid", 0.02, K, region="near_heart"))  # warm-up
    print(f"candidates per valid case (k = {K}, seed 0; random: as many cases as grid); machine shared (2 cores)")
    candidates_table(scene, cfg, args.regions.split(","), sizes_mm)
    if args.candidates_only:
        return 0
    region, _ = build_region(scene, cfg, "left_lung")
    lung = scene.model("left_lung")
    print(f"left lung: {len(lung.faces)} faces, {lung.volume_m3 * 1e3:.2f} L; k = {K}; machine shared (2 cores)")
    print(f"fresh process, imports + anatomy + 20 mm suite (numba cache load): {compile_seconds():.2f} s")
    generate_suite(scene, cfg, TestgenRequest("grid", 0.02, K))  # warm-up
    header = f"{'g [mm]':>6} {'cubes':>8} {'cases':>9} {'points':>10} {'cosim [s]':>9} {'pts/s':>9} {'cov %':>6}"
    header += f" | {'trimesh [s]':>12} {'pts/s':>8} {'cov %':>6} | {'ratio':>7} | {'depth [s]':>9}"
    print(header)
    for g_mm in sizes_mm:
        g = g_mm * 1e-3
        start = time.perf_counter()
        grid, classes = discretize(region, g)
        made = grid_targets(region, grid, classes, K, 0, cfg.max_attempts_per_cube)
        ours_s = time.perf_counter() - start
        start = time.perf_counter()
        surface_distance_m(lung, made.targets_m)
        depth_s = time.perf_counter() - start
        nonempty = int(np.sum(classes > 0))
        covered = len(np.unique(grid.cube_index(made.targets_m), axis=0))
        all_cubes = np.argwhere(np.ones(tuple(grid.shape), dtype=bool))
        subset = len(all_cubes) > SUBSET_CUBES and g_mm < 10
        chosen = np.random.default_rng(1).choice(len(all_cubes), SUBSET_CUBES, replace=False) if subset else None
        cubes = all_cubes[np.sort(chosen)] if chosen is not None else all_cubes
        start = time.perf_counter()
        found, drawn = trimesh_generator(lung.mesh, grid, cubes, 0)
        base_s = (time.perf_counter() - start) * len(all_cubes) / len(cubes)
        base_cov = f"{100 * min(found / (K * nonempty), 1.0):>6.1f}" if not subset else f"{'-':>6}"
        mark = "~" if subset else " "
        print(
            f"{g_mm:>6} {nonempty:>8} {len(made.targets_m):>9} {made.points_generated:>10} {ours_s:>9.3f} "
            f"{made.points_generated / ours_s:>9.3g} {100 * covered / nonempty:>6.2f} | {mark}{base_s:>11.2f} "
            f"{drawn / (base_s * len(cubes) / len(all_cubes)):>8.3g} {base_cov} | "
            f"{mark}{base_s / ours_s:>6.1f}x | {depth_s:>9.2f}"
        )
    print("cov % of trimesh: targets found / (K x non-empty cubes), '-' where it ran on a subset of cubes;")
    print("~: trimesh time estimated from a random subset of 3000 cubes; points = candidates drawn")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
