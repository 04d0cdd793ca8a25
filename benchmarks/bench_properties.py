"""Throughput of the property monitor: every shipped property offline, online, and rtamt on a shared property.

Run from the repository root with the environment sourced, pinned to one core::

    taskset -c 0 nice -n 10 python benchmarks/bench_properties.py [--cases 40] [--scale 100]

Self-collision is the robot's own check (robot.SelfCollision: a capsule broad phase with a Lipschitz bound
along the trace, MuJoCo contacts where it cannot prove a sample free).
Traces: the nominal synthetic needle insertion of the tests, sampled at 10 Hz x ``scale`` (1 kHz for
scale 100: 6,401 samples per case), with the heart as a triangle mesh (icosphere, 1,280 faces, exact
open3d distances through metrics.MeshDistance). Numbers are samples per second on one core, measured
in this run; ratios compare implementations in the same run. rtamt is the STL library from PyPI
(discrete-time offline specification, Python implementation).
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("NUMBA_NUM_THREADS", "1")  # one core: no numba worker threads
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cosim_validation.common.config import load_config, resolve_resource
from cosim_validation.common.record import RobotRole, TrajectoryRecord
from cosim_validation.monitor.properties import MonitorContext, PropertySet, PropertySpec, record_samples
from cosim_validation.monitor.properties.kpis.specs import KpiSpec
from cosim_validation.monitor.properties.offline.evaluation import evaluate_run
from cosim_validation.monitor.properties.online.monitor import OnlineMonitor
from cosim_validation.robots.model import RobotConfig, SelfCollision
from test.monitor.properties.rtamt_anchor import OURS, rtamt_robustness
from test.monitor.properties.traces import TARGET, heart_mesh_obstacle, insertion_case


def best_of(repeats: int, work: Callable[[], object]) -> float:
    """Smallest wall time of ``repeats`` runs [s]."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def offline_rate(
    props: PropertySet, cases: list[tuple[TrajectoryRecord, TrajectoryRecord]], ctx: MonitorContext
) -> float:
    """Samples per second of :func:`evaluate_run` over ``cases`` (best of 3), compiled once as a campaign does."""
    samples = sum(r.n_samples for r, _ in cases)
    compiled = props.compile(ctx)
    merged = props.with_context(ctx)
    seconds = best_of(3, lambda: [evaluate_run(compiled, r, merged, e, props.kpis) for r, e in cases])
    return samples / seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=40, help="cases per measurement")
    parser.add_argument("--scale", type=int, default=100, help="sampling rate multiplier of the 10 Hz case")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    shipped = PropertySet.load("config/properties.yaml")
    joints = tuple(f"joint{i + 1}" for i in range(7))
    config = load_config(resolve_resource("config/needle_insertion.yaml"))
    kinematics = RobotConfig.from_config(config["robot"]).kinematics
    self_collision = SelfCollision(kinematics.with_needle_length(0.1)).in_collision  # the robot's MuJoCo check
    obstacles = {"heart": heart_mesh_obstacle()}
    context = MonitorContext(joints, 0.1, obstacles, target_m=TARGET, self_collision=self_collision)  # type: ignore[arg-type]
    cases = [insertion_case(seed=i, scale=args.scale) for i in range(args.cases)]
    n = sum(r.n_samples for r, _ in cases)
    print(f"{args.cases} cases x {cases[0][0].n_samples} samples = {n} samples ({10 * args.scale} Hz)")
    evaluate_run(shipped, cases[0][0], context, cases[0][1])  # warm the numba cache

    def used_kpis(specs: tuple[PropertySpec, ...]) -> tuple[KpiSpec, ...]:
        return tuple(k for k in shipped.kpis if any(f"kpi({k.name})" in s.expression for s in specs))

    print("\noffline, one property at a time, with the KPIs it bounds (samples/s):")
    first = evaluate_run(shipped, cases[0][0], context, cases[0][1])
    for spec in shipped.properties:
        one = PropertySet((spec,), used_kpis((spec,)), shipped.constants)
        verdict = next(v for v in first.verdicts if v.property == spec.name)
        note = f"  ({verdict.status.label}: {verdict.reason})" if verdict.reason else f"  ({verdict.status.label})"
        print(f"  {spec.name:46s} {offline_rate(one, cases, context):>14,.0f}{note}")
    properties = PropertySet(shipped.properties, used_kpis(shipped.properties), shipped.constants)
    all_rate = offline_rate(properties, cases, context)
    print(f"  {'ALL shipped properties':46s} {all_rate:>14,.0f}")
    mine = tuple(p for p in shipped.properties if p.name != "no_self_collision")
    without = PropertySet(mine, used_kpis(mine), shipped.constants)
    print(f"  {'ALL but no_self_collision (robot.SelfCollision)':46s} {offline_rate(without, cases, context):>14,.0f}")
    everything = offline_rate(shipped, cases, context)
    print(f"  {'ALL shipped properties + all shipped KPIs':46s} {everything:>14,.0f}")
    print("  (the deviation KPIs compare the whole run with the whole plan: O(n^2) Fréchet and p2t)")

    record, expected = cases[0]
    samples = [s for pair in zip(record_samples(expected), record_samples(record), strict=True) for s in pair]

    def online() -> None:
        monitor = OnlineMonitor(shipped, context, RobotRole.VIRTUAL)
        for s in samples:
            monitor.push(s)
        monitor.finish()

    online_rate = record.n_samples / best_of(1, online)
    print(
        f"\nonline monitor, all shipped properties + KPIs: {online_rate:,.0f} robot samples/s (+ as many plan samples)"
    )

    print("\nshared property with rtamt:", OURS.expression)
    anchor = PropertySet((OURS,))
    ours = offline_rate(anchor, cases, context)
    devs = [(r.t_s, np.linalg.norm(r.tip_pos_m - e.tip_pos_m, axis=1)) for r, e in cases[:4]]
    rt_samples = sum(t.size for t, _ in devs)
    rt = rt_samples / best_of(1, lambda: [rtamt_robustness(t, d) for t, d in devs])
    print(f"  ours (dist terms + operators): {ours:>14,.0f} samples/s")
    print(f"  rtamt (operators only)       : {rt:>14,.0f} samples/s")
    print(f"  ratio ours / rtamt           : {ours / rt:>14,.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
