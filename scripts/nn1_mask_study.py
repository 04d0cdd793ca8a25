"""Can the training data tell which joints NN1 should not move? A study of NN1's per-joint mask (a diagnostic).

On the emulated PSM, NN1 (the controller error) injected on the wrist makes the held-out motion's tip rotation worse
than NN1 masked there (docs/ERRORS.md, "Held-out motion in the training box"). A guard can only mask what the
training data shows to be harmful. This script trains the default guarded model on a dataset whose continuous
training motion (segment 1, the rows NN1 learns from) loses its last ``--tail`` share to a check set, then
injects NN1 with each joint masked in turn and reports the tip's position and rotation gap (with / without
injection, as ``cosim errors evaluate`` prints it) on three sets of rows:

- ``blocks``: NN1's own validation blocks (what the joint mask of its guard is chosen on, in joint space);
- ``tail``: the held-back end of the training motion (chronologically after every row NN1 saw);
- ``held-out``: the dataset's held-out motion (``set == test``), which no choice may look at.

A mask chosen on ``blocks`` or ``tail`` helps the twin only if those rows rank the masks as ``held-out`` does.

Usage (a dataset from ``cosim errors collect``; about 15 s)::

    scripts/with_env.sh python scripts/nn1_mask_study.py --config config/dvrk_psm_insertion.yaml d.parquet
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

import numpy as np

from cosim_validation.common.config import load_case_config, resolve_resource
from cosim_validation.common.exceptions import CosimError
from cosim_validation.error_injection.dataset_io import read_parquet
from cosim_validation.error_injection.evaluation import injected_commands
from cosim_validation.error_injection.learning import Labelled, LearnSettings, label, learn, validation_blocks
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.training import TrainingSettings
from cosim_validation.error_injection.transforms import pose_gap
from cosim_validation.robots.model import Kinematics, RobotConfig

#: the continuous training motion of a collected dataset (0: settled goals, 1: training motion, 2: held-out motion)
TRAINING_MOTION = 1


def _tip_poses(kinematics: Kinematics, q: np.ndarray) -> np.ndarray:
    """(n, 4, 4) tip poses in base_link of joints ``q`` (n, J)."""
    pos, rot = kinematics.tip_poses(q)
    out = np.tile(np.eye(4), (len(q), 1, 1))
    out[:, :3, :3], out[:, :3, 3] = rot, pos
    return out


def gap_ratios(model: ErrorModel, labelled: Labelled, kinematics: Kinematics, rows: np.ndarray) -> tuple[float, float]:
    """Mean tip position and rotation gap to the tracked pose, with injection over without, on ``rows``.

    Args:
        model: The model to inject.
        labelled: The labelled dataset.
        kinematics: The nominal arm.
        rows: Row indices, increasing; the injector starts afresh where they are not consecutive.
    """
    data = labelled.data
    starts = data.segment_starts()[rows].copy()
    starts[0] = True
    starts[1:] |= np.diff(rows) > 1
    tracked = labelled.cleaned.tracked[rows]
    real = labelled.actual_tip_poses()[rows][tracked]
    commands, _ = injected_commands(model, kinematics, data.q_setpoint[rows], starts)
    t_without, r_without = pose_gap(real, _tip_poses(kinematics, data.q_setpoint[rows][tracked]))
    t_with, r_with = pose_gap(real, _tip_poses(kinematics, commands[tracked]))
    return float(t_with.mean() / t_without.mean()), float(r_with.mean() / r_without.mean())


def with_nn1_mask(model: ErrorModel, mask: np.ndarray) -> ErrorModel:
    """``model`` with NN1 injected on the joints of ``mask`` (J,) only."""
    guards = dict(model.guards)
    guards["nn1"] = replace(guards["nn1"], mask=mask)
    return replace(model, guards=guards)


def study(args: argparse.Namespace) -> None:
    """Train, then print the gap ratios of every one-joint mask of NN1 on the three sets of rows.

    Args:
        args: The parsed command line.
    """
    kinematics = RobotConfig.from_config(load_case_config(resolve_resource(args.config))["robot"]).kinematics
    data = read_parquet(args.dataset)
    motion = np.flatnonzero((data.segment == TRAINING_MOTION) & (data.set_name == "train"))
    tail = motion[int((1.0 - args.tail) * len(motion)) :]
    set_name = data.set_name.copy()
    set_name[tail] = "test"  # not trained on (the held-out motion is told apart by its segment)
    labelled = label(replace(data, set_name=set_name), kinematics)
    model, _ = learn(labelled, LearnSettings())
    rows = labelled.data  # cleaned, settled readings averaged: indices from here on are its rows
    fitted = np.flatnonzero((rows.set_name == "train") & ~labelled.settled_rows())  # NN1's rows, as learn takes them
    blocks = fitted[validation_blocks(len(fitted), TrainingSettings().seed)]
    in_motion = rows.segment == TRAINING_MOTION
    sets = {
        "blocks": blocks,
        "tail": np.flatnonzero(in_motion & (rows.set_name == "test")),
        "held-out": np.flatnonzero(~in_motion & (rows.set_name == "test")),
    }
    names = kinematics.joint_names
    print(f"NN1's joint mask (chosen in joint space on its blocks): {[bool(m) for m in model.guards['nn1'].mask]}")
    print("rows: " + ", ".join(f"{k} {len(v)}" for k, v in sets.items()))
    print(f"{'NN1 injected on':<34}" + "".join(f"{k + ' pos / rot':>24}" for k in sets))
    everyone = np.ones(len(names), dtype=bool)
    masks = {"every joint": everyone, "none (NN1 off)": ~everyone}
    for j, name in enumerate(names):
        masks[f"all but {name}"] = everyone & (np.arange(len(names)) != j)
    for label_, mask in masks.items():
        ratios = [gap_ratios(with_nn1_mask(model, mask), labelled, kinematics, chosen) for chosen in sets.values()]
        print(f"{label_:<34}" + "".join(f"{p:>15.3f} / {r:.3f}" for p, r in ratios))


def main(argv: list[str] | None = None) -> int:
    """Run the study; 0 on success, 1 with one ``error:`` line for a bad input (a missing or unreadable dataset or
    configuration).

    Args:
        argv: The command line (default: sys.argv).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", required=True, help="case-study configuration of the dataset's robot")
    parser.add_argument("dataset", help="a dataset from cosim errors collect (Parquet)")
    parser.add_argument("--tail", type=float, default=0.15, help="share of the training motion held back")
    args = parser.parse_args(argv)
    try:
        study(args)
    except (CosimError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
