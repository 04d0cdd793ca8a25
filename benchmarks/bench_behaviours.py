"""Behaviour machines on recordings: the replay that skips samples against stepping every sample.

The shipped machines (config/behaviours/: stage_order, no_retraction_during_injection, settles_at_target) on
records of the five-stage planner's cases: each target's plan executed on MuJoCo and on the emulated ER3 Pro.
Named alternative: pushing every sample through ``BehaviourRunner.push`` (what a live monitor does), the replay's
own reference (``step_every_sample``). Both run in this process on the same records; the results are compared
field by field (the bench stops if any differs) and the time per record and the ratio are printed.

Run: ``nice -n 10 python benchmarks/bench_behaviours.py [--targets N]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cosim_validation.anatomy import load_anatomy  # noqa: E402
from cosim_validation.common.config import load_config  # noqa: E402
from cosim_validation.common.record import TrajectoryRecord  # noqa: E402
from cosim_validation.controllers import InsertionSetup  # noqa: E402
from cosim_validation.monitor.statechart.behaviour import load_behaviour, run_behaviours, step_every_sample  # noqa: E402
from cosim_validation.robots.registry import make_backend  # noqa: E402
from cosim_validation.robots.virtual import execute_trajectory  # noqa: E402
from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config  # noqa: E402

NAMES = ("stage_order", "no_retraction_during_injection", "settles_at_target")


def records(count: int) -> list[tuple[TrajectoryRecord, np.ndarray]]:
    """``count`` random targets over the left lung, each run on MuJoCo and on the emulated arm."""
    config = load_config(ROOT / "config" / "needle_insertion.yaml")
    setup = InsertionSetup.from_config(config)
    suite, _ = generate_suite(
        load_anatomy(config["anatomy"]),
        load_testgen_config(config["testgen"]),
        TestgenRequest("random", 0.04, 1, count=count, seed=3),
    )
    kinematics = setup.robot.kinematics
    controller = setup.controller("straight")
    out = []
    for target in suite.target_m:
        plan = controller.plan_case(setup.planning.default_source_m, np.asarray(target))
        for name in ("mujoco", "emulated"):
            backend = make_backend(name, config, kinematics, seed=3)
            out.append((execute_trajectory(backend, kinematics, plan.t_s, plan.stage, plan.q), plan.line.target_m))
            backend.close()
    return out


def timed(function: object, runs: list[tuple[TrajectoryRecord, np.ndarray]], repeat: int) -> tuple[float, list]:
    """The best of ``repeat`` wall times of ``function`` over every record, and its results."""
    best, results = np.inf, []
    for _ in range(repeat):
        started = time.perf_counter()
        results = [function(r, t) for r, t in runs]  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=12, help="random targets (two records each)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = records(args.targets)
    machines = [load_behaviour(name) for name in NAMES]
    samples = sum(r.n_samples for r, _ in runs)
    print(f"{len(runs)} records, {samples} samples, machines: {', '.join(NAMES)}")
    replay_s, replayed = timed(lambda r, t: run_behaviours(machines, r, t), runs, args.repeat)
    push_s, every = timed(lambda r, t: step_every_sample(machines, r, t), runs, args.repeat)
    if [tuple(map(repr, x)) for x in replayed] != [tuple(map(repr, x)) for x in every]:
        print("error: the replay's results differ from stepping every sample")
        return 1
    statuses = sorted({result.status for results in replayed for result in results})
    print(f"results identical on every record ({', '.join(statuses)})")
    print(f"replay (skips samples):  {replay_s / len(runs) * 1e3:7.2f} ms per record")
    print(f"every sample pushed:     {push_s / len(runs) * 1e3:7.2f} ms per record  ({push_s / replay_s:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
