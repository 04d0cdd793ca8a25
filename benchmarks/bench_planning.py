"""Planning time per case, IK reach rate and refusals on the left-lung grid suite, per controller.

The suite: the coverage generator's grid suite of the left lung (20 mm cubes, seed 000's finest granularity,
k = 1, sources drawn from ``testgen.source_region``). Each controller plans every case (IK,
time scaling, collision checks; the guarded one also searches directions). Reported: reach rate (tip at the
target within 0.1 mm in the expected trajectory), refusals by reason, planning time per case (mean, p95),
and cases whose planned needle enters the heart.

Named alternative: the same straight planner querying every arm and needle point against the skin mesh
(``MotionChecker(box_prefilter=False)``; by default points far from the skin's bounding box are not queried);
the ratio is printed. Also printed: the
ratio of the real duration of the planned motion to its planning time.

Run: ``python benchmarks/bench_planning.py`` (use ``nice -n 10`` on a shared machine).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from cosim_validation.common.config import load_config, package_root
from cosim_validation.common.record import Stage
from cosim_validation.controllers import Controller, InsertionSetup
from cosim_validation.controllers.planning import MotionChecker, PlanningError
from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config

GRANULARITY_M = 0.02


@dataclass
class SuiteResult:
    """Planning times [s] of every case, durations [s] of the planned motions, counts."""

    times: np.ndarray
    durations: np.ndarray
    reached: int
    refused: dict[str, int]
    heart: int


def run_suite(setup: InsertionSetup, controller: Controller, sources: np.ndarray, targets: np.ndarray) -> SuiteResult:
    """Plan every case; reach, refusals, timings, heart entries."""
    kin = setup.robot.kinematics
    times, durations, refused = [], [], Counter[str]()
    reached = heart = 0
    for source, target in zip(sources, targets, strict=True):
        started = time.perf_counter()
        try:
            plan = controller.plan_case(source, target)
        except PlanningError as exc:
            times.append(time.perf_counter() - started)
            refused[exc.reason] += 1
            continue
        times.append(time.perf_counter() - started)
        durations.append(plan.duration_s)
        tip = kin.tip_pose(plan.q[plan.stage_indices(Stage.INJECTION)[-1]]).pos_m
        reached += bool(np.linalg.norm(tip - target) <= 1e-4)
        heart += bool(setup.planner.needle_clearance(plan.q, 1e-9).min() <= 0.0)
    return SuiteResult(np.array(times), np.array(durations), reached, dict(refused), heart)


def main() -> int:
    root = load_config(package_root() / "config" / "needle_insertion.yaml")
    setup = InsertionSetup.from_config(root)
    request = TestgenRequest("grid", GRANULARITY_M, 1, seed=0)
    suite, _ = generate_suite(setup.scene, load_testgen_config(root["testgen"]), request)
    sources = np.array([case.source_m for case in suite])
    targets = np.array([case.target_m for case in suite])
    print(f"suite: {len(suite)} cases, grid suite of the left lung ({GRANULARITY_M * 1e3:.0f} mm cubes, k = 1)")
    setup.controller("straight").plan_case(sources[0], targets[0])  # compile numba kernels
    results = {name: run_suite(setup, setup.controller(name), sources, targets) for name in ("straight", "guarded")}
    unfiltered = MotionChecker(setup.robot.kinematics, setup.world, setup.planning.arm_clearance_m, box_prefilter=False)
    object.__setattr__(setup.planner, "checker", unfiltered)  # the named alternative: every point queried
    results["straight, every point queried"] = run_suite(setup, setup.controller("straight"), sources, targets)
    print(
        f"{'controller':32s} {'reached':>9s} {'rate':>7s} {'heart':>6s} {'plan ms mean / p95':>20s}"
        f" {'motion s / plan s':>18s}  refused"
    )
    for name, r in results.items():
        rate = r.reached / len(targets)
        timing = f"{r.times.mean() * 1e3:9.1f} / {np.percentile(r.times, 95) * 1e3:7.1f}"
        speed = r.durations.sum() / r.times.sum()
        print(f"{name:32s} {r.reached:9d} {rate:7.1%} {r.heart:6d} {timing} {speed:17.0f}x  {r.refused}")
    ratio = results["straight, every point queried"].times.sum() / results["straight"].times.sum()
    print(f"straight planner: querying every point takes {ratio:.2f}x the time of the bounding-box prefilter")
    return 0


if __name__ == "__main__":
    sys.exit(main())
