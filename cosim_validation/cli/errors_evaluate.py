"""``cosim errors evaluate``: a model on a dataset's held-out rows, or the learning itself on held-out splits.

Two ways:

- ``--model MODEL``: the model on the rows of ``--set`` (default ``test``, the held-out rows);
- ``--split time:F|region[:F]|segment[:F] [--seeds N]``: per seed, calibrate and train on the split's training
  rows and judge on its held-out rows (:mod:`cosim_validation.error_injection.held_out`); the spread over seeds.

Either way the position and rotation gaps without and with injection stand side by side with their ratio
with / without (below 1: injection helps), and a ``warning:`` line names every gap that injection makes worse.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from cosim_validation.cli import arg_types
from cosim_validation.cli.arg_types import epochs
from cosim_validation.common.exceptions import InputError
from cosim_validation.error_injection.features import FEATURE_KINDS

#: The most seeds a held-out evaluation repeats over (each one calibrates and trains anew)
MAX_SEEDS = 100
_GAPS = (("translation_mm", "position", "mm"), ("rotation_deg", "rotation", "deg"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``evaluate`` (beside the dataset, ``--config`` and ``--json``).

    Args:
        p: The ``evaluate`` action's subparser, to add the options to.
    """
    p.add_argument(
        "--model", type=arg_types.path, default=None, help="error model file (cosim errors train); or --split"
    )
    p.add_argument("--set", default=None, choices=("train", "test"), help="with --model: rows to evaluate on (test)")
    p.add_argument("--html", default=None, metavar="PAGE", help="with --model: write the page with Table II")
    p.add_argument(
        "--split",
        default=None,
        metavar="SPLIT",
        help="train on part of the dataset, judge on the rest: time:F (first F train), "
        "region[:F] (held-out rows outside the training box of a joint), "
        "segment[:F] (whole segments)",
    )
    p.add_argument("--seeds", type=int, default=1, help="with --split: repeat with seeds 0..N-1 (split, training)")
    p.add_argument("--nn1", default="CS", choices=FEATURE_KINDS, help="with --split: NN1 features (CS)")
    p.add_argument("--nn2", default="CPE", choices=FEATURE_KINDS, help="with --split: NN2 features (CPE)")
    p.add_argument("--max-epochs", type=epochs, default=400, help="with --split: upper bound on epochs")
    p.add_argument("--plain", action="store_true", help="with --split: train without guards (offsets everywhere)")


def check_arguments(args: argparse.Namespace) -> None:
    """Raise :class:`InputError` for options that do not go together.

    Args:
        args: The parsed command line of ``cosim errors evaluate``.
    """
    if args.split is None:
        if args.model is None:
            raise InputError("evaluate: give --model MODEL, or --split to train on part of the dataset")
        if args.plain:
            raise InputError("--plain: only with --split (a model file has its guards or not)")
        return
    if args.model is not None:
        raise InputError("--model: not with --split (a split trains its own models on its training rows)")
    for option in ("set", "html"):
        if getattr(args, option) is not None:
            raise InputError(f"--{option}: only with --model")
    if not 1 <= args.seeds <= MAX_SEEDS:  # each seed calibrates and trains anew (seconds each): 1e9 never ended
        raise InputError(f"--seeds: expected 1..{MAX_SEEDS}, got {args.seeds}")


def split_result(args: argparse.Namespace, dataset: Any, kinematics: Any) -> dict[str, Any]:
    """The held-out evaluation of ``--split`` over ``--seeds`` (JSON), with its warnings.

    Args:
        args: The parsed command line of ``cosim errors evaluate`` with ``--split``.
        dataset: The error dataset read from ``DATASET``, not yet labelled (each split calibrates and labels
            its own training rows).
        kinematics: The nominal kinematics of the configuration's robot, the one the dataset was recorded on.
    """
    from cosim_validation.error_injection.held_out import held_out_evaluation
    from cosim_validation.error_injection.learning import LearnSettings
    from cosim_validation.error_injection.splits import parse_split
    from cosim_validation.error_injection.training import TrainingSettings

    split = parse_split(args.split)
    settings = LearnSettings(args.nn1, args.nn2, TrainingSettings(max_epochs=args.max_epochs), plain=args.plain)
    result = held_out_evaluation(
        dataset, kinematics, split, args.seeds, settings, 1e-3 * args.max_registration_error_mm, not args.hand_eye_only
    )
    over = result["over_seeds"]
    warnings = []
    for key, name, unit in _GAPS:
        row = over[key]
        if row["seeds_worse"]:
            warnings.append(
                f"with injection the {name} gap is worse than without in {row['seeds_worse']} of {args.seeds} "
                f"seeds (mean {row['with']['mean']:.4f} {unit} with, {row['without']['mean']:.4f} {unit} without)"
            )
    return {"dataset": str(args.dataset)} | result | {"warnings": warnings}


