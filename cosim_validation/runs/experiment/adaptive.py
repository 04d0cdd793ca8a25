"""Adaptive refinement (beyond [Actuators 2025], which refines uniformly) and its comparison at equal budgets.

Round 0 runs one target per non-empty cube of a coarse grid. Each later round halves the cube edge inside
the cubes worth a closer look: cubes where a case violated the safety property, and cubes whose status
(violating / normal) differs from a face neighbour's of the same round, i.e. the boundary of the
violating zone. A child cube's target comes from the project's grid generator at the child granularity
(its 8 children are exactly the parent's halves, the grids sharing their origin), so refinement uses the
same discretization as the uniform grid. It stops at ``rounds`` or at ``max_cases`` executed.

Compared at the same number of executed cases B: a uniform grid (one target per cube, at the granularity
whose cube count is closest to B) and the random baseline (B targets). Measures: violations found,
violations per case executed, and distinct violating cubes at the finest adaptive granularity (how much of
the violating zone each method maps).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from cosim_validation.runs.campaign.campaign_runner import CampaignRequest, run_campaign
from cosim_validation.runs.campaign.results_db import ResultsDB
from cosim_validation.runs.experiment.research_questions import RunOptions, check_out_dir
from cosim_validation.runs.experiment.suite_maker import SuiteMaker
from cosim_validation.testgen import CubeClass, Suite, TestgenRequest, build_region, discretize

Cube = tuple[int, int, int]
_NEIGHBOURS = ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))


@dataclass(frozen=True)
class AdaptiveSpec:
    """Region, start granularity [m], rounds and budget of the adaptive experiment."""

    region: str | None
    start_granularity_m: float
    rounds: int
    max_cases: int
    seed: int = 0


ADAPTIVE: dict[bool, AdaptiveSpec] = {
    False: AdaptiveSpec(None, 0.04, 3, 1500),
    True: AdaptiveSpec("heart_side_7pct", 0.02, 2, 120),
}


def refine(status: dict[Cube, bool]) -> list[Cube]:
    """Cubes to refine: violating ones, and ones whose status differs from a face neighbour's (sorted).

    Args:
        status: Whether each cube of one round is violating, by cube index (i, j, k) at that round's
            granularity; cubes without a completed case are absent (an absent neighbour does not differ).
    """
    chosen = set()
    for cube, violating in status.items():
        if violating:
            chosen.add(cube)
            continue
        for d in _NEIGHBOURS:
            neighbour = (cube[0] + d[0], cube[1] + d[1], cube[2] + d[2])
            if status.get(neighbour, violating) != violating:
                chosen.add(cube)
                break
    return sorted(chosen)


def _violations(run_dir: Path) -> dict[str, bool]:
    """Per completed case: whether the safety property is violated on the first executed robot."""
    with ResultsDB.open(run_dir / "results.sqlite") as db:
        safety = db.meta()["safety_property"]
        done = {c.test_id for c in db.cases() if c.outcome == "completed"}
        rows = [v for v in db.verdicts() if v.property == safety and v.robot != "expected" and v.test_id in done]
    first_robot = min((v.robot for v in rows), default="virtual")
    return {v.test_id: v.status == "violated" for v in rows if v.robot == first_robot}


def _subset(suite: Suite, keep: np.ndarray, extra: dict[str, Any]) -> Suite:
    meta = {k: v for k, v in suite.metadata.items() if k not in ("suite_id", "metrics", "gave_up_cubes")}
    meta |= {"metrics": {"valid_cases": int(keep.sum())}, "subset_of": suite.suite_id} | extra
    return Suite.build(
        suite.source_m[keep], suite.target_m[keep], suite.cube_index[keep], suite.target_depth_m[keep], meta
    )


def _campaign(suite_path: Path, out: Path, options: RunOptions, progress: TextIO | None) -> Path:
    request = CampaignRequest(
        options.config_path, (suite_path,), out, ("virtual",), options.executor, options.address, options.workers
    )
    request = replace(request, resume=options.resume and (out / "results.sqlite").exists())
    run_campaign(request, progress)
    return out


def _round_suite(maker: SuiteMaker, spec: AdaptiveSpec, level: int, parents: list[Cube] | None, budget: int) -> Suite:
    """One target per non-empty child of ``parents`` (all cubes in round 0), at most ``budget``, evenly chosen."""
    g = spec.start_granularity_m / 2**level
    full, _ = maker.make(TestgenRequest("grid", g, 1, region=spec.region, seed=spec.seed + level))
    keep = np.ones(len(full), dtype=bool)
    if parents is not None:
        wanted = {tuple(p) for p in parents}
        keep = np.array([tuple(int(x) // 2 for x in c) in wanted for c in full.cube_index])
    index = np.flatnonzero(keep)
    keep[:] = False
    keep[index[evenly(len(index), budget)]] = True
    extra = {"generator": "adaptive", "round": level, "granularity_m": g, "refined_parents": len(parents or [])}
    return _subset(full, keep, extra)


def run_adaptive(spec: AdaptiveSpec, options: RunOptions, progress: TextIO | None = sys.stderr) -> dict[str, Any]:
    """Adaptive rounds, then the uniform grid and random baselines at the same budget; the comparison.

    Args:
        spec: Region, start granularity [m], rounds and case budget (:data:`ADAPTIVE`).
        options: How the campaigns run; each round's and baseline's suite and run directory go into
            ``options.out_dir / "adaptive"``.
        progress: Where the campaigns' progress lines go (a text stream), or None for none.

    Returns:
        ``budget_cases`` (the cases the rounds ran), ``finest_granularity_mm`` [mm], ``rounds`` (one entry per
        round), and the tallies ``adaptive``, ``uniform_grid`` and ``random``.
    """
    folder = options.out_dir / "adaptive"
    check_out_dir(options.out_dir, options.resume, folder / "round-0" / "results.sqlite", resume_needs_run=False)
    maker = SuiteMaker.from_config(options.config_path)
    folder.mkdir(parents=True, exist_ok=True)
    parents: list[Cube] | None = None
    spent, found, rounds = 0, {}, []
    for level in range(spec.rounds + 1):
        if spent >= spec.max_cases or parents == []:
            break
        suite = _round_suite(maker, spec, level, parents, spec.max_cases - spent)
        path = folder / f"round-{level}.parquet"
        suite.write(path)
        violated = _violations(_campaign(path, folder / f"round-{level}", options, progress))
        status: dict[Cube, bool] = {}
        for case in suite:
            if case.test_id in violated:
                cube = (int(case.cube_index[0]), int(case.cube_index[1]), int(case.cube_index[2]))
                status[cube] = status.get(cube, False) or violated[case.test_id]
                found[case.test_id] = (case.target_m, violated[case.test_id])
        parents = refine(status)
        spent += len(suite)
        rounds.append(
            {
                "round": level,
                "granularity_mm": 1e3 * spec.start_granularity_m / 2**level,
                "cases": len(suite),
                "violating_cubes": sum(status.values()),
                "refine_next": len(parents),
            }
        )
    finest = spec.start_granularity_m / 2 ** (len(rounds) - 1)
    results = {"adaptive": _tally(found, spent, maker, spec, finest), "rounds": rounds}
    results["uniform_grid"] = _baseline(maker, spec, options, "grid", spent, finest, progress)
    results["random"] = _baseline(maker, spec, options, "random", spent, finest, progress)
    return {"budget_cases": spent, "finest_granularity_mm": 1e3 * finest} | results


def _tally(
    found: dict[str, tuple[np.ndarray, bool]], cases: int, maker: SuiteMaker, spec: AdaptiveSpec, finest: float
) -> dict[str, Any]:
    region, _ = build_region(maker.scene, maker.testgen, spec.region)
    grid, _ = discretize(region, finest)
    hits = np.array([t for t, bad in found.values() if bad]).reshape(-1, 3)
    cubes = {tuple(c) for c in grid.cube_index(hits).tolist()}
    n = sum(bad for _, bad in found.values())
    return {
        "cases": cases,
        "completed": len(found),
        "violations": n,
        "violations_per_case": n / cases if cases else 0.0,
        "violating_cubes_at_finest": len(cubes),
    }


def _uniform_granularity(maker: SuiteMaker, spec: AdaptiveSpec, budget: int) -> float:
    """The coarsest cube edge (start / 2^x, x in steps of 1/8) with at least ``budget`` non-empty cubes."""
    region, _ = build_region(maker.scene, maker.testgen, spec.region)
    g = spec.start_granularity_m
    for x in np.arange(0.0, spec.rounds + 2.0, 0.125):
        g = float(spec.start_granularity_m / 2**x)
        _, classes = discretize(region, g)
        if int(np.sum(classes != CubeClass.EMPTY)) >= budget:
            break
    return g


def evenly(n: int, budget: int) -> np.ndarray:
    """(n,) bool: ``min(n, budget)`` of n items, evenly spaced (first and last included).

    Args:
        n: How many items there are.
        budget: How many to keep at most.
    """
    keep = np.zeros(n, dtype=bool)
    keep[np.unique(np.linspace(0, n - 1, min(n, budget)).round().astype(int))] = True
    return keep


def _baseline(
    maker: SuiteMaker,
    spec: AdaptiveSpec,
    options: RunOptions,
    method: str,
    budget: int,
    finest: float,
    progress: TextIO | None,
) -> dict[str, Any]:
    """A uniform grid or random suite of about ``budget`` cases, run and tallied like the adaptive rounds."""
    g = _uniform_granularity(maker, spec, budget) if method == "grid" else spec.start_granularity_m
    count = None if method == "grid" else budget
    suite, _ = maker.make(TestgenRequest(method, g, 1, count, spec.region, spec.seed))
    if len(suite) > budget:  # a uniform grid one cube finer than the budget, thinned evenly to it
        suite = _subset(suite, evenly(len(suite), budget), {"budget": budget})
    path = options.out_dir / "adaptive" / f"{method}-baseline.parquet"
    suite.write(path)
    violated = _violations(_campaign(path, options.out_dir / "adaptive" / f"{method}-baseline", options, progress))
    found = {c.test_id: (c.target_m, violated[c.test_id]) for c in suite if c.test_id in violated}
    return _tally(found, len(suite), maker, spec, finest) | {"granularity_mm": 1e3 * g}
