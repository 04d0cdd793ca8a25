"""Per-case cost of a dVRK PSM and a Raven-II case against an ER3 Pro case, in the same run (issue 17).

Each robot's case study (config/needle_insertion.yaml, config/dvrk_psm_insertion.yaml,
config/raven2_insertion.yaml) plans one insertion case (``straight`` controller) and runs it through
``CaseAssembly.run_batch`` on MuJoCo and the emulated arm, then the monitor checks the records: what a campaign
worker spends per case. The named alternative is the ER3 Pro's case; the ratio says what another robot costs per
case (its plan length and its servo differ, so the cost per simulated second is printed too). Best of 3 runs after
one warm-up (numba compilation, model loading).

Run: ``python benchmarks/bench_robots.py`` (use ``nice -n 10`` on a shared machine).
"""

from __future__ import annotations

import time

import numpy as np

from cosim_validation.assembly import AssemblySpec, CaseAssembly
from cosim_validation.common.config import resolve_resource
from cosim_validation.testgen import TestCase

REPEATS = 3
#: robot -> (configuration, source, target) of one case [m]; PSM and Raven-II insert through the RCM (the origin)
CASES = {
    "xmate_er3_pro": ("config/needle_insertion.yaml", None, (0.44, 0.02, 0.03)),
    "dvrk_psm": ("config/dvrk_psm_insertion.yaml", "rcm", (0.0303, 0.0063, -0.19996)),
    "raven2": ("config/raven2_insertion.yaml", "rcm", (0.0303, 0.0063, -0.19996)),
}


def case_of(assembly: CaseAssembly, source: str | None, target: tuple[float, float, float]) -> TestCase:
    """The benchmark case: its source is the default one, or 15 mm from the RCM towards the target."""
    target_m = np.array(target)
    if source == "rcm":
        source_m = 0.015 * target_m / np.linalg.norm(target_m)
    else:
        source_m = np.asarray(assembly.setup.planning.default_source_m, dtype=np.float64)
    z = np.zeros(3, dtype=np.int64)
    return TestCase("bench-0000001", "bench", "base_link", source_m, target_m, z, 0.0, "manual", 1, 0.0)


def measure(robot: str) -> tuple[float, float, str]:
    """(best wall time per case [s], simulated duration [s], outcome) of the robot's case."""
    path, source, target = CASES[robot]
    assembly = CaseAssembly(AssemblySpec(str(resolve_resource(path)), engines=("mujoco", "emulated")))
    try:
        case = case_of(assembly, source, target)
        assembly.check(assembly.run_batch(case), case.target_m)  # warm-up
        best, duration, outcome = np.inf, 0.0, ""
        for _ in range(REPEATS):
            started = time.perf_counter()
            batch = assembly.run_batch(case)
            assembly.check(batch, case.target_m)
            best = min(best, time.perf_counter() - started)
            duration, outcome = float(batch.records[0].t_s[-1]), batch.run.outcome
        return best, duration, outcome
    finally:
        assembly.close()


def main() -> None:
    results = {robot: measure(robot) for robot in CASES}
    reference, reference_duration, _ = results["xmate_er3_pro"]
    header = f"{'robot':<14} {'outcome':<10} {'case [s]':>9} {'simulated [s]':>14} {'wall/sim':>9}"
    print(f"{header} {'ratio vs ER3 Pro':>17}")
    for robot, (wall, simulated, outcome) in results.items():
        ratio = wall / reference
        print(f"{robot:<14} {outcome:<10} {wall:9.3f} {simulated:14.1f} {wall / simulated:9.4f} {ratio:17.2f}")
    print(f"(ER3 Pro case: {reference_duration:.1f} s simulated; best of {REPEATS}, plan + 2 robots + monitor)")


if __name__ == "__main__":
    main()
