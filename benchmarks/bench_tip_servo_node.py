"""The example node's controller on the emulated ER3 Pro: tracked-tip targeting error, closed loop against open loop.

The cases of a suite (every ``--every``-th) run the node's own insertion (examples/cosim_controller_example:
``case_plan`` and ``insertion_case``, the code ``tip_servo_node`` runs every period) in-process against the
emulated physical arm of config/needle_insertion.yaml (``make_backend("emulated")``): per control period the
command goes to the arm, the arm advances one period, and its external tracker's tip is the next period's
measured_cp. ``gain 0`` is the same motion without the tracked tip (open loop on the nominal URDF). Printed per
gain: the tracked tip's distance from the target at the end of the injection (mean, max over the cases) and the
case duration.

Run: ``python benchmarks/bench_tip_servo_node.py SUITE.parquet [--every 16]`` (the suite from
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
) -> tuple[float, int]:
    """One case on ``backend``: the tracked tip's distance from the target at the end of injection [m], periods."""
    backend.reset(home)
    sample = backend.read()
    case, _ = plan_case(chain, limits, ServoSettings(gain=gain), source, target, np.asarray(sample.q_measured))
    tracked = np.asarray(sample.actual_tip_pos_m)
    while True:
        step = case.step(tracked)
        if step.done:
            break
        backend.command(step.q, limits.dt_s)
        backend.advance(limits.dt_s)
        tracked = np.asarray(backend.read().actual_tip_pos_m)
    end = case.tip_at_end_of_injection
    return (float(np.linalg.norm(end - target)) if end is not None else float("nan")), case.ticks


def main(argv: list[str] | None = None) -> int:
    """Print the targeting error of every gain over the chosen cases."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite")
    parser.add_argument("--every", type=int, default=16)
    parser.add_argument("--gains", default="0.3,0")
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
            errors, periods = [], []
            for _, row in cases.iterrows():
                source = row[["source_x_m", "source_y_m", "source_z_m"]].to_numpy(float)
                target = row[["target_x_m", "target_y_m", "target_z_m"]].to_numpy(float)
                error, ticks = run_case(backend, chain, limits, gain, source, target, robot.home_q)
                errors.append(error)
                periods.append(ticks)
            e = 1e3 * np.array(errors)
            print(
                f"gain {gain:g}: {len(e)} cases, tracked targeting error mean {np.nanmean(e):.3f} mm, "
                f"max {np.nanmax(e):.3f} mm, unseen {int(np.isnan(e).sum())}; "
                f"duration {0.1 * min(periods):.1f}-{0.1 * max(periods):.1f} s"
            )
    finally:
        backend.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
