"""Campaign throughput: cases per second per core, and the speed-up from 1 to 2 local workers.

The suite: ``--cases`` random targets over the whole left lung (the project's random generator, seed 0),
run through the full per-case pipeline (five-stage plan, execution on the chosen robots, every property,
machine and KPI, compact storage) by ``run_campaign`` with 1 worker, then with 2 worker processes.
Two numbers per run:

* end to end: cases / wall time of the whole ``cosim campaign`` process (world building included: each
  worker loads the anatomy, robot, planner and engines once);
* steady state: cases per second between the first and the last stored case (world building excluded),
  which is what a 10,000-case campaign sees.

Per core: cases per CPU second (user + system time of the campaign process and its workers): what one
core does, whatever else runs on the machine. Named alternative: 1 worker (the serial campaign); the
steady-state ratio is the speed-up. The machine is shared with other work, so wall-clock rates depend on
the load: read the ratio and the per-CPU-second rate.

The physics floor, measured in the same run: the same suite once more as a 1-worker campaign in this process
(``--workers 1`` runs its cases serially in the calling process), timing what happens inside MuJoCo's ``mj_step``
for every robot, and the phases around it (the controller's plan, the robots' and the loop's own work, the monitor,
storage). A case's time over its physics time is what the framework adds to the physics.

Run: ``nice -n 10 python benchmarks/bench_campaign.py [--cases 24] [--backends virtual,physical] [--config C]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import mujoco

from cosim_validation.anatomy import load_anatomy
from cosim_validation.assembly.case_assembly import CaseAssembly
from cosim_validation.assembly.lockstep import Lockstep
from cosim_validation.common.config import load_config, package_root
from cosim_validation.runs.campaign.campaign_runner import CampaignRequest, run_campaign
from cosim_validation.runs.campaign.case_pipeline import close_shared_assemblies
from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config
from cosim_validation.testgen.suite import Suite

CONFIG = package_root() / "config" / "needle_insertion.yaml"


def make_suite(folder: Path, cases: int) -> Path:
    """A random suite of ``cases`` targets over the configured target (the whole left lung)."""
    config = load_config(CONFIG)
    suite, _ = generate_suite(
        load_anatomy(config["anatomy"]),
        load_testgen_config(config["testgen"]),
        TestgenRequest("random", 0.04, 1, count=cases, seed=0),
    )
    path = folder / "suite.parquet"
    suite.write(path)
    return path


def steady_rate(run_dir: Path) -> float:
    """Cases per second between the first and the last stored case."""
    with sqlite3.connect(run_dir / "results.sqlite") as db:
        stamps = sorted(
            datetime.fromisoformat(t.replace("Z", "+00:00")) for (t,) in db.execute("SELECT finished_at FROM timings")
        )
    span_s = (stamps[-1] - stamps[0]).total_seconds()
    return (len(stamps) - 1) / span_s if span_s > 0 else float("nan")


ENGINES = {"virtual": "mujoco", "physical": "emulated"}


class Phases:
    """Seconds spent in each phase of the cases run in this process."""

    def __init__(self) -> None:
        self.seconds = {"physics": 0.0, "plan": 0.0, "execute": 0.0, "check": 0.0}

    def timed(self, phase: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function``, adding its time to ``phase``."""

        def call(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[phase] += time.perf_counter() - started

        return call


def profile_cases(suite_path: Path, folder: Path, backends: str) -> tuple[dict[str, float], int]:
    """Seconds per case in each phase of a 1-worker campaign run in this process (serial, as ``--workers 1`` runs).

    ``physics`` is the time inside MuJoCo's ``mj_step`` (every robot), the floor; ``plan`` the controller's plan,
    ``execute`` the lockstep run on the robots without the physics, ``check`` the monitor (properties, behaviour
    machines, KPIs), ``other`` the rest (storage in SQLite, progress, reading the suite). A 2-case campaign first
    builds the worker's world and loads the kernels; it is not counted.
    """
    suite = Suite.read(suite_path)
    warm = Suite.build(
        suite.source_m[:2],
        suite.target_m[:2],
        suite.cube_index[:2],
        suite.target_depth_m[:2],
        {**suite.metadata, "note": "warm-up"},
    )
    warm_path = folder / "warm.parquet"
    warm.write(warm_path)
    phases = Phases()
    step, run_batch, check, plan = mujoco.mj_step, CaseAssembly.run_batch, CaseAssembly.check, Lockstep._plan
    mujoco.mj_step = phases.timed("physics", step)
    CaseAssembly.run_batch = phases.timed("execute", run_batch)  # type: ignore[method-assign]
    CaseAssembly.check = phases.timed("check", check)  # type: ignore[method-assign]
    Lockstep._plan = phases.timed("plan", plan)  # type: ignore[method-assign]
    roles = tuple(backends.split(","))
    try:
        run_campaign(CampaignRequest(CONFIG, (warm_path,), folder / "profile-warm", roles, workers=1), None)
        phases.seconds = dict.fromkeys(phases.seconds, 0.0)
        started = time.perf_counter()
        run_campaign(CampaignRequest(CONFIG, (suite_path,), folder / "profile", roles, workers=1), None)
        total = time.perf_counter() - started
    finally:
        mujoco.mj_step = step
        CaseAssembly.run_batch = run_batch  # type: ignore[method-assign]
        CaseAssembly.check = check  # type: ignore[method-assign]
        Lockstep._plan = plan  # type: ignore[method-assign]
        close_shared_assemblies()
    per_case = {phase: seconds / len(suite) for phase, seconds in phases.seconds.items()}
    per_case["execute"] -= per_case["physics"] + per_case["plan"]  # the robots' and the loop's own work
    per_case["other"] = total / len(suite) - sum(per_case.values())
    per_case["total"] = total / len(suite)
    return per_case, len(suite)


def run(suite: Path, folder: Path, workers: int, backends: str) -> tuple[float, float, float, int]:
    """(end-to-end cases/s, steady-state cases/s, cases per CPU second, cases) of one campaign process."""
    out = folder / f"workers-{workers}"
    argv = [sys.executable, "-m", "cosim_validation.cli.main", "campaign", "--json", "--config", str(CONFIG)]
    argv += ["--suite", str(suite), "--backends", backends, "--workers", str(workers), "--out", str(out)]
    cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    wall_s = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_s = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    cases = int(json.loads(done.stdout)["last_call"]["cases_run"])
    return cases / wall_s, steady_rate(out), cases / cpu_s, cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=24)
    parser.add_argument("--backends", default="virtual")
    parser.add_argument("--config", type=Path, default=None, help="case study (default: the shipped one)")
    args = parser.parse_args()
    if args.config is not None:  # every phase of the bench reads the one case study
        global CONFIG
        CONFIG = args.config.resolve()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = make_suite(folder, args.cases)
        print(f"suite: {args.cases} random cases over the left lung; backends: {args.backends}")
        print(f"machine: {os.cpu_count()} cores shared with other work (load average {os.getloadavg()[0]:.1f})")
        results = {w: run(suite, folder, w, args.backends) for w in (1, 2)}
        phases, counted = profile_cases(suite, folder, args.backends)
    header = ("workers", "end-to-end [cases/s]", "steady [cases/s]", "per CPU second [cases]")
    print("  ".join(f"{h:>{max(len(h), 7)}}" for h in header))
    for workers, (end_to_end, steady, per_cpu, _) in results.items():
        print(f"{workers:>7}  {end_to_end:>20.3f}  {steady:>16.3f}  {per_cpu:>22.3f}")
    speedup_steady = results[2][1] / results[1][1]
    speedup_end = results[2][0] / results[1][0]
    print(f"speed-up 1 -> 2 workers: {speedup_steady:.2f}x steady state, {speedup_end:.2f}x end to end")
    floor_s = phases["physics"]
    print(f"a 1-worker campaign in this process, {counted} cases, per case against the physics floor (in mj_step):")
    for phase, seconds in phases.items():
        print(f"  {phase:>8}: {seconds * 1e3:8.1f} ms  {seconds / floor_s:5.2f}x the floor")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
