"""Benchmark of cosim_validation.monitor.metrics against every contender named in issue 4, in one run.

Run:  source scripts/env.sh && nice -n 10 python benchmarks/bench_metrics.py [--quick] [--json FILE]

Every section times our kernel and the contenders on the same input in the same process and prints the
time, ns per DP cell (Fréchet) or per point (distances) and the ratio contender / ours (> 1: we are
faster). Times are medians of repeated calls after one warm-up call (the warm-up pays numba's compile or
cache load, reported separately in the first section). Slow contenders run on a documented subset and are
scaled linearly (their cost is linear in the number of pairs or points); the line says so.
The machine may be shared: the numbers are ratios measured side by side, not absolute claims.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

warnings.filterwarnings("ignore", message=".*TBB.*")  # numba falls back to OpenMP on this machine

RESULTS: dict[str, Any] = {}


def timed(fn: Callable[[], Any], *, repeat: int = 5, min_total_s: float = 0.2) -> float:
    """Median wall time of fn() [s] after one warm-up call; repeats until min_total_s is spent."""
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < repeat or (time.perf_counter() - start < min_total_s and len(times) < 1000):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def once(fn: Callable[[], Any]) -> float:
    """Wall time of a single call [s] (for contenders too slow to repeat)."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def header(title: str) -> None:
    print(f"\n== {title}")


def row(
    section: str, name: str, seconds: float | None, unit_count: float, unit: str, ours: float | None, note: str = ""
) -> None:
    """One line: name, time, ns per unit, ratio to ours; also recorded for --json."""
    if seconds is None:
        print(f"  {name:<44} {'n/a':>12}  {note}")
        RESULTS.setdefault(section, []).append({"name": name, "seconds": None, "note": note})
        return
    per = seconds / unit_count * 1e9
    ratio = "" if ours is None else f"{seconds / ours:9.1f}x"
    print(f"  {name:<44} {seconds * 1e3:10.3f} ms {per:10.2f} ns/{unit} {ratio}  {note}")
    RESULTS.setdefault(section, []).append(
        {
            "name": name,
            "seconds": seconds,
            f"ns_per_{unit}": per,
            "ratio_to_ours": None if ours is None else seconds / ours,
            "note": note,
        }
    )


def walk(rng: np.random.Generator, n: int, dim: int = 3) -> np.ndarray:
    """A random-walk trajectory (n, dim) with unit steps."""
    return np.cumsum(rng.normal(size=(n, dim)), axis=0)


# ----------------------------------------------------------------------------------------------- compile
_COMPILE_SNIPPET = textwrap.dedent(
    """
    import json, time, warnings
    warnings.filterwarnings("ignore", message=".*TBB.*")
    t0 = time.perf_counter()
    import numpy as np
    from cosim_validation.monitor import metrics
    from cosim_validation.monitor.metrics import distance_grid, frechet_batch, polyline_distance
    out = {"import": time.perf_counter() - t0}
    # compile the parallel variants too, whatever the size thresholds
    frechet_batch.PARALLEL_CELLS = polyline_distance.PARALLEL_WORK = distance_grid.PARALLEL_POINTS = 0
    rng = np.random.default_rng(0)
    P, Q, P7 = rng.normal(size=(50, 3)), rng.normal(size=(60, 3)), rng.normal(size=(50, 7))
    calls = {
        "frechet 3-D": lambda: metrics.frechet(P, Q),
        "frechet 7-D": lambda: metrics.frechet(P7, P7[::-1]),
        "within": lambda: metrics.within(P, Q, 1.0),
        "frechet_coupling": lambda: metrics.frechet_coupling(P, Q),
        "frechet_pairs (parallel)": lambda: frechet_batch.frechet_pairs([P, Q], [Q, P]),
        "within_pairs (parallel)": lambda: frechet_batch.within_pairs([P, Q], [Q, P], 1.0),
        "p2t parallel": lambda: metrics.p2t(P, Q),
    }
    for name, call in calls.items():
        t0 = time.perf_counter()
        call()
        out[name] = time.perf_counter() - t0
    import trimesh
    sphere = trimesh.creation.icosphere(subdivisions=2, radius=0.05)
    scene = metrics.MeshDistance(sphere.vertices, sphere.faces)
    grid = distance_grid.SignedDistanceGrid(scene, 0.01, 0.01)
    t0 = time.perf_counter()
    grid.bounds(rng.uniform(-0.06, 0.06, size=(100, 3)))
    out["grid bounds parallel"] = time.perf_counter() - t0
    print(json.dumps(out))
    """
)


