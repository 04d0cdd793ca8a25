"""``cosim run-case``: plan one case with a controller, run it on a robot backend, print per-stage numbers."""

from __future__ import annotations

import argparse
import time
from typing import Any

from cosim_validation.cli import arg_types
from cosim_validation.cli.arg_types import coordinate, name, seed
from cosim_validation.cli.supervisor_options import add_supervisor_options, supervisor_paths
from cosim_validation.common.exceptions import InputError

HELP = "plan one needle-insertion case (five stages) and run it on a robot backend"

# exit code of a case the controller refuses (bad input is an error: exit code 1)
EXIT_REFUSED = 2
#: exit code of a case the controller, a robot or the client aborted: the run did not do what was asked, and a script
#: must see it (a stop by the state validator or the supervisor is their verdict, exit code 0)
EXIT_ABORTED = 3
#: The outcome of a case aborted by each of these (``CaseRun.stopped_by``); any other abort is "aborted"
_STOPPED = {"validator": "stopped_by_validator", "supervisor": "stopped_by_supervisor"}
_INPUT_REASONS = ("bad_input", "target_outside_target_model", "target_in_obstacle", "source_inside_body")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``run-case``.

    Args:
        parser: The ``cosim run-case`` subcommand's parser, to add its options to.
    """
    parser.add_argument(
        "--config", type=arg_types.path, default="config/needle_insertion.yaml", help="configuration file"
    )
    parser.add_argument(
        "--target",
        nargs=3,
        type=coordinate,
        required=True,
        metavar=("X", "Y", "Z"),
        help="target point in base_link [m]",
    )
    parser.add_argument(
        "--source",
        nargs=3,
        type=coordinate,
        metavar=("X", "Y", "Z"),
        help="source point in base_link [m] (default: planning.default_source_m)",
    )
    parser.add_argument(
        "--backend",
        type=name,
        default=None,
        help="mujoco | pybullet | coppeliasim | emulated | ros2_control (default: backends.default)",
    )
    parser.add_argument(
        "--controller",
        default=None,
        help="straight | guarded | joint_goals | teleoperation | error_collection, an entry point of group "
        "cosim_validation.controllers or an import path module:attribute (docs/CONTROLLERS.md; default: "
        "controllers.default)",
    )
    parser.add_argument(
        "--validate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="check every setpoint with the state validator; a refusal stops the robot (default: validator.enabled "
        "of the configuration, off as shipped)",
    )
    parser.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="ROBOT=KIND:OPTIONS",
        help="see a robot through a filter (repeat for more, innermost first): offset (a fixed joint offset, e.g. "
        "physical=offset:joint2=0.001), errors, hazards; the same in a campaign and in a session",
    )
    parser.add_argument("--seed", type=seed, default=None, help="seed of the emulated arm (default: config)")
    add_supervisor_options(parser)


def run(args: argparse.Namespace) -> int:
    """Plan, execute, summarize; print a table (or JSON with --json).

    Args:
        args: The parsed ``cosim run-case`` command line (the arguments of :func:`add_arguments`, and ``--json``).
    """
    from cosim_validation.assembly import AssemblySpec, CaseAssembly
    from cosim_validation.common.config import load_case_config, resolve_resource
    from cosim_validation.controllers.planning.stage_summary import summarize_stages
    from cosim_validation.robots.filters.robot_filters import FilterSpec
    from cosim_validation.robots.registry import default_backend

    config_path = resolve_resource(args.config)
    backend = args.backend or default_backend(load_case_config(config_path))
    filters = tuple((f.robot.label, f.text) for f in (FilterSpec.parse(text) for text in args.filter))
    supervisor, scenario = supervisor_paths(args)
    spec = AssemblySpec(
        str(config_path),
        (backend,),
        args.controller,
        args.validate,
        robot_seed=args.seed,
        filters=filters,
        supervisor=supervisor,
        supervisor_scenario=scenario,
    )
    assembly = CaseAssembly(spec)
    source = assembly.setup.planning.default_source_m if args.source is None else args.source
    case = manual_case(source, args.target)
    timer = _timer()
    try:
        batch = assembly.run_batch(case, timer)
    finally:
        assembly.close()
    run = batch.run
    if run.outcome == "refused":
        if run.message.split(":", 1)[0] in _INPUT_REASONS:
            raise InputError(f"run-case: {run.message}")
        return _refused(args, assembly.controller_name, run.message)
    planning_s, execution_s = timer.split()
    expected, executed = batch.records[0], batch.records[1]
    assert run.plan is not None
    stages = summarize_stages(run.plan, expected, executed, assembly.setup.world, case.target_m)
    supervised = assembly.supervision is not None
    outcome = _outcome(run, supervised)
    stop = run.executed if run.outcome == "aborted" and not supervised else None
    report: dict[str, Any] = {"outcome": outcome, "message": run.message}
    report |= _report(run.plan, assembly.controller_name, executed.backend, stages, (planning_s, execution_s), stop)
    report["target_m"] = case.target_m  # the case's target; the plan's is planned_target_m (a plugin may differ)
    report["executed_samples"] = run.executed  # a closed-loop case may end before its reference, or run past it
    if outcome == "stopped_by_validator":
        report["validator_stop_sample"] = run.executed
    report["anatomy_repairs"] = assembly.setup.scene.repairs()  # what repair: true removed
    if supervised:
        report |= _supervised(run)
    _print(args, report, assembly.setup.scene.repair_lines())
    return EXIT_ABORTED if outcome == "aborted" else 0


def _timer() -> Any:
    """A case listener that notes when the case started streaming.

    Planning (and the robot's reset) come before, execution after; its ``split()`` gives (planning_s, execution_s) [s].
    Built here so that importing this module (``cosim --help`` builds every subcommand's parser) does not import the
    case assembly.
    """
    from cosim_validation.assembly.lockstep import CaseListener
    from cosim_validation.common.record import RobotRole

    class Timer(CaseListener):
        def __init__(self) -> None:
            self.started = time.perf_counter()
            self.streaming = self.started

        def before_streaming(self, robots: tuple[RobotRole, ...]) -> None:
            self.streaming = time.perf_counter()

        def split(self) -> tuple[float, float]:
            return self.streaming - self.started, time.perf_counter() - self.streaming

    return Timer()


def manual_case(source_m: Any, target_m: Any) -> Any:
    """A test case from a source and a target given on the command line [m].

    Args:
        source_m: The source point in base_link, 3 numbers, in [m].
        target_m: The target point in base_link, 3 numbers, in [m].
    """
    import numpy as np

    from cosim_validation.testgen import TestCase

    source = np.asarray(source_m, dtype=np.float64)
    target = np.asarray(target_m, dtype=np.float64)
    return TestCase("run-case", "", "base_link", source, target, np.full(3, -1), 0.0, "manual", 0, 0.0)


def _supervised(run: Any) -> dict[str, Any]:
    """What the task supervisor did: its transitions, the setpoints streamed, why it stopped."""
    transitions = [
        {"t_s": d.status.t_s, "transition": d.status.transition, "events": list(d.status.events)}
        for d in run.supervision
        if d.status.transition
    ]
    return {
        "samples": run.executed,
        "duration_s": run.duration_s,
        "supervisor": {"streamed": run.executed, "transitions": transitions, "message": run.message},
    }


def _refused(args: argparse.Namespace, controller: str, message: str) -> int:
    from cosim_validation.cli.output import print_json

    reason, _, text = message.partition(": ")
    if args.json:
        print_json({"outcome": "refused", "controller": controller, "reason": reason, "message": text})
    else:
        print(f"refused by {controller} ({reason}): {text}")
    return EXIT_REFUSED


def _outcome(run: Any, supervised: bool) -> str:
    """How the case ended, for the report: ``executed`` (``completed`` under the supervisor), or who stopped it."""
    if run.outcome == "completed":
        return "completed" if supervised else "executed"
    by = run.stopped_by.value if run.stopped_by is not None else ""
    return _STOPPED.get(by, "aborted")  # the controller, a robot or the client: aborted


def _report(
    plan: Any,
    controller: str,
    backend: str,
    stages: list[Any],
    times_s: tuple[float, float],
    stop_index: int | None,
) -> dict[str, Any]:
    """The report of a case that was planned.

    ``times_s``: (planning, execution) [s]; ``stop_index``: the samples executed of an aborted case (None when every
    sample was).
    """
    line = plan.line
    return {
        "controller": controller,
        "backend": backend,
        "source_m": plan.source_m,
        "target_m": line.target_m,
        "planned_target_m": line.target_m,
        "entry_m": line.entry_m,
        "needle_axis": line.axis,
        "depth_m": line.depth_m,
        "samples": plan.n_samples,
        "duration_s": plan.duration_s,
        "planning_s": times_s[0],
        "execution_s": times_s[1],
        "validator_stop_sample": None,
        "stop_sample": stop_index,
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
    executed, planned = report["executed_samples"], report["samples"]
    # "1201 of 230 samples" for a closed-loop case run past its reference, "230 samples" for one done at the first
    samples = f"{executed} sample{'s' if executed != 1 else ''}"
    samples += "" if executed == planned else f" (the plan has {planned})"
    print(
        f"{report['controller']} controller on {report['backend']}: {report['outcome']}, {samples}, "
        f"{report['duration_s']:.1f} s; depth {report['depth_m'] * mm:.1f} mm; "
        f"planned in {report['planning_s'] * mm:.0f} ms, executed in {report['execution_s']:.2f} s"
    )
    if report["stop_sample"] is not None:
        print(f"stopped at sample {report['stop_sample']}: {report['message']}")
    for item in report.get("supervisor", {}).get("transitions", []):
        print(f"supervisor {item['t_s']:6.1f} s  {item['transition']}")
    if report["stop_sample"] is None and report["outcome"] not in ("executed", "completed"):
        print(f"{report['outcome'].replace('_by_', ' by the ').replace('_', ' ')}: {report['message']}")
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
    if injection is not None and report["stop_sample"] is None:
        print(f"targeting error (tip at the end of injection to the target): {injection['goal_error_m'] * mm:.3f} mm")
