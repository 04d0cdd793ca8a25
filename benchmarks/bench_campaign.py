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

Run: ``nice -n 10 python benchmarks/bench_campaign.py [--cases 24] [--backends virtual,physical]``.
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
from datetime import datetime
from pathlib import Path

from cosim_validation.anatomy import load_anatomy
from cosim_validation.common.config import load_config, package_root
from cosim_validation.testgen import TestgenRequest, generate_suite, load_testgen_config

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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = make_suite(folder, args.cases)
        print(f"suite: {args.cases} random cases over the left lung; backends: {args.backends}")
        print(f"machine: {os.cpu_count()} cores shared with other work (load average {os.getloadavg()[0]:.1f})")
        results = {w: run(suite, folder, w, args.backends) for w in (1, 2)}
    header = ("workers", "end-to-end [cases/s]", "steady [cases/s]", "per CPU second [cases]")
    print("  ".join(f"{h:>{max(len(h), 7)}}" for h in header))
    for workers, (end_to_end, steady, per_cpu, _) in results.items():
        print(f"{workers:>7}  {end_to_end:>20.3f}  {steady:>16.3f}  {per_cpu:>22.3f}")
    speedup_steady = results[2][1] / results[1][1]
    speedup_end = results[2][0] / results[1][0]
    print(f"speed-up 1 -> 2 workers: {speedup_steady:.2f}x steady state, {speedup_end:.2f}x end to end")
    print(f"load average after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
