"""Wall time and real-time factor of one full five-stage case per robot backend.

The case: the five-stage planner's plan (``straight`` controller, default source, a left-lung target) when
``cosim_validation.controllers`` is installed; otherwise a joint-space five-stage plan built here
(initialization 12 s, approach 6 s, injection 8 s, extraction 8 s, reset 12 s; 46 s at 10 Hz, rest-to-rest
quintic moves). The output says which. Each backend executes it through ``execute_trajectory`` (FK of the
measured joints included); the best of 3 runs counts. Named alternative for MuJoCo: the same simulation
driven by a Python loop that steps the physics one millisecond at a time (``advance(0.001)`` x 100 per
sample) instead of one ``mj_step(nstep=...)`` call per ramp segment; the two must give identical joints.
Also printed: the tip deviation of each robot from the expected tip (FK of the setpoints).

Run: ``python benchmarks/bench_backends.py`` (use ``nice -n 10`` on a shared machine).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from cosim_validation.common.config import ConfigNode, load_config, package_root
from cosim_validation.common.record import Stage, TrajectoryRecord
from cosim_validation.robots.model import Kinematics, RobotConfig
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.virtual import RobotBackend, execute_trajectory

RATE_HZ = 10.0
REPEATS = 3
TARGET_M = (0.44, 0.02, 0.03)  # a left-lung target of the shipped anatomy, in base_link
# stage, joint offset of the stage's end pose from home [rad], duration [s]
LEGS = [
    (Stage.INITIALIZATION, np.array([0.45, 0.25, 0.10, -0.35, 0.20, 0.30, 0.10]), 12.0),
    (Stage.APPROACH, np.array([0.46, 0.30, 0.10, -0.42, 0.20, 0.32, 0.10]), 6.0),
    (Stage.INJECTION, np.array([0.47, 0.36, 0.10, -0.50, 0.20, 0.35, 0.10]), 8.0),
    (Stage.EXTRACTION, np.array([0.46, 0.30, 0.10, -0.42, 0.20, 0.32, 0.10]), 8.0),
    (Stage.RESET, np.zeros(7), 12.0),
]


def planned_case(config: ConfigNode) -> tuple[str, tuple[np.ndarray, np.ndarray, np.ndarray]] | None:
    """The planner's case (description, (t_s, stage, q)), or None where the planner is not installed."""
    try:
        from cosim_validation.controllers import InsertionSetup
    except ImportError:
        return None
    setup = InsertionSetup.from_config(config)
    controller = setup.controller(None)
    plan = controller.plan_case(setup.planning.default_source_m, np.array(TARGET_M))
    what = f"five-stage planner ({controller.name} controller, target {TARGET_M} m)"
    return what, (plan.t_s, plan.stage, plan.q)


def joint_space_plan(home_q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n,) times [s], (n,) stages, (n, 7) setpoints [rad] of the fallback case."""
    q, stage, current = [home_q[None, :]], [int(Stage.INITIALIZATION)], home_q
    flip = home_q + LEGS[2][1] > 1.9  # joints the offsets would take near their 2.09 rad limits
    for st, offset, duration_s in LEGS:
        goal = home_q + np.where(flip, -offset, offset)
        s = np.arange(1, round(duration_s * RATE_HZ) + 1) / round(duration_s * RATE_HZ)
        q.append(current + (10 * s**3 - 15 * s**4 + 6 * s**5)[:, None] * (goal - current))
        stage += [int(st)] * len(s)
        current = goal
    q_all = np.vstack(q)
    return np.arange(len(q_all)) / RATE_HZ, np.array(stage, dtype=np.uint8), q_all


class StepwiseLoop:
    """The named alternative: a backend advanced one physics step per Python call."""

    def __init__(self, backend: RobotBackend, timestep_s: float) -> None:
        self._backend, self._dt = backend, timestep_s

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def advance(self, dt_s: float) -> None:
        for _ in range(round(dt_s / self._dt)):
            self._backend.advance(self._dt)


def best_run(backend: Any, kinematics: Kinematics, plan: tuple[np.ndarray, ...]) -> tuple[float, TrajectoryRecord]:
    times, record = [], None
    for _ in range(REPEATS):
        start = time.perf_counter()
        record = execute_trajectory(backend, kinematics, *plan)
        times.append(time.perf_counter() - start)
    assert record is not None
    return min(times), record


def main() -> int:
    config = load_config(package_root() / "config" / "needle_insertion.yaml")
    robot = RobotConfig.from_config(config["robot"])
    kinematics = robot.kinematics
    case = planned_case(config)
    if case is None:
        case = (
            "joint-space five-stage plan built by this benchmark (planner not installed)",
            joint_space_plan(robot.home_q),
        )
    what, plan = case
    duration_s = float(plan[0][-1] - plan[0][0])
    kinematics.record_arrays(plan[2][:2])  # compile the numba FK outside the timings
    expected_tip_m = kinematics.record_arrays(plan[2]).tip_pos_m
    print(f"case: {what}, {duration_s:.1f} s, {len(plan[0])} samples; best of {REPEATS}; machine shared with others")
    rows: list[tuple[str, float, TrajectoryRecord]] = []
    for name in ("mujoco", "pybullet", "emulated"):
        backend = make_backend(name, config, kinematics)
        rows.append((name, *best_run(backend, kinematics, plan)))
    stepwise = StepwiseLoop(
        make_backend("mujoco", config, kinematics), config["backends"]["physics_timestep_s"].to_float()
    )
    rows.append(("mujoco, python loop per 1 ms step", *best_run(stepwise, kinematics, plan)))
    if not np.array_equal(rows[0][2].q_measured, rows[-1][2].q_measured):
        print("error: the per-step loop gave other joints than the segment loop", file=sys.stderr)
        return 1
    mujoco_wall = rows[0][1]
    print(
        f"{'backend':36s} {'wall [s]':>9s} {'real-time factor':>17s} {'wall / mujoco':>14s}"
        f" {'tip dev. mean / p95 / max [mm]':>32s}"
    )
    for name, wall_s, record in rows:
        dev_mm = 1e3 * np.linalg.norm(record.actual_tip_pos_m - expected_tip_m, axis=1)
        stats = f"{dev_mm.mean():.3f} / {np.percentile(dev_mm, 95):.3f} / {dev_mm.max():.3f}"
        print(f"{name:36s} {wall_s:9.3f} {duration_s / wall_s:16.0f}x {wall_s / mujoco_wall:13.2f}x {stats:>32s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
