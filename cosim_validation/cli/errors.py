"""``cosim errors collect|calibrate|train|evaluate``: learned error injection from a physical robot.

The method is [Barragan et al. 2024]'s.

- ``collect -o DATASET``: drive the physical robot (the emulated ER3 Pro in batch) through random settled steps
  and a held-out continuous motion; write the dataset (Parquet); with ``--from-run RUN`` the dataset is made of
  a session's or campaign's stored trajectories instead (a session drives the robot live, through its driver; an
  ``error_collection`` case gives the rows of the batch collection with its case seed);
- ``calibrate DATASET``: kinematic calibration (joint offsets, ratios, wrist couplings) with the hand-eye X and Y
  on the tracked training rows; the parameters held at nominal, residuals before and after, X and Y;
- ``train DATASET -o MODEL``: calibrate, label, train NN1 and NN2, write the model (``.npz``, no pickle);
- ``evaluate DATASET --model MODEL``: [Barragan et al. 2024]'s Table II on the held-out rows, the two-sample
  statistics, and
  with ``--html`` the page with the distributions; ``evaluate DATASET --split SPLIT --seeds N`` instead trains on
  part of the dataset and judges on the rest, per seed (:mod:`cosim_validation.cli.errors_evaluate`).

A dataset is the Parquet file of docs/ERRORS.md, or the documented CSV (its robot is the configuration's).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from cosim_validation.cli import arg_types, errors_evaluate
from cosim_validation.cli.arg_types import case_seed, epochs, seed
from cosim_validation.cli.output import print_json, warn_line

HELP = "learned error injection: calibrate, train and evaluate error models from a robot's dataset"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``cosim errors``.

    Args:
        parser: The ``cosim errors`` subcommand's parser, to add one subparser per action to.
    """
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    c = sub.add_parser("collect", help="drive the physical robot and write a dataset", description=__doc__)
    c.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print machine-readable JSON instead of text"
    )
    c.add_argument("-o", "--output", required=True, metavar="DATASET", help="dataset to write (.parquet)")
    c.add_argument(
        "--config", type=arg_types.path, default="config/needle_insertion.yaml", help="case-study configuration (robot)"
    )
    c.add_argument("--backend", default=None, help="the physical robot (a backend name; default emulated)")
    c.add_argument(
        "--goals",
        type=int,
        default=None,
        help="random goals of the training motion (default: "
        "controllers.collection of the configuration, else 60; likewise below)",
    )
    c.add_argument("--test-s", type=float, default=None, help="length of the held-out motion [s] (60)")
    c.add_argument(
        "--seed",
        type=case_seed,
        default=None,
        help="goals, continuous motions, the robot's noise (default 0; a session's error_collection case uses its "
        "case seed)",
    )
    c.add_argument("--motion-s", type=float, default=None, help="length of the continuous training motion [s] (120)")
    c.add_argument("--repeats", type=int, default=None, help="readings of each settled step (averaged; 5)")
    c.add_argument(
        "--from-run",
        type=arg_types.path,
        default=None,
        metavar="RUN_DIR",
        help="instead of driving a backend: the stored trajectories of a session or campaign run "
        "(live through the drivers: a `cosim session` run), one segment per case",
    )
    c.add_argument("--robot", default=None, help="with --from-run: whose trajectories (default physical)")
    c.add_argument(
        "--test-cases",
        default=None,
        metavar="ID[,ID]",
        help="with --from-run: the cases held out for testing (set test); the others train",
    )
    for name, text in (
        ("calibrate", "hand-eye calibration AX = YB of a dataset's tracked rows"),
        ("train", "train NN1 and NN2 on a dataset and write the error model"),
        ("evaluate", "compare the simulated robot with the physical one on held-out rows"),
    ):
        p = sub.add_parser(name, help=text, description=text)
        p.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help="print machine-readable JSON instead of text"
        )
        p.add_argument(
            "dataset", type=arg_types.path, metavar="DATASET", help="dataset: .parquet, or .csv (docs/ERRORS.md)"
        )
        p.add_argument(
            "--config",
            type=arg_types.path,
            default="config/needle_insertion.yaml",
            help="case-study configuration (robot)",
        )
        p.add_argument("--max-registration-error-mm", type=float, default=0.5, help="marker poses above: unused")
        p.add_argument(
            "--hand-eye-only",
            action="store_true",
            help="calibrate X and Y alone, with the nominal model (default: with the joint offsets, "
            "ratios and wrist couplings)",
        )
        if name == "train":
            p.add_argument("-o", "--output", required=True, metavar="MODEL", help="model file to write (.npz)")
            kinds = ("OC", "CP", "CPE", "CS")
            p.add_argument("--nn1", default="CS", choices=kinds, help="NN1 features (default CS: setpoint step)")
            p.add_argument("--nn2", default="CPE", choices=kinds, help="NN2 features (default CPE)")
            p.add_argument("--seed", type=seed, default=0, help="initialisation, shuffling, validation split")
            p.add_argument("--max-epochs", type=epochs, default=400, help="upper bound on epochs")
            p.add_argument("--search", action="store_true", help="small hyper-parameter search (12 trials)")
            p.add_argument(
                "--plain",
                action="store_true",
                help="no guards: offsets injected everywhere, also far from the training data",
            )
        if name == "evaluate":
            errors_evaluate.add_arguments(p)


