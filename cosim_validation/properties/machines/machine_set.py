"""The behaviour machines of a property set, run live next to the properties (one robot's samples)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cosim_validation.properties.machines.examples import shipped
from cosim_validation.properties.machines.runner import MachineRunner
from cosim_validation.properties.sample import Sample
from cosim_validation.properties.verdict import Verdict
from cosim_validation.record import RobotRole


class MachineSet:
    """Runs shipped machines by name on one robot's samples; results as ``machine:<name>`` verdicts.

    Args:
        names: Names of shipped machines (``PropertySet.machines``).
        robot: The robot whose samples are replayed.
        target_m: (3,) the case's target [m] for machines that need it, or None.
    """

    def __init__(self, names: Sequence[str], robot: RobotRole, target_m: np.ndarray | None) -> None:
        self.runners = [MachineRunner(shipped(name), robot, target_m) for name in names]

    def push(self, sample: Sample) -> list[Verdict]:
        """Replay one sample; the verdicts of machines that just entered red (failed at once)."""
        out = []
        for runner in self.runners:
            failed = runner.push(sample) if runner.result is None else None
            if failed is not None:
                out.append(failed.to_verdict())
        return out

    def finish(self) -> list[Verdict]:
        """Every machine's final verdict, in order."""
        return [runner.finish().to_verdict() for runner in self.runners]
