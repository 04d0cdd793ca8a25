"""The behaviour tests a property set names, run on the statechart core.

They are [Fabry and Sinclair 2016]'s tests in YAML (docs/SUPERVISOR.md).

A property set's ``machines:`` lists shipped behaviour machines by name (``config/behaviours/<name>.yaml``) or
machine files by path (relative to the property file). They run through
:class:`cosim_validation.monitor.statechart.behaviour.BehaviourRunner`, online and offline alike; their results are
given as :class:`~cosim_validation.monitor.properties.machines.result.MachineResult` (verdict ``machine:<name>``),
field for field what the Python DSL machines of ``test/monitor/properties/lt4r_reference/examples.py`` give
(``test/monitor/statechart/test_behaviour.py``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from cosim_validation.common.config.bounded_file import regular_file_problem
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, TrajectoryRecord
from cosim_validation.monitor.properties.machines.result import MachineResult
from cosim_validation.monitor.properties.verdict import Status
from cosim_validation.monitor.statechart.behaviour import (
    BehaviourResult,
    BehaviourRunner,
    load_behaviour,
    run_behaviour,
    run_behaviours,
)
from cosim_validation.monitor.statechart.model import Machine
from cosim_validation.monitor.statechart.snapshot import Snapshots

_STATUS = {"holds": Status.HOLDS, "violated": Status.VIOLATED, "unknown": Status.UNKNOWN}


def is_path(ref: str) -> bool:
    """Whether a ``machines:`` entry is a machine file (else a shipped machine's name).

    Args:
        ref: The entry; a machine file's name ends in ``.yaml`` or ``.yml``.
    """
    return Path(ref).suffix in (".yaml", ".yml")


@functools.lru_cache(maxsize=64)
def behaviour_machine(ref: str) -> Machine:
    """The machine of a shipped name or an (absolute) machine file, loaded once per process.

    Args:
        ref: A shipped machine's name, or a machine file's path as :func:`checked_ref` returns it (absolute).

    Raises:
        ConfigError, InputError: An unknown name or a bad machine file (naming it and the key).
    """
    return load_behaviour(ref)


def machine_result(result: BehaviourResult) -> MachineResult:
    """A behaviour test's result in the monitor's form.

    Args:
        result: The result of a behaviour machine run on the statechart core.
    """
    return MachineResult(
        result.machine,
        result.robot,
        _STATUS[result.status],
        result.final_state,
        result.time_s,
        result.stage,
        result.reason,
        result.transitions,
    )


def run_named(ref: str, record: TrajectoryRecord, target_m: np.ndarray | None) -> MachineResult:
    """Replay ``record`` through the behaviour machine ``ref`` (offline).

    Args:
        ref: A shipped machine's name or a machine file.
        record: The robot's trajectory.
        target_m: The case's target in base_link, shape (3,), in [m]; None: no target.
    """
    return machine_result(run_behaviour(behaviour_machine(ref), record, target_m))


def run_all(refs: Sequence[str], record: TrajectoryRecord, target_m: np.ndarray | None) -> tuple[MachineResult, ...]:
    """Replay ``record`` through every behaviour machine of ``refs`` at once (offline): :func:`run_named` of each.

    Args:
        refs: Shipped machines' names or machine files, in the order of the results.
        record: The robot's trajectory.
        target_m: The case's target in base_link, shape (3,), in [m]; None: no target.
    """
    machines = [behaviour_machine(ref) for ref in refs]
    return tuple(machine_result(r) for r in run_behaviours(machines, record, target_m))


class BehaviourSet:
    """Runs a property set's behaviour machines on one robot's samples; results as ``machine:<name>`` verdicts.

    Args:
        refs: Shipped names or machine files (``PropertySet.machines``).
        robot: The robot whose samples are replayed.
        target_m: (3,) the case's target in base_link [m], or None.
    """

    def __init__(self, refs: tuple[str, ...] | list[str], robot: RobotRole, target_m: np.ndarray | None) -> None:
        target = None if target_m is None else np.asarray(target_m, dtype=np.float64)
        snapshots = Snapshots(target)
        self.runners = [BehaviourRunner(behaviour_machine(ref), robot, target, snapshots) for ref in refs]

    def push(self, sample: object) -> list[MachineResult]:
        """Replay one sample; the results of machines that just entered red (failed at once).

        Args:
            sample: The robot's next sample, in time order (a :class:`~cosim_validation.monitor.properties.Sample`
                or any sample with the fields the machines read).
        """
        out = []
        for runner in self.runners:
            failed = runner.push(sample) if runner.result is None else None  # type: ignore[arg-type]
            if failed is not None:
                out.append(machine_result(failed))
        return out

    def finish(self) -> list[MachineResult]:
        """Every machine's final result, in order."""
        return [machine_result(runner.finish()) for runner in self.runners]


def checked_ref(ref: str, base_dir: Path) -> str:
    """A ``machines:`` entry made loadable from anywhere (a relative path: against ``base_dir``), loaded once.

    Args:
        ref: A shipped machine's name or a machine file's path (ending in ``.yaml`` or ``.yml``).
        base_dir: Folder a relative machine file path is taken against (the property file's folder).

    Returns:
        ``ref`` itself for a shipped name, else the machine file's absolute path.

    Raises:
        ConfigError, InputError: An unknown shipped name, a missing or bad machine file.
    """
    if is_path(ref):
        path = Path(ref) if Path(ref).is_absolute() else base_dir / ref
        problem = regular_file_problem(path)
        if problem is not None:  # "not found", "a loop of symbolic links", "a FIFO (named pipe), ...", ...
            raise InputError(f"behaviour machine file {str(path)!r}: {problem}")
        ref = str(path.resolve())
    behaviour_machine(ref)
    return ref
