"""Per-case cost of the ``ros2_control`` robot (through the controller manager stand-in) against the in-process one.

The same cases, planned by the built-in ``straight`` controller, through the one assembly (``CaseAssembly.run_batch``)
on two physical robots, in one run:

1. ``emulated``: the emulated ER3 Pro in this process (the named alternative);
2. ``ros2_control``: the same emulated arm behind ``controller_manager_emulator`` (a separate process in a ROS
   domain of its own, its update loop at 250 Hz, as rokae_ros2's real controller manager), every setpoint one
   trajectory to ``arm_controller`` and one ``/joint_states`` answer over DDS.

Each variant runs one warm-up case (numba, discovery), then the cases; ``--repeats`` runs, the fastest counts.
Printed: wall time per case and per setpoint, the ratio to the in-process robot, and the largest joint gap
between the two (the arm behind both is the same: the gap shows the interface adds no error). The ratio is the
cost of the Python ROS 2 round trips of every setpoint, not of a real arm, which answers at its own pace.

Run: ``nice -n 10 python benchmarks/bench_ros2_control.py [--cases 5] [--repeats 2]``.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).parent))

from bench_controllers import cases, standin  # noqa: E402

from cosim_validation.assembly import AssemblySpec, CaseAssembly  # noqa: E402
from cosim_validation.testgen.test_case import TestCase  # noqa: E402

CONFIG = ROOT / "config" / "needle_insertion.yaml"


def run(physical: str, suite: list[TestCase]) -> tuple[float, int, list[np.ndarray]]:
    """Wall time of the cases after a warm-up case, setpoints answered, and each case's measured joints."""
    assembly = CaseAssembly(AssemblySpec(str(CONFIG), engines=(physical,), controller="straight"))
    try:
        assembly.run_batch(suite[0])
        wall, setpoints, joints = 0.0, 0, []
        for case in suite:
            start = time.perf_counter()
            batch = assembly.run_batch(case)
            wall += time.perf_counter() - start
            setpoints += batch.run.executed
            joints.append(batch.records[-1].q_measured)
    finally:
        assembly.close()
    return wall, setpoints, joints


def controller_manager() -> contextlib.AbstractContextManager[None]:
    """The controller manager stand-in in a ROS domain of its own, which this process joins while it runs."""
    module = "cosim_validation.live.nodes.controller_manager_emulator"
    return standin(module, f"config:={CONFIG}", "tracker_namespace:=/tracker")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    suite = cases(args.cases)
    local = min((run("emulated", suite) for _ in range(args.repeats)), key=lambda r: r[0])
    with controller_manager():
        remote = min((run("ros2_control", suite) for _ in range(args.repeats)), key=lambda r: r[0])
    gap = max(float(np.max(np.abs(a - b))) for a, b in zip(local[2], remote[2], strict=True))
    print(f"{'physical robot':<32} {'cases':>5} {'setpoints':>9} {'s/case':>8} {'ms/setpoint':>11}")
    for label, (wall, setpoints, _) in (("emulated, in-process", local), ("ros2_control (stand-in, DDS)", remote)):
        print(f"{label:<32} {len(suite):>5} {setpoints:>9} {wall / len(suite):>8.3f} {wall / setpoints * 1e3:>11.3f}")
    print(f"ros2_control per case against the in-process robot: ratio {remote[0] / local[0]:.2f}")
    print(f"largest measured-joint gap between the two: {gap:.2e} rad")


if __name__ == "__main__":
    main()
