"""Per-case cost of the CoppeliaSim engine (through its stand-in) against MuJoCo, in one run.

The case is that of ``bench_backends.py`` (the five-stage planner's plan, or its joint-space fallback). MuJoCo runs
it in this process (best of 3). The CoppeliaSim backend runs it through the official ZeroMQ client against the
stand-in (``scripts/coppeliasim_standin.py``, a separate process on a free loopback port, the same MuJoCo arm behind
it) with the simulation time step at the physics step (1 ms, the default) and at 10 ms (best of 2 each). Printed:
wall time, wall / MuJoCo, remote calls per case, and the largest joint gap to MuJoCo (the stand-in's physics is
MuJoCo's, so the gap shows the protocol adds no error). The ratio is the cost of the remote API (one round trip per
joint target and per step), not of CoppeliaSim's physics, which the stand-in does not have.

Run: ``python benchmarks/bench_coppeliasim.py`` (use ``nice -n 10`` on a shared machine).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

import numpy as np
import yaml
from bench_backends import joint_space_plan, planned_case

from cosim_validation.common.config import load_config, package_root, parse_config
from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import execute_trajectory

CONFIG = package_root() / "config" / "needle_insertion.yaml"
STANDIN = package_root() / "scripts" / "coppeliasim_standin.py"


def start_standin() -> tuple[subprocess.Popen[str], int]:
    """The stand-in on a free loopback port, and that port."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(package_root()), os.environ.get("PYTHONPATH", "")]))
    process = subprocess.Popen(
        [sys.executable, str(STANDIN), "--config", str(CONFIG), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("listening on tcp://"):
        process.kill()
        raise SystemExit(f"error: the stand-in did not start: {line!r}")
    return process, int(line.rsplit(":", 1)[1])


def timed(backend: Any, kinematics: Any, plan: tuple[np.ndarray, ...], repeats: int) -> tuple[float, TrajectoryRecord]:
    """Best wall time [s] of ``repeats`` runs of ``plan`` on ``backend``, and the last record."""
    times, record = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        record = execute_trajectory(backend, kinematics, *plan)
        times.append(time.perf_counter() - start)
    assert record is not None
    return min(times), record


def main() -> int:
    config = load_config(CONFIG)
    robot = RobotConfig.from_config(config["robot"])
    kinematics = robot.kinematics
    what, plan = planned_case(config) or (
        "joint-space five-stage plan (planner not installed)",
        joint_space_plan(robot.home_q),
    )
    duration_s = float(plan[0][-1] - plan[0][0])
    kinematics.record_arrays(plan[2][:2])  # compile the numba FK outside the timings
    print(f"case: {what}, {duration_s:.1f} s, {len(plan[0])} samples; machine shared with others")
    mujoco = make_backend("mujoco", config, kinematics)
    mujoco_s, reference = timed(mujoco, kinematics, plan, 3)
    print(f"{'engine':34s} {'wall [s]':>9s} {'wall / mujoco':>14s} {'calls / case':>13s} {'max joint gap [rad]':>20s}")
    print(f"{'mujoco (in process)':34s} {mujoco_s:9.3f} {1.0:13.1f}x {0:13d} {0.0:20.1e}")
    process, port = start_standin()
    try:
        for step_s in (0.001, 0.01):
            data = yaml.safe_load(CONFIG.read_text())
            data["backends"]["coppeliasim"] = {"host": "127.0.0.1", "port": port, "time_step_s": step_s}
            node = parse_config(yaml.safe_dump(data), CONFIG.parent / "bench.yaml")
            backend = make_backend("coppeliasim", node, kinematics)
            calls_before = _calls(backend)
            wall_s, record = timed(backend, kinematics, plan, 2)
            calls = (_calls(backend) - calls_before) // 2
            backend.close()
            gap = float(np.abs(record.q_measured - reference.q_measured).max())
            name = f"coppeliasim via stand-in, {step_s * 1e3:g} ms step"
            print(f"{name:34s} {wall_s:9.3f} {wall_s / mujoco_s:13.1f}x {calls:13d} {gap:20.1e}")
    finally:
        process.terminate()
        process.wait(timeout=10)
    return 0


def _calls(backend: Any) -> int:
    """Remote calls the backend's client has sent so far."""
    return int(backend._link._client.sendCnt)


if __name__ == "__main__":
    sys.exit(main())
