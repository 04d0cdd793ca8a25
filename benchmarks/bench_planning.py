"""Planning time per case, IK reach rate and refusals on the left-lung grid suite, per controller.

The suite: one target per 20 mm cube of the left lung (cube centres inside the lung, seed 000's finest
granularity), the default source of config/needle_insertion.yaml. Each controller plans every case (IK,
time scaling, collision checks; the guarded one also searches directions). Reported: reach rate (tip at the
target within 0.1 mm in the expected trajectory), refusals by reason, planning time per case (mean, p95),
and cases whose planned needle enters the heart.

Named alternative: the same straight planner with every sample collision-checked (no covering of the
motion by a subset of samples, ``MotionChecker(cover_step_m=0)``); the ratio is printed. Also printed: the
ratio of the real duration of the planned motion to its planning time.

Run: ``python benchmarks/bench_planning.py`` (use ``nice -n 10`` on a shared machine).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from cosim_validation.config import load_config, package_root
from cosim_validation.controllers import Controller, InsertionSetup
from cosim_validation.planning import MotionChecker, PlanningError
from cosim_validation.record import Stage

GRANULARITY_M = 0.02


def lung_grid(setup: InsertionSetup) -> np.ndarray:
    """(k, 3) centres of the 20 mm cubes of the left lung's bounding box that lie inside the lung."""
    lo, hi = setup.scene.model("left_lung").bounds_m
    axes = [np.arange(lo[i] + GRANULARITY_M / 2, hi[i], GRANULARITY_M) for i in range(3)]
    points = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    return points[np.asarray(setup.world.targets["left_lung"].contains(points))]


@dataclass
class SuiteResult:
    """Planning times [s] of every case, durations [s] of the planned motions, counts."""

    times: np.ndarray
    durations: np.ndarray
    reached: int
    refused: dict[str, int]
    heart: int


def run_suite(setup: InsertionSetup, controller: Controller, targets: np.ndarray) -> SuiteResult:
    """Plan every target; reach, refusals, timings, heart entries."""
    source = setup.planning.default_source_m
    kin = setup.robot.kinematics
    times, durations, refused = [], [], Counter[str]()
    reached = heart = 0
    for target in targets:
        started = time.perf_counter()
        try:
            plan = controller.plan_case(source, target)
        except PlanningError as exc:
            times.append(time.perf_counter() - started)
            refused[exc.reason] += 1
            continue
        times.append(time.perf_counter() - started)
        durations.append(plan.duration_s)
        tip = kin.tip_pose(plan.q_rad[plan.stage_indices(Stage.INJECTION)[-1]]).pos_m
        reached += bool(np.linalg.norm(tip - target) <= 1e-4)
        heart += bool(setup.planner.needle_clearance(plan.q_rad, 1e-9).min() <= 0.0)
    return SuiteResult(np.array(times), np.array(durations), reached, dict(refused), heart)


def main() -> int:
    setup = InsertionSetup.from_config(load_config(package_root() / "config" / "needle_insertion.yaml"))
    targets = lung_grid(setup)
    print(f"suite: {len(targets)} grid targets in the left lung ({GRANULARITY_M * 1e3:.0f} mm cubes), "
          f"source {setup.planning.default_source_m.tolist()}")  # fmt: skip
    setup.controller("straight").plan_case(setup.planning.default_source_m, targets[0])  # compile numba kernels
    results = {name: run_suite(setup, setup.controller(name), targets) for name in ("straight", "guarded")}
    exact_checker = MotionChecker(setup.robot.kinematics, setup.world, setup.planning.arm_clearance_m, cover_step_m=0.0)
    object.__setattr__(setup.planner, "checker", exact_checker)  # the named alternative: every sample checked
    results["straight, every sample checked"] = run_suite(setup, setup.controller("straight"), targets)
    print(f"{'controller':32s} {'reached':>9s} {'rate':>7s} {'heart':>6s} {'plan ms mean / p95':>20s}"
          f" {'motion s / plan s':>18s}  refused")  # fmt: skip
    for name, r in results.items():
        rate = r.reached / len(targets)
        timing = f"{r.times.mean() * 1e3:9.1f} / {np.percentile(r.times, 95) * 1e3:7.1f}"
        speed = r.durations.sum() / r.times.sum()
        print(f"{name:32s} {r.reached:9d} {rate:7.1%} {r.heart:6d} {timing} {speed:17.0f}x  {r.refused}")
    ratio = results["straight, every sample checked"].times.sum() / results["straight"].times.sum()
    print(f"straight planner: every-sample checks take {ratio:.2f}x the time of covering checks")
    return 0


if __name__ == "__main__":
    sys.exit(main())