def _inputs(args: argparse.Namespace) -> tuple[Any, Any]:
    from cosim_validation.common.config import load_case_config, resolve_resource
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.error_injection.dataset_io import read_csv, read_parquet
    from cosim_validation.error_injection.dvrk_csv import is_dvrk_csv, read_dvrk_csv
    from cosim_validation.error_injection.joint_range import check_joint_range
    from cosim_validation.error_injection.robot_identity import RobotIdentity, joint_units
    from cosim_validation.robots.model import RobotConfig

    kinematics = RobotConfig.from_config(load_case_config(resolve_resource(args.config))["robot"]).kinematics
    path = Path(args.dataset)
    if path.suffix.lower() == ".csv" and is_dvrk_csv(path):
        dataset = read_dvrk_csv(path, RobotIdentity.of(kinematics), joint_units(kinematics), warn_line)
    elif path.suffix.lower() == ".csv":
        dataset = read_csv(path, RobotIdentity.of(kinematics), joint_units(kinematics), warn_line)
    elif path.suffix.lower() != ".parquet":
        raise InputError(f"{path}: expected a .parquet or .csv dataset")
    else:
        dataset = read_parquet(path)
    if dataset.robot.joint_names == kinematics.joint_names:  # another arm's dataset is refused by name later
        check_joint_range(dataset, kinematics, str(path))
    return dataset, kinematics


def _check_registration(args: argparse.Namespace) -> None:
    from cosim_validation.common.exceptions import InputError

    if not 0 < args.max_registration_error_mm <= 1e5:  # 1e300 was taken: a registration error is at most 100 m
        raise InputError(
            f"--max-registration-error-mm: expected a number > 0 and at most 100000 (100 m), got "
            f"{args.max_registration_error_mm}"
        )


def _labelled(args: argparse.Namespace) -> tuple[Any, Any]:
    from cosim_validation.error_injection.error_types import CalibrationError, DatasetError
    from cosim_validation.error_injection.learning import label

    _check_registration(args)
    dataset, kinematics = _inputs(args)
    kinematic = not args.hand_eye_only
    threshold_m = 1e-3 * args.max_registration_error_mm
    try:
        return label(dataset, kinematics, max_registration_error_m=threshold_m, kinematic=kinematic), kinematics
    except (CalibrationError, DatasetError) as exc:  # too few poses, another robot's rows: say which dataset
        if str(exc).startswith(str(args.dataset)):
            raise
        raise type(exc)(f"{args.dataset}: {exc}") from None


