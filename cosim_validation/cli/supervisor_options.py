"""The options that put the task supervisor into the control loop, shared by campaign, session and run-case."""

from __future__ import annotations

import argparse

from cosim_validation.cli import arg_types

#: The shipped supervisor configuration (``--supervisor`` without a path).
DEFAULT_SUPERVISOR = "config/supervisor/supervisor.yaml"


def add_supervisor_options(parser: argparse.ArgumentParser) -> None:
    """``--supervisor [PATH]`` and ``--supervisor-scenario PATH``.

    Args:
        parser: The parser of ``cosim campaign``, ``cosim session`` or ``cosim run-case``, to add the options to.
    """
    parser.add_argument(
        "--supervisor",
        type=arg_types.path,
        nargs="?",
        const=DEFAULT_SUPERVISOR,
        default=None,
        metavar="PATH",
        help="run every case under the task supervisor (after Preda et al. 2016; docs/SUPERVISOR.md): one step "
        "per control "
        f"period decides each setpoint (default PATH: {DEFAULT_SUPERVISOR}; without the option: "
        "campaign.supervisor of the configuration, absent as shipped: the plan is streamed as planned)",
    )
    parser.add_argument(
        "--supervisor-scenario",
        type=arg_types.path,
        default=None,
        metavar="PATH",
        help="scripted user requests, sensor faults and teleoperation for the supervisor (a scenario file, "
        "docs/SUPERVISOR.md; needs a supervisor)",
    )


def supervisor_paths(args: argparse.Namespace, must_exist: bool = True) -> tuple[str | None, str | None]:
    """The supervisor configuration and scenario chosen (paths resolved as the configuration's are).

    Args:
        args: The parsed options.
        must_exist: False for a resume: a file gone since the run started is read from the run's copy
            (:mod:`~cosim_validation.runs.run_supervision` checks the path names the run's file).

    Raises:
        InputError: A file given that does not exist or is not a regular file (not checked when ``must_exist``
            is False); a scenario without a supervisor is refused later, when the supervision is checked.
    """
    from cosim_validation.common.config import regular_file_problem, resolve_resource
    from cosim_validation.common.exceptions import InputError

    chosen: list[str | None] = []
    for option, value in (("--supervisor", args.supervisor), ("--supervisor-scenario", args.supervisor_scenario)):
        if value is None:
            chosen.append(None)
            continue
        path = resolve_resource(value)
        problem = regular_file_problem(path) if must_exist else None
        if problem == "not found":
            raise InputError(f"{option}: file {value!r} does not exist")
        if problem is not None:
            raise InputError(f"{option}: file {value!r} is {problem}")
        chosen.append(str(path))
    return chosen[0], chosen[1]
