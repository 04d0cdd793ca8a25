"""Diagnosis of learned error injection against the emulator's ground truth (issue 18; a diagnostic, not a tool).

The software never sees the emulated arm's true tip pose, link angles or hand-eye transforms; this script does,
to find out where the learning loses the signal. It collects a dataset from the emulated ER3 Pro exactly as
``cosim errors collect`` does, keeps beside every sample what the emulator knows (the noiseless actual tip pose),
and reports:

1. the tracker's noise through the calibration: tracked actual tip (Y B X^-1) against the true one;
2. the labels of NN2: the actual joints from the tracked pose against those from the true pose (per joint, the
   noise against the signal's spread);
3. what NN2 learns from noisy labels and from true ones (validation MSE, normalised);
4. the position and rotation gap of the held-out motion measured against the tracked pose (what ``cosim errors
   evaluate`` reports) and against the true pose, without and with injection.

Usage (about two minutes)::

    scripts/with_env.sh python scripts/diagnose_errors.py [--goals 200] [--test-s 120] [--repeats 5] [--motion-s 600]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.controllers.planning.collection_motion import collection_motion
from cosim_validation.error_injection.actual_joints import actual_joints
from cosim_validation.error_injection.collection import CollectSettings, collect
from cosim_validation.error_injection.dataset_cleaning import clean
from cosim_validation.error_injection.evaluation import evaluate, injected_commands
from cosim_validation.error_injection.features import FeatureSpec, feature_matrix
from cosim_validation.error_injection.learning import LearnSettings, label, learn
from cosim_validation.error_injection.repeats import groups
from cosim_validation.error_injection.training import TrainingSettings, train_network
from cosim_validation.error_injection.transforms import pose_gap, poses
from cosim_validation.robots.model import RobotConfig
from cosim_validation.robots.registry import make_backend
from cosim_validation.robots.robot_backend import BackendSample


class _Witness:
    """A backend whose every read also keeps the emulator's true tip pose (the diagnosis only)."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.name = backend.name
        self.true_tip: list[np.ndarray] = []
        self.true_marker: list[np.ndarray] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.backend, name)

    def read(self) -> BackendSample:
        sample: BackendSample = self.backend.read()
        pos, quat = self.backend.true_tip_pose()
        self.true_tip.append(poses(pos[None], quat[None])[0])
        self.true_marker.append(self.backend._marker.true_marker_pose(pos, quat))
        return sample


