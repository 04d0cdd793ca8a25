"""Judging the learning itself on held-out rows: split, calibrate, train and evaluate, once per seed.

For every seed the dataset is split (:mod:`~.splits`), the hand-eye calibration and both networks are made from
the training part only, and the simulated robot without and with the injected errors is compared with the physical
one on the held-out part (:func:`~cosim_validation.error_injection.evaluation.evaluate`). The result gives, per
seed and as mean, min and max over the seeds, the position and rotation gaps without and with injection and
their ratio with / without (below 1: injection helps), and which gaps injection made worse, so a model that
helps on average but not on every seed shows it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.error_injection.evaluation import evaluate
from cosim_validation.error_injection.learning import LearnSettings, label, learn
from cosim_validation.error_injection.splits import Split, assign
from cosim_validation.error_injection.training import MIN_TRAINING_ROWS
from cosim_validation.robots.model import Kinematics

#: Fewest tracked held-out rows a split must leave to be judged on.
MIN_HELD_OUT_ROWS = 20

#: The gaps compared: summary key -> (name in messages, unit).
GAPS = {"translation_mm": ("position", "mm"), "rotation_deg": ("rotation", "deg")}


def check_split(data: ErrorDataset, split: Split, tracked_held_out: int | None = None) -> None:
    """Raise :class:`DatasetError` when the split leaves too few rows to train or to judge.

    Too few: ``data`` (its ``set`` column the split's) has too few training rows, or ``tracked_held_out`` (when
    given: held-out rows with a usable tracked pose) is too small.

    Args:
        data: The dataset with its ``set`` column made the split's.
        split: The split, named in the message.
        tracked_held_out: Held-out rows with a usable tracked pose; None: not checked.
    """
    n_train = int((data.set_name == "train").sum())
    if n_train < MIN_TRAINING_ROWS:
        raise DatasetError(
            f"--split {split.text}: leaves {n_train} training rows, at least {MIN_TRAINING_ROWS} are needed"
        )
    if tracked_held_out is not None and tracked_held_out < MIN_HELD_OUT_ROWS:
        raise DatasetError(
            f"--split {split.text}: leaves {tracked_held_out} held-out rows with a tracked pose, at least "
            f"{MIN_HELD_OUT_ROWS} are needed"
        )


def one_seed(
    data: ErrorDataset,
    kinematics: Kinematics,
    split: Split,
    seed: int,
    settings: LearnSettings,
    max_registration_error_m: float,
    kinematic: bool = True,
) -> dict[str, Any]:
    """Split with ``seed``, learn (training seed ``seed``) and evaluate on the held-out rows; the summary.

    Args:
        data: The whole dataset (its ``set`` column is replaced by the split's).
        kinematics: The nominal arm and needle of the robot.
        split: How to hold out rows.
        seed: Seed of the split and of the networks' training.
        settings: What to train (its training seed is replaced by ``seed``).
        max_registration_error_m: Marker poses with a larger registration error are not used [m].
        kinematic: Calibrate the joint offsets, ratios and wrist couplings with X and Y (False: X and Y alone, the
            nominal model).

    Raises:
        DatasetError: The split leaves too few rows on either side.
        CalibrationError: The training rows leave the hand-eye calibration open.
    """
    assigned, what = assign(data, split, seed)
    check_split(assigned, split)
    labelled = label(assigned, kinematics, max_registration_error_m=max_registration_error_m, kinematic=kinematic)
    held = labelled.data.set_name == "test"
    check_split(assigned, split, int((labelled.cleaned.tracked & held).sum()))
    seeded = replace(settings, training=replace(settings.training, seed=seed))
    model, report = learn(labelled, seeded, "split")
    summary = evaluate(model, labelled, kinematics, "test").summary()
    n_train = int((labelled.data.set_name == "train").sum())
    return {
        "seed": seed,
        "held_out": what,
        "training_rows": n_train,
        "calibration": labelled.hand_eye.summary(),
        "nn1": report["nn1"],
        "nn2": report["nn2"],
    } | summary


def _spread(values: list[float]) -> dict[str, float]:
    return {"mean": float(np.mean(values)), "min": float(np.min(values)), "max": float(np.max(values))}


def aggregate(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean, min and max over the seeds of every gap and ratio, and the gaps injection made worse.

    Args:
        runs: The summaries of :func:`one_seed`, one per seed.
    """
    out: dict[str, Any] = {}
    for key in GAPS:
        out[key] = {
            "without": _spread([r["table"][f"{key} without"]["mean"] for r in runs]),
            "with": _spread([r["table"][f"{key} with"]["mean"] for r in runs]),
            "with_over_without": _spread([r["with_over_without"][key] for r in runs]),
        }
        out[key]["seeds_worse"] = sum(r["with_over_without"][key] > 1.0 for r in runs)
    for name in ("tip position error", "tip rotation error"):
        for case in ("without", "with"):
            scores = [r["distributions"][f"{name} {case}"] for r in runs]
            out[f"{name} {case}"] = {
                "ks": _spread([s["ks"] for s in scores]),
                "wasserstein": _spread([s["wasserstein"] for s in scores]),
                "unit": scores[0]["unit"],
            }
    out["worse_with_injection"] = [GAPS[k][0] for k in GAPS if out[k]["with"]["mean"] > out[k]["without"]["mean"]]
    return out


def held_out_evaluation(
    data: ErrorDataset,
    kinematics: Kinematics,
    split: Split,
    seeds: int,
    settings: LearnSettings,
    max_registration_error_m: float,
    kinematic: bool = True,
) -> dict[str, Any]:
    """:func:`one_seed` for seeds 0 .. ``seeds`` - 1 and their :func:`aggregate`.

    ``kinematic``: see :func:`~.learning.label`.

    Args:
        data: The whole dataset (each seed's split replaces its ``set`` column).
        kinematics: The nominal arm and needle of the robot.
        split: How to hold out rows.
        seeds: How many seeds to run (0 .. ``seeds`` - 1).
        settings: What to train (its training seed is each run's seed).
        max_registration_error_m: Marker poses with a larger registration error are not used [m].
        kinematic: Calibrate the joint offsets, ratios and wrist couplings with X and Y (False: X and Y alone, the
            nominal model).
    """
    runs = [one_seed(data, kinematics, split, s, settings, max_registration_error_m, kinematic) for s in range(seeds)]
    return {"split": split.text, "seeds": seeds, "runs": runs, "over_seeds": aggregate(runs)}
