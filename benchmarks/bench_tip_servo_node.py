"""The example node's controller on the emulated ER3 Pro: tracked-tip targeting error, closed loop against open loop.

The cases of a suite (every ``--every``-th) run the node's own insertion (examples/cosim_controller_example:
``case_plan`` and ``insertion_case``, the code ``tip_servo_node`` runs every period) in-process against the
emulated physical arm of config/needle_insertion.yaml (``make_backend("emulated")``): per control period the
command goes to the arm, the arm advances one period, and its external tracker's tip is the next period's
measured_cp. ``gain 0`` is the same motion without the tracked tip (open loop on the nominal URDF). Printed per
gain: the tracked tip's distance from the target at the end of the injection (mean, max over the cases) and the
case duration. ``--late P``: each command reaches the arm a period late with probability P (the arm holds the one
before meanwhile), as a command that misses its period on a loaded machine does over ROS 2.

Run: ``python benchmarks/bench_tip_servo_node.py SUITE.parquet [--every 16] [--late 0.1]`` (the suite from
``cosim testgen --method grid --per-cube 3 --region near_heart --granularity-mm 20``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.robot_backend import RobotBackend

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "cosim_controller_example"))
from cosim_controller_example.case_plan import plan_case
from cosim_controller_example.insertion_case import ServoSettings
from cosim_controller_example.resolved_rate import RateLimits
from cosim_controller_example.urdf_chain import UrdfChain, parse_chain


def run_case(
    backend: RobotBackend,
    chain: UrdfChain,
    limits: RateLimits,
    gain: float,
    source: np.ndarray,
    target: np.ndarray,
    home: np.ndarray,
    late: tuple[float, np.random.Generator],
) -> tuple[float, int]:
    """One case on ``backend``: the tracked tip's distance from the target at the end of injection [m], periods.

    ``late``: the probability that a command reaches the arm a period late, and the generator that decides.
    """
    backend.reset(home)
    sample = backend.read()
    case, _ = plan_case(chain, limits, ServoSettings(gain=gain), source, target, np.asarray(sample.q_measured))
    tracked, measured = np.asarray(sample.actual_tip_pos_m), np.asarray(sample.q_measured)
    running = measured
    while True:
        step = case.step(tracked, measured)
        if step.done:
            break
        running = running if late[1].random() < late[0] else step.q  # a late command: the arm holds the last one
        backend.command(running, limits.dt_s)
        backend.advance(limits.dt_s)
        sample = backend.read()
        tracked, measured = np.asarray(sample.actual_tip_pos_m), np.asarray(sample.q_measured)
    end = case.tip_at_end_of_injection
    return (float(np.linalg.norm(end - target)) if end is not None else float("nan")), case.ticks


def main(argv: list[str] | None = None) -> int:
    """Print the targeting error of every gain over the chosen cases."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite")
    parser.add_argument("--every", type=int, default=16)
    parser.add_argument("--gains", default="0.3,0")
    parser.add_argument("--late", type=float, default=0.0, help="probability of a command a period late")
    args = parser.parse_args(argv)
    config = load_case_config(resolve_resource("config/needle_insertion.yaml"))
    robot = RobotConfig.from_config(config["robot"])
    urdf = Path(resolve_resource("urdf/xmate_er3_pro.urdf")).read_text()
    chain = parse_chain(urdf, robot.kinematics.needle_length_m)
    limits = RateLimits(0.1, 0.05, 0.5, 0.5 * np.array([2.175] * 4 + [2.61] * 3))
    cases = pd.read_parquet(args.suite).iloc[:: args.every]
    backend = make_backend("emulated", config, robot.kinematics)
    try:
        for gain in (float(g) for g in args.gains.split(",")):
            errors, periods, rng = [], [], np.random.default_rng(0)
            for _, row in cases.iterrows():
                source = row[["source_x_m", "source_y_m", "source_z_m"]].to_numpy(float)
                target = row[["target_x_m", "target_y_m", "target_z_m"]].to_numpy(float)
                error, ticks = run_case(backend, chain, limits, gain, source, target, robot.home_q, (args.late, rng))
                errors.append(error)
                periods.append(ticks)
            e = 1e3 * np.array(errors)
            print(
                f"gain {gain:g}, late {args.late:g}: {len(e)} cases, "
                f"tracked targeting error mean {np.nanmean(e):.3f} mm, "
                f"max {np.nanmax(e):.3f} mm, unseen {int(np.isnan(e).sum())}; "
                f"duration {0.1 * min(periods):.1f}-{0.1 * max(periods):.1f} s"
            )
    finally:
        backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