def bench_compile() -> None:
    header("numba compile time: first process (empty cache) vs second process (same NUMBA_CACHE_DIR)")
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        runs = []
        for _ in range(2):
            proc = subprocess.run([sys.executable, "-c", _COMPILE_SNIPPET], env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                raise RuntimeError(f"compile-time probe failed:\n{proc.stderr}")
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    print(f"  {'first call of':<28} {'1st process':>12} {'2nd process':>12}")
    for name in runs[0]:
        print(f"  {name:<28} {runs[0][name] * 1e3:9.1f} ms {runs[1][name] * 1e3:9.1f} ms")
    total = [sum(v for k, v in r.items() if k != "import") for r in runs]
    print(f"  {'total (without import)':<28} {total[0] * 1e3:9.1f} ms {total[1] * 1e3:9.1f} ms")
    RESULTS["compile"] = {"first_process_s": runs[0], "second_process_s": runs[1]}


# ----------------------------------------------------------------------------------------------- Fréchet
def _contenders() -> dict[str, Callable[[np.ndarray, np.ndarray], float] | str]:
    """The published discrete Fréchet implementations, or why one is missing."""
    found: dict[str, Callable[[np.ndarray, np.ndarray], float] | str] = {}
    from tslearn.metrics import frechet as tslearn_frechet

    found["tslearn.metrics.frechet"] = lambda P, Q: float(tslearn_frechet(P, Q))
    try:
        from frechetlib.discrete_frechet import discrete_frechet

        found["frechetlib.discrete_frechet"] = lambda P, Q: float(discrete_frechet(P, Q)[0])
    except ImportError as exc:
        found["frechetlib.discrete_frechet"] = f"not importable ({exc}); pip install --no-deps frechetlib==0.1.1"
    import similaritymeasures

    found["similaritymeasures.frechet_dist"] = lambda P, Q: float(similaritymeasures.frechet_dist(P, Q))
    import frechetdist

    found["frechetdist.frdist"] = lambda P, Q: float(frechetdist.frdist(P, Q))
    return found


def bench_frechet_single(rng: np.random.Generator, n: int, quick: bool) -> None:
    from cosim_validation.monitor.metrics import frechet

    header(f"discrete Fréchet, one pair, n = m = {n}, 3-D (ns per DP cell, including the Python call)")
    P, Q = walk(rng, n), walk(rng, n)
    cells = float(n * n)
    ours = timed(lambda: frechet(P, Q))
    section = f"frechet_n{n}"
    row(section, "cosim_validation.monitor.metrics.frechet", ours, cells, "cell", None)
    expected = frechet(P, Q)
    for name, fn in _contenders().items():
        if isinstance(fn, str):
            row(section, name, None, cells, "cell", ours, fn)
            continue
        slow = name.startswith(("similaritymeasures", "frechetdist")) and n > 200
        if name.startswith("frechetdist") and n >= 500:
            try:
                fn(P, Q)
                note = "no RecursionError"
            except RecursionError:
                note = "RecursionError with default settings"
            sub = 400
            Ps, Qs = P[:sub], Q[:sub]
            t = once(lambda Ps=Ps, Qs=Qs, fn=fn: fn(Ps, Qs)) * (n * n) / (sub * sub)
            row(section, name, t, cells, "cell", ours, f"{note}; timed at n = {sub}, scaled by cells")
            continue
        if slow and quick:
            row(section, name, None, cells, "cell", ours, "skipped with --quick")
            continue
        value = fn(P, Q)
        assert abs(value - expected) <= 1e-9 * max(1.0, expected), (name, value, expected)
        t = once(lambda fn=fn: fn(P, Q)) if slow else timed(lambda fn=fn: fn(P, Q), repeat=3)
        row(section, name, t, cells, "cell", ours, "single run" if slow else "")


def bench_frechet_batch(rng: np.random.Generator, quick: bool) -> None:
    import numba

    from cosim_validation.monitor.metrics import TrajectoryBatch, frechet
    from cosim_validation.monitor.metrics.frechet_batch import (
        frechet_all_pairs,
        frechet_pairs,
        within_all_pairs,
        within_pairs,
    )

    k, n = 1000, 200
    header(f"discrete Fréchet, {k} pairs of n = m = {n}, 3-D, {numba.get_num_threads()} threads")
    first = [walk(rng, n) for _ in range(k)]
    second = [t + rng.normal(scale=0.5, size=t.shape) for t in first]
    cells = float(k * n * n)
    section = "frechet_batch"
    ours = timed(lambda: frechet_pairs(first, second))
    row(section, "frechet_pairs (lists, packing included)", ours, cells, "cell", None)
    A, B = TrajectoryBatch.from_trajectories(first), TrajectoryBatch.from_trajectories(second)
    row(section, "frechet_pairs (TrajectoryBatch packed once)", timed(lambda: frechet_pairs(A, B)), cells, "cell", ours)
    values = frechet_pairs(A, B)
    for q in (0.1, 0.5, 0.9):
        eps = float(np.quantile(values, q))
        t = timed(lambda eps=eps: within_pairs(A, B, eps))
        row(section, f"within_pairs, eps = {q:.0%} quantile", t, cells, "cell", ours)
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    row(section, "frechet_pairs, 1 thread", timed(lambda: frechet_pairs(A, B)), cells, "cell", ours)
    numba.set_num_threads(old)
    for name, fn in _contenders().items():
        if isinstance(fn, str):
            row(section, name + " (Python loop)", None, cells, "cell", ours, fn)
            continue
        if name.startswith(("similaritymeasures", "frechetdist")):
            sub = 5
        elif name.startswith("tslearn"):
            sub = 50 if quick else 200
        else:
            sub = 200 if quick else k
        pairs = list(zip(first[:sub], second[:sub], strict=True))
        fn(*pairs[0])  # warm-up (numba compile of the contender)
        t = once(lambda fn=fn, pairs=pairs: [fn(p, q) for p, q in pairs]) * k / sub
        note = "" if sub == k else f"timed on {sub} pairs, scaled to {k}"
        row(section, name + " (Python loop)", t, cells, "cell", ours, note)
        assert abs(fn(*pairs[0]) - frechet(*pairs[0])) < 1e-9
    g = 200
    header(f"all pairs within one group: {g} trajectories of n = {n} ({g * (g - 1) // 2} pairs)")
    group = TrajectoryBatch.from_trajectories(first[:g])
    cells_g = float(g * (g - 1) // 2 * n * n)
    t_all = timed(lambda: frechet_all_pairs(group), repeat=3)
    row("frechet_group", "frechet_all_pairs", t_all, cells_g, "cell", None)
    matrix = frechet_all_pairs(group)
    eps = float(np.quantile(matrix[np.triu_indices(g, 1)], 0.05))
    row(
        "frechet_group",
        "within_all_pairs, eps = 5% quantile",
        timed(lambda: within_all_pairs(group, eps), repeat=3),
        cells_g,
        "cell",
        t_all,
    )


# ----------------------------------------------------------------------------------------------- p2t
def bench_p2t(rng: np.random.Generator) -> None:
    from cosim_validation.monitor.metrics import p2t

    header("p2t: 10 000 points to a 1000-sample polyline (ns per point-segment)")
    line = walk(rng, 1000)
    points = line[rng.integers(0, 1000, size=10000)] + rng.normal(scale=2.0, size=(10000, 3))
    work = 10000.0 * 999
    ours = timed(lambda: p2t(points, line))
    row("p2t", "cosim_validation.monitor.metrics.p2t", ours, work, "pair", None)

    def numpy_chunked() -> np.ndarray:
        a, ab = line[:-1], np.diff(line, axis=0)
        inv = 1.0 / (ab * ab).sum(axis=1)
        out = []
        for chunk in np.array_split(points, 50):
            ap = chunk[:, None, :] - a[None]
            t = np.clip((ap * ab[None]).sum(axis=2) * inv, 0.0, 1.0)
            out.append(np.sqrt(((ap - t[:, :, None] * ab[None]) ** 2).sum(axis=2).min(axis=1)))
        return np.concatenate(out)

    assert np.allclose(numpy_chunked(), p2t(points, line))
    row("p2t", "numpy, vectorised over point x segment", timed(numpy_chunked, repeat=3), work, "pair", ours)
    single = points[0]
    row("p2t", "one point (call overhead included)", timed(lambda: p2t(single, line)), 999.0, "pair", None)


# ----------------------------------------------------------------------------------------------- p2m
def heart_mesh(subdivisions: int) -> Any:
    """The project's built-in heart (closed), subdivided to reach the issue's face counts."""
    import trimesh

    from cosim_validation.anatomy.builtin_models import builtin_mesh

    mesh = builtin_mesh("heart")
    tm = trimesh.Trimesh(mesh.vertices_m, mesh.faces, process=False)
    for _ in range(subdivisions):
        tm = tm.subdivide()
    return tm


def _fcpw_scene(mesh: Any) -> Any:
    import fcpw

    scene = fcpw.scene_3D()
    scene.set_object_count(1)
    scene.set_object_vertices(np.asfortranarray(mesh.vertices.astype(np.float32)), 0)
    scene.set_object_triangles(np.asfortranarray(mesh.faces.astype(np.int32)), 0)
    scene.build(fcpw.aggregate_type.bvh_surface_area, True)
    return scene


def bench_p2m_exact(rng: np.random.Generator, quick: bool) -> None:
    import fcpw
    import open3d as o3d
    import trimesh

    from cosim_validation.monitor.metrics import MeshDistance

    mesh = heart_mesh(1)
    n = 20000 if quick else 100000
    header(f"distance to the surface: {n} points, built-in heart subdivided to {len(mesh.faces)} faces")
    lo, hi = mesh.bounds
    points = rng.uniform(lo - 0.03, hi + 0.03, size=(n, 3))
    scene = MeshDistance(mesh.vertices, mesh.faces)
    ours = timed(lambda: scene.distance(points), repeat=3)
    row("p2m_exact", "MeshDistance.distance (open3d)", ours, n, "point", None)
    raw = o3d.t.geometry.RaycastingScene()
    raw.add_triangles(o3d.core.Tensor(mesh.vertices.astype(np.float32)), o3d.core.Tensor(mesh.faces.astype(np.uint32)))
    q32 = o3d.core.Tensor(points.astype(np.float32))
    row(
        "p2m_exact",
        "open3d compute_distance (raw call)",
        timed(lambda: raw.compute_distance(q32), repeat=3),
        n,
        "point",
        ours,
    )
    fscene = _fcpw_scene(mesh)
    qf = np.asfortranarray(points.astype(np.float32))
    radii = np.full(n, np.inf, dtype=np.float32)

    def fcpw_query() -> Any:
        inter = fcpw.interaction_3D_list()
        fscene.find_closest_points(qf, radii, inter)
        return inter

    row("p2m_exact", "fcpw find_closest_points (query only)", timed(fcpw_query, repeat=3), n, "point", ours)
    fd = np.array([i.d for i in fcpw_query()])
    assert np.allclose(fd, scene.distance(points), atol=1e-6)
    sub = 500 if quick else 2000
    t = once(lambda: trimesh.proximity.closest_point(mesh, points[:sub])) * n / sub
    row("p2m_exact", "trimesh.proximity.closest_point", t, n, "point", ours, f"timed on {sub} points, scaled")
    signed = timed(lambda: scene.signed_distance(points), repeat=3)
    row("p2m_exact", "MeshDistance.signed_distance (open3d + exact parity)", signed, n, "point", ours)
    row(
        "p2m_exact",
        "open3d compute_signed_distance (1 float32 ray; wrong sign at rare points)",
        timed(lambda: raw.compute_signed_distance(q32), repeat=3),
        n,
        "point",
        signed,
    )

    big = heart_mesh(2)
    m = 100000 if quick else 1000000
    header(f"point in model: {m} points, built-in heart subdivided to {len(big.faces)} faces")
    pts = rng.uniform(big.bounds[0] - 0.01, big.bounds[1] + 0.01, size=(m, 3))
    big_scene = MeshDistance(big.vertices, big.faces)
    ours_in = timed(lambda: big_scene.contains(pts), repeat=3)
    row("inside", "MeshDistance.contains (InsideTest: exact parity, numba)", ours_in, m, "point", None)
    raw_in = o3d.t.geometry.RaycastingScene()
    raw_in.add_triangles(o3d.core.Tensor(big.vertices.astype(np.float32)), o3d.core.Tensor(big.faces.astype(np.uint32)))
    pts32 = o3d.core.Tensor(pts.astype(np.float32))
    t_o3d = timed(lambda: raw_in.compute_occupancy(pts32), repeat=3)
    row("inside", "open3d compute_occupancy (1 float32 ray; wrong at rare points)", t_o3d, m, "point", ours_in)
    sub = 200 if quick else 1000
    t = once(lambda: big.contains(pts[:sub])) * m / sub
    engine = type(big.ray).__name__  # RayMeshIntersector (pure numpy) unless embreex is installed
    row("inside", f"trimesh.contains ({engine})", t, m, "point", ours_in, f"timed on {sub} points, scaled")

    header("needle segments (10 cm) near the heart: minimum distance to 1 µm and contact")
    k = 200 if quick else 1000
    a = rng.uniform(lo - 0.05, hi + 0.05, size=(k, 3))
    direction = rng.normal(size=(k, 3))
    b = a + 0.1 * direction / np.linalg.norm(direction, axis=1, keepdims=True)
    t = timed(lambda: scene.segment_distance(a, b, tolerance_m=1e-6), repeat=3)
    row("segments", "MeshDistance.segment_distance", t, k, "segment", None)


def bench_grid(rng: np.random.Generator, quick: bool) -> None:
    from cosim_validation.monitor.metrics import MeshDistance
    from cosim_validation.monitor.metrics.distance_grid import SignedDistanceGrid

    mesh = heart_mesh(1)
    scene = MeshDistance(mesh.vertices, mesh.faces)
    threshold = 0.005
    n = 50000 if quick else 200000
    lo, hi = mesh.bounds
    uniform = rng.uniform(lo - 0.02, hi + 0.02, size=(n, 3))
    surface, face = mesh.sample(n, return_index=True)
    near = surface + rng.uniform(-0.01, 0.01, size=(n, 1)) * mesh.face_normals[face]
    # trajectory-ordered queries, as a monitor sees them: smooth paths sampled every 0.5 mm
    paths, steps = n // 1000, 1000
    heading = rng.normal(size=(paths, 1, 3)) + np.cumsum(rng.normal(scale=0.05, size=(paths, steps, 3)), axis=1)
    heading /= np.linalg.norm(heading, axis=2, keepdims=True)
    start = rng.uniform(lo - 0.02, hi + 0.02, size=(paths, 1, 3))
    along = (start + np.cumsum(5e-4 * heading, axis=1)).reshape(-1, 3)
    for spacing in (0.004, 0.002) if quick else (0.004, 0.002, 0.001):
        t0 = time.perf_counter()
        grid = SignedDistanceGrid(scene, spacing_m=spacing, margin_m=0.01)
        build = time.perf_counter() - t0
        header(
            f"p2m grid, spacing {spacing * 1e3:.0f} mm ({grid.values.size} nodes, built in {build:.1f} s), threshold "
            f"{threshold * 1e3:.0f} mm, {len(mesh.faces)} faces; interval half-width <= {grid.max_error_m * 1e3:.3f} mm"
        )
        for label, pts in (
            ("uniform in box + 2 cm", uniform),
            ("within 1 cm of the surface", near),
            ("along smooth paths, 0.5 mm steps", along),
        ):
            section = f"grid_{spacing * 1e3:.0f}mm_{label.split()[0]}"
            exact_t = timed(lambda pts=pts: scene.signed(pts) >= threshold, repeat=3)
            exact = scene.signed(pts) >= threshold
            wrong = int((grid.at_least(pts, threshold) != exact).sum())
            undecided = float(grid.undecided(pts, threshold).mean())
            t_at = timed(lambda pts=pts, grid=grid: grid.at_least(pts, threshold), repeat=3)
            t_bounds = timed(lambda pts=pts, grid=grid: grid.bounds(pts), repeat=3)
            print(f"  [{label}] exact fallback on {undecided:.2%} of points; decisions differing from exact: {wrong}")
            row(section, "grid.at_least (exact decision, with fallback)", t_at, n, "point", None)
            row(section, "grid.bounds (guaranteed interval only)", t_bounds, n, "point", None)
            row(section, "open3d exact signed distance (3 rays) vs at_least", exact_t, n, "point", t_at)
            row(section, "open3d exact signed distance (3 rays) vs bounds", exact_t, n, "point", t_bounds)
            RESULTS[section].append({"undecided_fraction": undecided, "wrong_decisions": wrong, "build_s": build})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller inputs, skip the slowest contender runs")
    parser.add_argument("--json", type=Path, help="also write the results to this file")
    args = parser.parse_args(argv)
    import numba

    print(
        f"python {platform.python_version()}, numba {numba.__version__}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs, numba threads {numba.get_num_threads()}, load average {os.getloadavg()[0]:.1f} "
        f"(shared machine: compare ratios, not absolute times)"
    )
    rng = np.random.default_rng(2024)
    bench_compile()
    bench_frechet_single(rng, 2000, args.quick)
    bench_frechet_single(rng, 100, args.quick)
    bench_frechet_batch(rng, args.quick)
    bench_p2t(rng)
    bench_p2m_exact(rng, args.quick)
    bench_grid(rng, args.quick)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}; threading layer {numba.threading_layer()}")
    if args.json:
        args.json.write_text(json.dumps(RESULTS, indent=1, default=float))
    return 0


if __name__ == "__main__":
    sys.exit(main())
