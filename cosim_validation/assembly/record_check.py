"""The monitor's offline verdicts on whole records: a campaign's cases and ``cosim check``.

One robot's record is checked with :func:`~cosim_validation.monitor.properties.offline.evaluate_run` (properties,
KPIs and behaviour machines, as the online monitor does sample by sample) in the context the
:class:`~cosim_validation.assembly.monitor_world.MonitorWorld` builds for the case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cosim_validation.assembly.monitor_world import MonitorWorld
from cosim_validation.common.exceptions import InputError
from cosim_validation.common.record import RobotRole, TrajectoryRecord
from cosim_validation.monitor.properties.kpis.specs import plan_target
from cosim_validation.monitor.properties.machines import MachineResult
from cosim_validation.monitor.properties.offline.evaluation import evaluate_run
from cosim_validation.monitor.properties.sample import Block
from cosim_validation.monitor.properties.scene_context import record_target
from cosim_validation.monitor.properties.verdict import Kpi, Verdict
from cosim_validation.robots.model.errors import KinematicsInputError


@dataclass(frozen=True)
class RecordReport:
    """What the monitor says about one record.

    Attributes:
        source: Where the record came from (file name), for display.
        test_id: From the record.
        robot: From the record.
        backend: From the record.
        n_samples: From the record.
        verdicts: Property verdicts, then one ``machine:<name>`` verdict per behaviour machine.
        kpis: The KPIs.
        machines: The machines' detailed results.
    """

    source: str
    test_id: str
    robot: str
    backend: str
    n_samples: int
    verdicts: tuple[Verdict, ...]
    kpis: tuple[Kpi, ...]
    machines: tuple[MachineResult, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain values for JSON."""
        return {
            "source": self.source,
            "test_id": self.test_id,
            "robot": self.robot,
            "backend": self.backend,
            "n_samples": self.n_samples,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "kpis": [k.to_dict() for k in self.kpis],
            "machines": [
                {"machine": m.machine, "status": m.status.label, "final_state": m.final_state, "reason": m.reason}
                for m in self.machines
            ],
        }


def case_target(
    records: Sequence[TrajectoryRecord], expected: TrajectoryRecord | None, given_m: np.ndarray | None = None
) -> np.ndarray | None:
    """The target of a case, or None when nothing says.

    ``given_m``, else a record's ``meta['target_m']``, else the plan's tip at the end of injection.

    Args:
        records: The case's records.
        expected: The plan's record, or None.
        given_m: The target in base_link, shape (3,), in [m], or None.

    Returns:
        The target in base_link, shape (3,), in [m], or None.
    """
    if given_m is not None:
        return np.asarray(given_m, dtype=np.float64)
    for record in ([expected] if expected is not None else []) + list(records):
        stored = record_target(record)
        if stored is not None:
            return stored
    if expected is None or expected.n_samples == 0:
        return None
    planned = plan_target(Block.from_record(expected))
    return None if planned is None else np.array(planned, dtype=np.float64)


def _check_joints(source: str, record: TrajectoryRecord, robot_joints: tuple[str, ...]) -> None:
    """Refuse a record of another arm: its joints must be the configured robot's, in its order.

    A record of 6 joints judged on the 7-joint arm ended in an IndexError traceback; one of another arm's 6 joints
    was judged with this arm's kinematics without a word.
    """
    if tuple(record.joint_names) != tuple(robot_joints):
        raise InputError(
            f"{source}: the record's joints ({', '.join(record.joint_names) or 'none'}) are not those of the "
            f"configured robot ({', '.join(robot_joints)}); check it with the --config of the arm it was recorded on"
        )


def check_records(
    world: MonitorWorld,
    records: Sequence[TrajectoryRecord],
    expected: TrajectoryRecord | None = None,
    target_m: np.ndarray | None = None,
    *,
    machines: bool = True,
    sources: Sequence[str] | None = None,
    obstacles: bool = True,
    self_collision: bool = True,
    expected_source: str = "the expected record",
) -> list[RecordReport]:
    """Evaluate the world's properties, KPIs and machines on every record of one case.

    Args:
        world: The monitor's world.
        records: Robots' runs of one case (the expected one is checked too, without comparing it with itself).
        expected: The plan the other robots are compared with (None: deviation properties are UNKNOWN).
        target_m: (3,) the case's target in base_link [m]; None: :func:`case_target` of the records.
        machines: Whether to run the behaviour machines listed in the property set.
        sources: Display names of the records (default: their test ids).
        obstacles: False: no forbidden regions (obstacle properties are UNKNOWN).
        self_collision: False: no self-collision model (that property is UNKNOWN).
        expected_source: The display name of ``expected`` (its file), for the error of a record of another arm.

    Raises:
        InputError: A record whose joints are not the world's robot's, or a needle the arm cannot carry.
    """
    names = [(sources[i] if sources is not None else r.test_id, r) for i, r in enumerate(records)]
    for source, record in [*names, *([(expected_source, expected)] if expected is not None else [])]:
        _check_joints(source, record, world.kinematics.joint_names)
    target = case_target(records, expected, target_m)
    reports = []
    for source, record in names:
        try:
            context = world.context(target, record.needle_length_m)
        except KinematicsInputError as exc:  # a needle the arm cannot carry: name the record's file
            raise InputError(f"{source}: header: {exc}") from None
        if not obstacles or not self_collision:
            context = replace(
                context,
                obstacles=context.obstacles if obstacles else {},
                self_collision=context.self_collision if self_collision else None,
                self_distance=context.self_distance if self_collision else None,
            )
        plan = None if record.robot is RobotRole.EXPECTED else expected
        result = evaluate_run(world.properties, record, context, plan, machines=None if machines else ())
        header = (source, record.test_id, record.robot.label, record.backend, record.n_samples)
        reports.append(RecordReport(*header, result.verdicts, result.kpis, result.machines))
    return reports
