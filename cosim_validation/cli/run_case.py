"""``cosim run-case``: plan one case with a controller, run it on a robot backend, print per-stage numbers."""

from __future__ import annotations

import argparse
import time
from typing import Any

HELP = "plan one needle-insertion case (five stages) and run it on a robot backend"

# exit code of a case the controller refuses (bad input is an error: exit code 1)
EXIT_REFUSED = 2
_INPUT_REASONS = ("bad_input", "target_outside_target_model", "target_in_obstacle", "source_inside_body")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``run-case``."""
    parser.add_argument("--config", default="config/needle_insertion.yaml", help="configuration file")
    parser.add_argument(
        "--target", nargs=3, type=float, required=True, metavar=("X", "Y", "Z"), help="target point in base_link [m]"
    )
    parser.add_argument(
        "--source",
        nargs=3,
        type=float,
        metavar=("X", "Y", "Z"),
        help="source point in base_link [m] (default: planning.default_source_m)",
    )
    parser.add_argument("--backend", default=None, help="mujoco | pybullet | emulated (default: backends.default)")
    parser.add_argument("--controller", default=None, help="straight | guarded (default: controllers.default)")
    parser.add_argument("--validate", action="store_true", help="check every setpoint with the state validator")
    parser.add_argument("--seed", type=int, default=None, help="seed of the emulated arm (default: config)")


def run(args: argparse.Namespace) -> int:
    """Plan, execute, summarize; print a table (or JSON with --json)."""
    from cosim_validation.config import load_case_config, resolve_resource
    from cosim_validation.controllers import InsertionSetup
    from cosim_validation.planning import PlanningError, validated_setpoints
    from cosim_validation.planning.stage_summary import summarize_stages
    from cosim_validation.sim import execute_trajectory, make_backend

    root = load_case_config(resolve_resource(args.config))
    setup = InsertionSetup.from_config(root)
    kinematics = setup.robot.kinematics
    source = setup.planning.default_source_m if args.source is None else args.source
    controller = setup.controller(args.controller)
    started = time.perf_counter()
    try:
        plan = controller.plan_case(source, args.target)
    except PlanningError as exc:
        if exc.reason in _INPUT_REASONS:
            raise
        return _refused(args, controller.name, exc)
    planning_s = time.perf_counter() - started
    expected = plan.to_record(kinematics, "run-case")
    sent, stop_index = plan.q_rad, None
    if args.validate:
        sent, stop_index = validated_setpoints(setup.state_validator(), plan.q_rad)
    backend = make_backend(args.backend, root, kinematics, seed=args.seed)
    try:
        started = time.perf_counter()
        executed = execute_trajectory(backend, kinematics, plan.t_s, plan.stage, sent, test_id="run-case")
        execution_s = time.perf_counter() - started
    finally:
        backend.close()
    stages = summarize_stages(plan, expected, executed, setup.world)
    report = _report(plan, controller.name, executed.backend, stages, planning_s, execution_s, stop_index)
    report["anatomy_repairs"] = setup.scene.repairs()  # what repair: true removed (issue 15)
    _print(args, report, setup.scene.repair_lines())
    return 0


def _refused(args: argparse.Namespace, controller: str, exc: Any) -> int:
    from cosim_validation.cli.output import print_json

    if args.json:
        print_json({"outcome": "refused", "controller": controller, "reason": exc.reason, "message": str(exc)})
    else:
        print(f"refused by {controller} ({exc.reason}): {exc}")
    return EXIT_REFUSED


def _report(
    plan: Any,
    controller: str,
    backend: str,
    stages: list[Any],
    planning_s: float,
    execution_s: float,
    stop_index: int | None,
) -> dict[str, Any]:
    line = plan.line
    return {
        "outcome": "stopped_by_validator" if stop_index is not None else "executed",
        "controller": controller,
        "backend": backend,
        "source_m": plan.source_m,
        "target_m": line.target_m,
        "entry_m": line.entry_m,
        "needle_axis": line.axis,
        "depth_m": line.depth_m,
        "samples": plan.n_samples,
        "duration_s": plan.duration_s,
        "planning_s": planning_s,
        "execution_s": execution_s,
        "validator_stop_sample": stop_index,
        "stages": [
            {
                "stage": s.stage.label,
                "duration_s": s.duration_s,
                "tip_deviation_mean_m": s.deviation_mean_m,
                "tip_deviation_max_m": s.deviation_max_m,
                "goal": s.goal,
                "goal_error_m": s.goal_error_m,
                "forbidden_distance_m": s.forbidden_distance_m,
                "forbidden_region": s.forbidden_name,
            }
            for s in stages
        ],
    }


def _print(args: argparse.Namespace, report: dict[str, Any], repair_lines: list[str]) -> None:
    from cosim_validation.cli.output import format_table, print_json

    if args.json:
        print_json(report)
        return
    for line in repair_lines:
        print(line)
    mm = 1e3
    print(
        f"{report['controller']} controller on {report['backend']}: {report['outcome']}, "
        f"{report['samples']} samples, {report['duration_s']:.1f} s; depth {report['depth_m'] * mm:.1f} mm; "
        f"planned in {report['planning_s'] * mm:.0f} ms, executed in {report['execution_s']:.2f} s"
    )
    if report["validator_stop_sample"] is not None:
        print(f"state validator stopped the robot at sample {report['validator_stop_sample']}")
    headers = [
        "stage",
        "duration s",
        "tip dev mean mm",
        "tip dev max mm",
        "goal",
        "goal error mm",
        "min needle dist mm",
        "to",
    ]
    rows = [
        [
            s["stage"],
            s["duration_s"],
            s["tip_deviation_mean_m"] * mm,
            s["tip_deviation_max_m"] * mm,
            s["goal"],
            s["goal_error_m"] * mm,
            s["forbidden_distance_m"] * mm,
            s["forbidden_region"] or "-",
        ]
        for s in report["stages"]
    ]
    print(format_table(headers, rows))
    injection = next((s for s in report["stages"] if s["stage"] == "injection"), None)
    if injection is not None:
        print(f"targeting error (tip at the end of injection to the target): {injection['goal_error_m'] * mm:.3f} mm")