def _collect_from_run(args: argparse.Namespace) -> int:
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.common.record import RobotRole
    from cosim_validation.error_injection.dataset_io import dataset_of_records
    from cosim_validation.error_injection.robot_identity import RobotIdentity, joint_units
    from cosim_validation.runs.report.run_data import load_run

    robot = args.robot or "physical"
    RobotRole.parse(robot)
    ids = args.test_cases.split(",") if args.test_cases else []
    if any(not t.strip() for t in ids):  # ",," held out nothing without a word
        raise InputError(f"--test-cases: {args.test_cases!r} holds an empty case id; expected ID[,ID...]")
    held_out = frozenset(t.strip() for t in ids)
    run_data = load_run(args.from_run)
    try:
        if run_data.kinematics is None:
            raise InputError(f"{args.from_run}: the run's configuration is gone")
        kinematics = run_data.kinematics
        stored = run_data.trajectory_robots
        test_ids = [t for t in run_data.cases.index if robot in stored.get(t, [])]
        if not test_ids:
            raise InputError(f"{args.from_run}: no stored trajectories of robot {robot!r}")
        unknown = sorted(held_out - set(test_ids))
        if unknown:
            raise InputError(f"--test-cases: {', '.join(unknown)} not among the {robot} trajectories of the run")
        records = [run_data.trajectory(t, robot) for t in test_ids]
        source = f"run {Path(args.from_run).name} ({run_data.kind}, {robot}, {len(records)} cases)"
        if run_data.meta.get("controller") == "error_collection":
            if held_out:
                raise InputError("--test-cases: an error_collection case holds out its own continuous motion")
            dataset = _collection_dataset(run_data, records, source)
        else:
            dataset = dataset_of_records(
                records, RobotIdentity.of(kinematics), joint_units(kinematics), held_out, source
            )
    finally:
        run_data.close()
    return _written(args, dataset, f"{robot} robot of {source}")


def _collection_dataset(run_data: Any, records: list[Any], source: str) -> Any:
    """The read samples of a run's ``error_collection`` cases (each case's seed from its suite's seed)."""
    from cosim_validation.assembly import case_seed
    from cosim_validation.controllers.controllers_config import ControllersConfig
    from cosim_validation.error_injection.collection_records import dataset_of_collection_records
    from cosim_validation.robots.model import RobotConfig

    config = run_data.config
    robot = RobotConfig.from_config(config["robot"])
    settings = ControllersConfig.from_config(config["controllers"]).collection
    suite_seeds = [int(s["seed"]) for s in run_data.suites if "seed" in s]
    seeds = [[case_seed(s, r.test_id) for s in suite_seeds] for r in records]
    return dataset_of_collection_records(records, robot.kinematics, robot.home_q, settings, seeds, source)


def _written(args: argparse.Namespace, dataset: Any, robot: str) -> int:
    from cosim_validation.error_injection.dataset_io import write_parquet

    write_parquet(dataset, args.output)
    counts = {name: int((dataset.set_name == name).sum()) for name in ("train", "test")}
    seen = int(dataset.marker_seen.sum())
    if args.json:
        print_json({"dataset": str(args.output), "rows": counts, "marker_seen": seen, "robot": robot})
    else:
        print(
            f"wrote {args.output}: {counts['train']} training rows, {counts['test']} held-out rows "
            f"({seen} with the marker seen) from the {robot}"
        )
    return 0


def _settable(settings: Any, key: str, value: Any) -> bool:
    """Whether ``settings`` with ``key`` set to ``value`` alone are valid collection settings."""
    from cosim_validation.common.exceptions import InputError

    try:
        replace(settings, **{key: value})
    except InputError:
        return False
    return True


def _collect(args: argparse.Namespace) -> int:
    from cosim_validation.common.config import load_case_config, resolve_resource
    from cosim_validation.common.exceptions import InputError
    from cosim_validation.controllers.controllers_config import ControllersConfig
    from cosim_validation.error_injection.collection import collect
    from cosim_validation.robots.model import RobotConfig
    from cosim_validation.robots.registry import make_backend

    config = load_case_config(resolve_resource(args.config))
    robot = RobotConfig.from_config(config["robot"])
    given = {"goals": args.goals, "test_s": args.test_s, "repeats": args.repeats, "motion_s": args.motion_s}
    configured = ControllersConfig.from_config(config["controllers"]).collection
    chosen = {k: v for k, v in given.items() if v is not None}
    try:
        settings = replace(configured, seed=args.seed or 0, **chosen)
    except InputError as exc:  # name the flags the user gave, not the settings' fields: those refused on their own
        flags = [f"--{k.replace('_', '-')}" for k, v in chosen.items() if not _settable(configured, k, v)]
        raise InputError(f"{', '.join(flags)}: {exc}" if flags else str(exc)) from None
    backend = make_backend(args.backend or "emulated", config, robot.kinematics)
    try:
        dataset = collect(backend, robot.kinematics, robot.home_q, settings)
    finally:
        backend.close()
    return _written(args, dataset, f"{backend.name} robot")