def _stats(values: np.ndarray, scale: float) -> str:
    v = scale * values
    return f"mean {v.mean():.4f}  median {np.median(v):.4f}  p95 {np.percentile(v, 95):.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--goals", type=int, default=200)
    parser.add_argument("--test-s", type=float, default=120.0)
    parser.add_argument("--repeats", type=int, default=5, help="settled samples per training step")
    parser.add_argument("--motion-s", type=float, default=600.0, help="continuous training motion [s]")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    config = load_case_config(resolve_resource("config/needle_insertion.yaml"))
    robot = RobotConfig.from_config(config["robot"])
    kin = robot.kinematics
    witness = _Witness(make_backend("emulated", config, kin))
    settings = CollectSettings(
        goals=args.goals, test_s=args.test_s, seed=args.seed, repeats=args.repeats, motion_s=args.motion_s
    )
    dataset = collect(witness, kin, robot.home_q, settings)  # type: ignore[arg-type]
    labelled = label(dataset, kin)
    group = groups(clean(dataset))
    assert len(group) == dataset.n_rows, "rows were dropped: the witness no longer lines up"
    first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])  # the arm stands still over a group's readings
    read = collection_motion(robot.home_q, kin.q_lower, kin.q_upper, settings).reading  # a read per setpoint
    true_T, true_marker = np.stack(witness.true_tip)[read][first], np.stack(witness.true_marker)[read][first]
    if labelled.single_reading_gap is not None:
        t_m, r_rad = labelled.single_reading_gap
        print(f"single reading's gap from the repeats: {1e3 * t_m:.4f} mm, {np.degrees(r_rad):.4f} deg")
    tracked = labelled.cleaned.tracked
    print(f"{dataset.n_rows} rows, {int(tracked.sum())} tracked; calibration {labelled.hand_eye.summary()}")

    tracked_T = labelled.actual_tip_poses()[tracked]
    noiseless_T = labelled.hand_eye.actual_tool_poses(true_marker)
    t, r = pose_gap(tracked_T, true_T[tracked])
    print(f"1. tracked vs true tip: position [mm] {_stats(t, 1e3)}; rotation [deg] {_stats(r, np.degrees(1))}")
    t, r = pose_gap(tracked_T, noiseless_T[tracked])
    print(
        f"   tracker noise at the tip (tracked vs noiseless marker, same X, Y): position [mm] {_stats(t, 1e3)}; "
        f"rotation [deg] {_stats(r, np.degrees(1))}"
    )
    t, r = pose_gap(noiseless_T, true_T)
    print(
        f"   absorbed by X, Y (noiseless marker through X, Y vs true): position [mm] {_stats(t, 1e3)}; "
        f"rotation [deg] {_stats(r, np.degrees(1))}"
    )
    t, r = pose_gap(noiseless_T[tracked], np.stack([kin.tip_transform(q) for q in labelled.data.q_measured[tracked]]))
    print(
        f"   left for NN2 (noiseless marker through X, Y vs FK(measured)): position [mm] {_stats(t, 1e3)}; "
        f"rotation [deg] {_stats(r, np.degrees(1))}"
    )

    q_m = labelled.data.q_measured
    solved = actual_joints(kin, q_m, true_T)
    q_true = solved.q
    rows = tracked & np.isfinite(labelled.q_actual).all(axis=1) & labelled.settled_rows()  # NN2's rows
    noise = (labelled.q_actual - q_true)[rows]
    signal = (q_true - q_m)[rows]
    print("2. NN2 labels (settled rows) per joint [mrad]: signal std | label noise std (tracked - true)")
    print("   signal " + " ".join(f"{1e3 * s:7.3f}" for s in signal.std(axis=0)))
    print("   noise  " + " ".join(f"{1e3 * s:7.3f}" for s in noise.std(axis=0)))

    train = (labelled.data.set_name == "train") & rows
    starts, previous = labelled.data.segment_starts(), labelled.previous_measured()
    spec = FeatureSpec("CPE", kin.n_joints)
    x2 = feature_matrix(spec, q_m, previous, starts)
    base = TrainingSettings()
    noisy = train_network(spec, x2[train], (labelled.q_actual - q_m)[train], base, "NN2 noisy labels")
    exact = train_network(spec, x2[train], (q_true - q_m)[train], base, "NN2 true labels")
    print(
        f"3. NN2 validation MSE (normalised): noisy labels {noisy.validation_mse:.3f}, "
        f"true labels {exact.validation_mse:.3f}"
    )

    model, _ = learn(labelled, LearnSettings())
    ev = evaluate(model, labelled, kin)
    test = labelled.data.set_name == "test"
    commands, _ = injected_commands(model, kin, labelled.data.q_setpoint[test], starts[test])
    pos_p, R_p = kin.tip_poses(labelled.data.q_setpoint[test])
    pos_i, R_i = kin.tip_poses(commands)
    planned, injected = np.tile(np.eye(4), (len(pos_p), 1, 1)), np.tile(np.eye(4), (len(pos_i), 1, 1))
    planned[:, :3, :3], planned[:, :3, 3] = R_p, pos_p
    injected[:, :3, :3], injected[:, :3, 3] = R_i, pos_i
    summary = ev.summary()["table"]
    print("4. held-out gap [mm | deg], mean: against the tracked pose (cosim errors evaluate) and the true pose")
    print(
        f"   tracked: without {summary['translation_mm without']['mean']:.3f} / "
        f"{summary['rotation_deg without']['mean']:.3f}, with {summary['translation_mm with']['mean']:.3f} / "
        f"{summary['rotation_deg with']['mean']:.3f}"
    )
    for name, T in (("without", planned), ("with", injected)):
        t, r = pose_gap(true_T[test], T)
        print(f"   true {name}: {1e3 * t.mean():.3f} / {np.degrees(r.mean()):.3f}")


if __name__ == "__main__":
    main()