def model_result(args: argparse.Namespace, labelled: Any, kinematics: Any) -> dict[str, Any]:
    """The evaluation of ``--model`` on the rows of ``--set`` (JSON), with its warnings.

    Args:
        args: The parsed command line of ``cosim errors evaluate`` with ``--model`` (``--set``, ``--html``).
        labelled: The dataset cleaned, calibrated and labelled
            (:func:`~cosim_validation.error_injection.learning.label`).
        kinematics: The nominal kinematics of the configuration's robot; the model must be made for the same
            robot.
    """
    from cosim_validation.error_injection.evaluation import evaluate
    from cosim_validation.error_injection.model_file import ErrorModel
    from cosim_validation.error_injection.robot_identity import RobotIdentity

    model = ErrorModel.load(args.model)
    model.check_robot(RobotIdentity.of(kinematics), str(args.model))
    evaluation = evaluate(model, labelled, kinematics, args.set or "test")
    out: dict[str, Any] = {"model": str(args.model), "guarded": model.guarded} | evaluation.summary()
    if labelled.single_reading_gap is not None:  # what a perfect model still leaves against one tracked reading
        t_m, r_rad = labelled.single_reading_gap
        floor = {"translation_mm": 1e3 * t_m, "rotation_deg": float(np.degrees(r_rad))}
        best = {k: v / max(out["table"][f"{k} without"]["mean"], 1e-15) for k, v in floor.items()}
        out["tracker_floor"] = floor | {"best_with_over_without": best}
    out["warnings"] = [
        f"with injection the {name} gap is worse than without ({out['table'][f'{key} with']['mean']:.4f} {unit} "
        f"against {out['table'][f'{key} without']['mean']:.4f} {unit}, with/without "
        f"{out['with_over_without'][key]:.2f})"
        for key, name, unit in _GAPS
        if name in out["worse_with_injection"]
    ]
    if args.html:
        from cosim_validation.error_injection.evaluation_page import write_page

        write_page(evaluation, Path(args.html), f"Learned error injection: {Path(args.model).name}")
        out["html"] = str(args.html)
    return out


def _samples(result: dict[str, Any]) -> str:
    return "held-out samples" if result["set"] == "test" else "training samples (not held out)"


def print_model_result(result: dict[str, Any]) -> None:
    """The text of :func:`model_result`.

    Args:
        result: :func:`model_result`'s data (with the dataset's keys ``cosim errors evaluate`` adds), gaps in
            [mm] and [deg].
    """
    print(f"{result['samples']} {_samples(result)}; gap between real and simulated actual pose:")
    for name, row in result["table"].items():
        print(
            f"  {name:<24} mean {row['mean']:.4f}  std {row['std']:.4f}  median {row['median']:.4f}  "
            f"max {row['max']:.4f}"
        )
    print(f"  {'mean gap':<16} {'without':>9} {'with':>9}  with/without (below 1: injection helps)")
    for key, name, unit in _GAPS:
        table = result["table"]
        print(
            f"  {name + ' [' + unit + ']':<16} {table[f'{key} without']['mean']:>9.4f} "
            f"{table[f'{key} with']['mean']:>9.4f}  {result['with_over_without'][key]:.2f}"
        )
    if "tracker_floor" in result:
        floor, best = result["tracker_floor"], result["tracker_floor"]["best_with_over_without"]
        print(
            f"tracker floor (spread of repeated readings): {floor['translation_mm']:.4f} mm, "
            f"{floor['rotation_deg']:.4f} deg; a perfect model would reach with/without "
            f"{best['translation_mm']:.2f}, {best['rotation_deg']:.2f}"
        )
    print("error from the plan, physical vs simulated (two-sample KS statistic, Wasserstein distance):")
    for name, row in result["distributions"].items():
        print(f"  {name}: KS {row['ks']:.3f}, Wasserstein {row['wasserstein']:.4f} {row['unit']}")
    for warning in result["warnings"]:
        print(f"warning: {warning}")
    if not result["guarded"]:
        print(
            "note: this model has no guards (made before them, or with --plain): its offsets are injected "
            "everywhere, also far from its training data; cosim errors train makes one that has"
        )
    if "html" in result:
        print(f"wrote {result['html']}")


def _spread(row: dict[str, float]) -> str:
    return f"{row['mean']:.4f} ({row['min']:.4f} .. {row['max']:.4f})"


def print_split_result(result: dict[str, Any]) -> None:
    """The text of :func:`split_result`.

    Args:
        result: :func:`split_result`'s data, gaps in [mm] and [deg].
    """
    print(
        f"split {result['split']}, {result['seeds']} seeds; mean gap between real and simulated actual pose "
        "on the held-out rows, without -> with injection (with/without):"
    )
    for run in result["runs"]:
        gaps = ", ".join(
            f"{name} {run['table'][f'{key} without']['mean']:.4f} -> {run['table'][f'{key} with']['mean']:.4f} "
            f"{unit} ({run['with_over_without'][key]:.2f})"
            for key, name, unit in _GAPS
        )
        print(
            f"  seed {run['seed']}: {run['held_out']}; {run['training_rows']} training rows, "
            f"{run['samples']} held-out samples; {gaps}"
        )
    over = result["over_seeds"]
    print(f"over {result['seeds']} seeds, mean (min .. max):")
    for key, name, unit in _GAPS:
        row = over[key]
        print(
            f"  {name} [{unit}]: without {_spread(row['without'])}, with {_spread(row['with'])}, "
            f"with/without {_spread(row['with_over_without'])}"
        )
    print("  error from the plan, physical vs simulated:")
    for name in ("tip position error", "tip rotation error"):
        for case in ("without", "with"):
            row = over[f"{name} {case}"]
            print(f"  {name} {case}: KS {_spread(row['ks'])}, Wasserstein {_spread(row['wasserstein'])} {row['unit']}")
    for warning in result["warnings"]:
        print(f"warning: {warning}")
