"""Per-case cost of a live session by the physical robot's interface: the built-in driver against ros2_control.

The first cases of each graph's default suite run through ``cosim session`` twice per graph: once with 1 case and
once with ``--cases`` cases.
The difference of the two sessions' wall times (``summary.json`` ``wall_s``), divided by the extra cases, is the
marginal cost of a case: the graph's start and its shutdown cancel out. Graphs:

- ``built-in``: config/digital_twin.yaml, the emulated physical ER3 Pro behind the project's own driver;
- ``ros2_control``: config/er3pro_ros2_control.yaml, the same emulated arm behind a controller manager stand-in
  (``controller_manager_emulator``), driven by ``ros2_control_driver`` over ``<controller>/joint_trajectory``;
- ``crtk`` (``--crtk``): config/dvrk_psm_crtk.yaml, the dVRK PSM behind its CRTK stand-in (another arm and
  case study: its cost is shown, not compared).

Printed per graph: both wall times, the marginal wall time per case, the simulated time per case (the cases'
``duration_s`` from results.sqlite), and their ratio (a real-time factor; above 1 the session runs faster than
real time), and ros2_control's marginal cost per case against the built-in driver's (the ratio).

Run: ``nice -n 10 python benchmarks/bench_sessions.py [--cases 4] [--crtk]`` (about 3 minutes on 2 cores).

``--node-start N`` instead compares how the nodes start: N one-case sessions of the built-in graph with the nodes
forked from the node host (the default) and N with each node a fresh interpreter (``COSIM_NODE_START=exec``),
alternating; printed are the CPU seconds of everything each session ran (the command, the host, every node: this
process's children's usage) and its wall time, their medians and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = {
    "built-in": ROOT / "config" / "digital_twin.yaml",
    "ros2_control": ROOT / "config" / "er3pro_ros2_control.yaml",
    "crtk": ROOT / "config" / "dvrk_psm_crtk.yaml",
}


def cosim(*args: str, env: dict[str, str] | None = None) -> None:
    """Run the cosim CLI of this checkout; stop with its output when it fails."""
    command = [sys.executable, "-m", "cosim_validation.cli.main", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"cosim {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")


def session(config: Path, cases: int, out: Path) -> tuple[float, float]:
    """Wall time of a session of the first ``cases`` cases of its default suite, and their simulated time [s]."""
    cosim("session", "--config", str(config), "--cases", str(cases), "--out", str(out))
    wall = float(json.loads((out / "summary.json").read_text())["wall_s"])
    with sqlite3.connect(out / "results.sqlite") as db:
        simulated = float(db.execute("SELECT COALESCE(SUM(duration_s), 0) FROM cases").fetchone()[0])
    return wall, simulated


def children_cpu_s() -> float:
    """CPU seconds (user and system) of this process's children that ended, and of theirs."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def node_start(repeat: int) -> None:
    """One-case sessions with forked nodes against fresh interpreters, alternating; medians and their ratio."""
    measured: dict[str, list[tuple[float, float]]] = {"fork": [], "exec": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeat):
            for start in measured:
                out = Path(tmp) / f"{start}-{i}"
                cpu = children_cpu_s()
                cosim("session", "--cases", "1", "--out", str(out), env={**os.environ, "COSIM_NODE_START": start})
                wall = float(json.loads((out / "summary.json").read_text())["wall_s"])
                measured[start].append((children_cpu_s() - cpu, wall))
    print(f"{'nodes':<8} {'CPU per session [s]':>40} {'median':>7} {'wall [s]':>32} {'median':>7}")
    medians = {}
    for start, runs in measured.items():
        cpus, walls = [c for c, _ in runs], [w for _, w in runs]
        medians[start] = (statistics.median(cpus), statistics.median(walls))
        cells = f"{' '.join(f'{c:.1f}' for c in cpus):>40} {medians[start][0]:>7.1f}"
        print(f"{start:<8} {cells} {' '.join(f'{w:.1f}' for w in walls):>32} {medians[start][1]:>7.1f}")
    cpu_ratio, wall_ratio = (medians["fork"][k] / medians["exec"][k] for k in (0, 1))
    print(f"forked against fresh interpreters: CPU ratio {cpu_ratio:.2f}, wall ratio {wall_ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=4, help="cases of the longer session (at least 2)")
    parser.add_argument("--crtk", action="store_true", help="also the dVRK PSM over CRTK")
    parser.add_argument("--node-start", type=int, default=0, metavar="N", help="compare how nodes start, N times")
    args = parser.parse_args()
    if args.cases < 2:
        parser.error("--cases: expected at least 2")
    if args.node_start < 0:
        parser.error("--node-start: expected a count of at least 1")
    if args.node_start:
        node_start(args.node_start)
        return
    graphs = ["built-in", "ros2_control"] + (["crtk"] if args.crtk else [])
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in graphs:
            config = GRAPHS[name]
            one = session(config, 1, Path(tmp) / f"{name}-1")
            many = session(config, args.cases, Path(tmp) / f"{name}-{args.cases}")
            rows.append((name, one, many))
    header = ("graph", "1 case [s]", f"{args.cases} cases [s]", "per case [s]", "simulated [s]", "real-time factor")
    print(f"{header[0]:<14} " + " ".join(f"{h:>{w}}" for h, w in zip(header[1:], (10, 12, 13, 14, 17), strict=True)))
    marginal = {}
    for name, (wall1, _), (wall_n, simulated) in rows:
        per_case = (wall_n - wall1) / (args.cases - 1)
        marginal[name] = per_case
        sim_case = simulated / args.cases
        cells = f"{wall1:>10.1f} {wall_n:>12.1f} {per_case:>13.2f} {sim_case:>14.2f} {sim_case / per_case:>17.2f}"
        print(f"{name:<14} {cells}")
    ratio = marginal["ros2_control"] / marginal["built-in"]
    print(f"ros2_control per case against the built-in driver's: ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
