"""Recovery of known joint offsets, ratios, a wrist coupling and lost motion by the kinematic calibration.

A synthetic arm (the case study's ER3 Pro, or the arm of ``--config``) with drawn errors: offsets of 5 mrad
(std), ratio errors of 1 %, a coupling of 0.02 between the last two joints, lost motion of 1 mrad (the link
trails its motor); 300 poses on random moves inside a box of 10 % of each joint's range around home, tracked
with 0.1 mm and 0.02 deg (per axis) of noise at hidden X and Y. Prints each parameter's truth, estimate and
standard error, and the residuals against the noise (docs/ERRORS.md, "Kinematic calibration"):

    scripts/with_env.sh python scripts/kinematic_recovery.py [--config config/dvrk_psm_insertion.yaml]
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy.spatial.transform import Rotation

from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.error_injection.features import DEFAULT_DEADBAND, series_directions
from cosim_validation.error_injection.joint_map import JointMap
from cosim_validation.error_injection.kinematic_calibration import (
    calibrate_kinematics,
    kinematics_poses,
    parameter_names,
    residual_statistics,
)
from cosim_validation.error_injection.transforms import from_rotation, inverse
from cosim_validation.robots.model import RobotConfig

NOISE_M, NOISE_RAD = 1e-4, np.radians(0.02)


def _poses(robot: RobotConfig, n: int, rng: np.random.Generator) -> np.ndarray:
    """(n, J) joints: random goals in the box around home, each reached in steps of at most 0.1 rad."""
    kin = robot.kinematics
    half = 0.1 * (kin.q_upper - kin.q_lower)
    rows = [robot.home_q.copy()]
    while len(rows) < n:
        goal = robot.home_q + half * rng.uniform(-1.0, 1.0, kin.n_joints)
        steps = max(1, int(np.ceil(np.abs(goal - rows[-1]).max() / 0.1)))
        rows.extend(rows[-1] + (goal - rows[-1]) * k / steps for k in range(1, steps + 1))
    return np.asarray(rows[:n])


def main() -> None:
    """Draw the arm, track it, calibrate, print."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="config/needle_insertion.yaml")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    robot = RobotConfig.from_config(load_case_config(resolve_resource(args.config))["robot"])
    kin, rng = robot.kinematics, np.random.default_rng(args.seed)
    j = kin.n_joints
    truth = JointMap(
        rng.normal(0.0, 5e-3, j),
        1.0 + rng.normal(0.0, 0.01, j),
        ((j - 2, j - 1),),
        np.array([0.02]),
        -1e-3 * np.ones(j),
    )
    q = _poses(robot, 300, rng)
    starts = np.r_[True, np.zeros(len(q) - 1, dtype=bool)]
    moves = series_directions(np.diff(q, axis=0, prepend=q[:1]), DEFAULT_DEADBAND, starts)
    X = from_rotation(Rotation.from_rotvec([0.3, -0.2, 0.9]).as_matrix(), np.array([0.04, -0.01, -0.08]))[0]
    Y = from_rotation(Rotation.from_rotvec([0.1, 2.8, -0.4]).as_matrix(), np.array([1.5, 0.2, 0.6]))[0]
    B = inverse(Y) @ kinematics_poses(kin, truth.apply(q, moves)) @ X
    B[:, :3, :3] = B[:, :3, :3] @ Rotation.from_rotvec(rng.normal(0.0, NOISE_RAD, (len(q), 3))).as_matrix()
    B[:, :3, 3] += rng.normal(0.0, NOISE_M, (len(q), 3))
    found = calibrate_kinematics(kin, q, B, moves)
    coupling = np.zeros(2)
    coupling[-1] = 0.02
    true = np.concatenate([truth.offset, truth.scale, coupling, -1e-3 * np.ones(j)])
    estimate = np.concatenate(
        [found.joint_map.offset, found.joint_map.scale, found.joint_map.coupling, found.joint_map.lost_motion]
    )
    print(f"{'parameter':32s} {'truth':>10s} {'estimate':>10s} {'std error':>10s} {'|error|/se':>10s}")
    for name, t, e, s in zip(
        parameter_names(kin.joint_names, found.joint_map.coupled), true, estimate, found.standard_error, strict=True
    ):
        held = "held at nominal" if np.isnan(s) else f"{s:10.2e} {abs(e - t) / s:10.2f}"
        print(f"{name:32s} {t:10.5f} {e:10.5f} {held}")
    for when, hand_eye in (("before", found.nominal), ("after", found.hand_eye)):
        print(when, residual_statistics(hand_eye))
    print(f"noise: mean |3-D| {1.6e3 * NOISE_M:.3f} mm, {np.degrees(1.6 * NOISE_RAD):.4f} deg (1.6 x per-axis std)")


if __name__ == "__main__":
    main()
