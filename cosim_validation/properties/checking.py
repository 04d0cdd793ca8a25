"""Checking stored records: properties, KPIs and behaviour machines of each robot's run (``cosim check``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from cosim_validation.properties.context import DistanceField, SelfCollisionCheck
from cosim_validation.properties.kpi import target_point
from cosim_validation.properties.machines import MachineResult, run_machine, shipped
from cosim_validation.properties.offline import evaluate_run
from cosim_validation.properties.property_set import PropertySet
from cosim_validation.properties.sample import Block
from cosim_validation.properties.scene_context import record_context
from cosim_validation.properties.verdict import Kpi, Verdict
from cosim_validation.record import RobotRole, TrajectoryRecord


@dataclass(frozen=True)
class RecordReport:
    """What the monitor says about one record.

    Attributes:
        source: Where the record came from (file name), for display.
        test_id, robot, backend, n_samples: From the record.
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


def check_records(
    properties: PropertySet,
    records: Sequence[TrajectoryRecord],
    expected: TrajectoryRecord | None = None,
    obstacles: Mapping[str, DistanceField] | None = None,
    target_m: np.ndarray | None = None,
    *,
    machines: bool = True,
    sources: Sequence[str] | None = None,
    self_collision: Callable[[TrajectoryRecord], SelfCollisionCheck | None] | None = None,
) -> list[RecordReport]:
    """Evaluate ``properties`` (and its machines) on every record.

    Args:
        properties: Properties, KPIs and the names of the machines to run.
        records: Robots' runs of one case (the expected one is checked too, without comparing it with itself).
        expected: The plan the other robots are compared with (None: deviation properties are UNKNOWN).
        obstacles: Forbidden regions by name.
        target_m: (3,) the case's target [m]; default: each record's ``meta['target_m']``, else the plan's
            last injection sample (KPIs and machines).
        machines: Whether to run the behaviour machines listed in ``properties.machines``.
        sources: Display names of the records (default: their test ids).
        self_collision: The self-collision check for a record (its robot and needle), or None: unknown.
    """
    reports = []
    for i, record in enumerate(records):
        check = self_collision(record) if self_collision is not None else None
        context = record_context(record, obstacles, target_m=target_m, self_collision=check)
        plan = None if record.robot is RobotRole.EXPECTED else expected
        result = evaluate_run(properties, record, context, plan)
        results: list[MachineResult] = []
        if machines:
            target = target_point(context, Block.from_record(expected) if expected is not None else None)
            results = [run_machine(shipped(name), record, target) for name in properties.machines]
        source = sources[i] if sources is not None else record.test_id
        verdicts = (*result.verdicts, *(m.to_verdict() for m in results))
        header = (source, record.test_id, record.robot.label, record.backend, record.n_samples)
        reports.append(RecordReport(*header, verdicts, result.kpis, tuple(results)))
    return reports