#: The options of a collection that drives a robot, and those of one made from a run's stored trajectories.
_DRIVING = ("backend", "goals", "test_s", "seed", "motion_s", "repeats")
_FROM_RUN = ("robot", "test_cases")


def _check_collect_options(args: argparse.Namespace) -> None:
    """Refuse an option the chosen kind of collection does not use (it was ignored without a word)."""
    from cosim_validation.common.exceptions import InputError

    unused = _DRIVING if args.from_run else _FROM_RUN
    given = [f"--{name.replace('_', '-')}" for name in unused if getattr(args, name) is not None]
    if given and args.from_run:
        raise InputError(f"{', '.join(given)}: not used with --from-run (the run's stored trajectories are the data)")
    if given:
        raise InputError(f"{', '.join(given)}: only with --from-run RUN_DIR (the stored trajectories of a run)")


def run(args: argparse.Namespace) -> int:
    """Run the action and print its result.

    Args:
        args: The parsed command line of ``cosim errors ACTION`` (``action`` and the options of that action's
            subparser, ``--json`` included).
    """
    from cosim_validation.error_injection.error_types import DatasetError

    _check_outputs(args)  # before anything is read or written
    if args.action == "collect":
        _check_collect_options(args)
        return _collect_from_run(args) if args.from_run else _collect(args)
    try:
        return _on_dataset(args)
    except DatasetError as exc:  # "NN1 (training rows): 60 usable rows, ..." named no file
        named = [str(p) for p in (args.dataset, getattr(args, "model", None)) if p]
        if any(name in str(exc) for name in named):
            raise
        raise DatasetError(f"{args.dataset}: {exc}") from None


