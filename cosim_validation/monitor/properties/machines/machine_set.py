"""The behaviour machines of a property set, run live next to the properties (one robot's samples)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cosim_validation.common.record import RobotRole
from cosim_validation.monitor.properties.machines.behaviours import BehaviourSet
from cosim_validation.monitor.properties.sample import Sample
from cosim_validation.monitor.properties.verdict import Verdict


class MachineSet:
    """Runs behaviour machines on one robot's samples on the statechart core.

    The machines are shipped names or machine files; the results are ``machine:<name>`` verdicts.

    Args:
        names: Shipped names or machine files (``PropertySet.machines``).
        robot: The robot whose samples are replayed.
        target_m: (3,) the case's target in base_link [m] for machines that need it, or None.
    """

    def __init__(self, names: Sequence[str], robot: RobotRole, target_m: np.ndarray | None) -> None:
        self.behaviours = BehaviourSet(list(names), robot, target_m)

    def push(self, sample: Sample) -> list[Verdict]:
        """Replay one sample; the verdicts of machines that just entered red (failed at once).

        Args:
            sample: The robot's next sample, in time order.
        """
        return [result.to_verdict() for result in self.behaviours.push(sample)]

    def finish(self) -> list[Verdict]:
        """Every machine's final verdict, in order."""
        return [result.to_verdict() for result in self.behaviours.finish()]