def _on_dataset(args: argparse.Namespace) -> int:
    """``calibrate``, ``train`` or ``evaluate`` of ``args.dataset``; what :func:`run` prints."""
    if args.action == "evaluate":
        errors_evaluate.check_arguments(args)
    if args.action == "evaluate" and args.split is not None:
        _check_registration(args)
        split = errors_evaluate.split_result(args, *_inputs(args))
        print_json(split) if args.json else errors_evaluate.print_split_result(split)
        return 0
    labelled, kinematics = _labelled(args)
    result: dict[str, Any] = {"dataset": str(args.dataset), "rows": labelled.cleaned.counts}
    result["calibration"] = labelled.hand_eye.summary()
    if labelled.kinematic is not None:
        result["kinematic_calibration"] = labelled.kinematic.summary(kinematics.joint_names)
    if labelled.marker_reading_gap is not None:
        t_m, r_rad = labelled.marker_reading_gap
        result["marker_reading_gap"] = {"translation_mm": 1e3 * t_m, "rotation_deg": math.degrees(r_rad)}
    if args.action == "calibrate":
        result["X_tip_marker"] = labelled.hand_eye.X.tolist()
        result["Y_base_tracker"] = labelled.hand_eye.Y.tolist()
    elif args.action == "train":
        result |= _train(args, labelled)
    else:
        result |= errors_evaluate.model_result(args, labelled, kinematics)
    if args.json:
        print_json(result)
    else:
        _print(args.action, result)
    return 0


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse an output that is an input, has the wrong suffix or lies in a folder that does not exist.

    A missing folder was found only after the whole collection or training ran, which was then lost.
    """
    from cosim_validation.cli.output_path import check_folder, checked_output

    inputs = {
        "DATASET": getattr(args, "dataset", None),
        "--model": getattr(args, "model", None),
        "--config": getattr(args, "config", None),
        "--from-run": getattr(args, "from_run", None),
    }
    suffix = {"collect": (".parquet",), "train": (".npz",)}.get(args.action)
    if suffix is not None:
        checked_output("-o", args.output, inputs, suffix, result=True)
        check_folder("-o", args.output)
    if getattr(args, "html", None):
        checked_output("--html", args.html, inputs, (".html",))
        check_folder("--html", args.html)


def _train(args: argparse.Namespace, labelled: Any) -> dict[str, Any]:
    from cosim_validation.error_injection.learning import LearnSettings, learn
    from cosim_validation.error_injection.training import TrainingSettings

    training = TrainingSettings(max_epochs=args.max_epochs, seed=args.seed)
    model, report = learn(
        labelled, LearnSettings(args.nn1, args.nn2, training, args.search, args.plain), str(args.dataset)
    )
    model.save(args.output)
    return {"model": str(args.output), "nn1": report["nn1"], "nn2": report["nn2"]}


def _print(action: str, result: dict[str, Any]) -> None:
    rows, cal = result["rows"], result["calibration"]
    print(
        f"{result['dataset']}: {rows['rows']} rows, {rows['nan_joints']} dropped (joints not finite), "
        f"{rows['marker_dropouts']} marker dropouts, {rows['registration_error_above']} above the registration "
        f"error threshold, {rows.get('ik_unreached', 0)} poses the joints do not reach"
    )
    print(
        f"calibration ({cal['method']}, {cal['poses']} poses): residual {cal['translation_mean_mm']:.3f} mm mean "
        f"({cal['translation_max_mm']:.3f} max), {cal['rotation_mean_deg']:.3f} deg mean"
    )
    if "kinematic_calibration" in result:
        _print_kinematic(result["kinematic_calibration"])
    if "marker_reading_gap" in result:
        gap = result["marker_reading_gap"]
        print(
            f"tracker floor: one reading misses the marker's pose by {gap['translation_mm']:.3f} mm, "
            f"{gap['rotation_deg']:.3f} deg (mean; the mean of k readings by about 1/sqrt(k) of it)"
        )
    if action == "train":
        for key in ("nn1", "nn2"):
            net = result[key]
            mask = net.get("mask")
            joints = "every joint" if mask is None else f"joints {[i + 1 for i, m in enumerate(mask) if m]}"
            print(
                f"{key}: {net['features']}, {net['rows']} rows ({net['rows_used']}), {net['epochs']} epochs, "
                f"validation MSE {net['validation_mse']:.4f} (normalised), injected on {joints}"
            )
            spread = net.get("spread")
            if spread is not None and mask is not None and any(mask):
                on = [i for i, m in enumerate(mask) if m]
                sigma = ", ".join(f"{1e3 * spread['sigma'][i]:.3f}" for i in on)
                phi = ", ".join(f"{spread['phi'][i]:.2f}" for i in on)
                print(f"  residual spread of those joints: sigma {sigma} (mrad, mm for a prismatic joint), lag-1 {phi}")
        print(f"wrote {result['model']}")
        if any(any(result[key].get("mask") or []) for key in ("nn1", "nn2")):
            print("  (errors:model=M,sample=SEED injects the offsets with a draw of that spread)")
    elif action == "evaluate":
        errors_evaluate.print_model_result(result)


def _print_kinematic(kin: dict[str, Any]) -> None:
    """The kinematic calibration: residuals before and after, the parameters, those held at nominal."""
    for when in ("before", "after"):
        r = kin[when]
        print(
            f"  {when} the kinematic calibration: {r['translation_mean_mm']:.3f} mm mean "
            f"({r['translation_p95_mm']:.3f} p95), {r['rotation_mean_deg']:.3f} deg mean "
            f"({r['rotation_p95_deg']:.3f} p95)"
        )
    model = kin["joint_map"]
    for i, name in enumerate(model["joint_names"]):
        print(
            f"  {name}: offset {model['offset'][i]:+.3e}, scale {model['scale'][i]:.5f}, "
            f"lost motion {model['lost_motion'][i]:+.2e}"
        )
    for (a, b), c in zip(model["coupled"], model["coupling"], strict=True):
        print(f"  coupling {model['joint_names'][a]}->{model['joint_names'][b]}: {c:+.4f}")
    held = kin["held_at_nominal"]
    print(f"  held at nominal (not identifiable from the data): {', '.join(held) if held else 'none'}")
