"""The result of a behaviour machine in the monitor's form, and which verdicts the end of a run decided."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.monitor.properties.verdict import Status, Verdict
from cosim_validation.monitor.statechart.model import AT_END, NOT_GREEN


def decided_by_the_end(verdict: Verdict) -> bool:
    """Whether a ``machine:<name>`` verdict is VIOLATED only because of how the run ended.

    That is: it ended outside green without entering red, or entered red on the last sample (where the end-of-run
    signal is on). On a run cut short (an aborted or refused case) such a verdict says nothing about the behaviour.

    Args:
        verdict: A ``machine:<name>`` verdict (:meth:`MachineResult.to_verdict`).
    """
    return verdict.status is Status.VIOLATED and verdict.reason.endswith((NOT_GREEN, AT_END))


@dataclass(frozen=True)
class MachineResult:
    """Outcome of a behaviour test.

    Attributes:
        machine: Name of the machine.
        robot: Robot of the replayed run.
        status: HOLDS (ended in green), VIOLATED (entered red, or ended elsewhere), UNKNOWN (no samples, or
            the run lacks what the machine requires: stages, a target).
        final_state: Active state path at the end, e.g. ``injecting/advancing``.
        time_s: When it entered red (or the last sample when it ended outside green); NaN if it passed.
        stage: Stage at that time; NONE if it passed.
        reason: Human explanation.
        transitions: (t_s, from_path, to_path) of every transition taken, in order.
    """

    machine: str
    robot: RobotRole
    status: Status
    final_state: str
    time_s: float
    stage: Stage
    reason: str
    transitions: tuple[tuple[float, str, str], ...]

    @property
    def passed(self) -> bool:
        """Whether the test passed."""
        return self.status is Status.HOLDS

    def to_verdict(self) -> Verdict:
        """As a property verdict named ``machine:<name>`` (unit 1, margin +-inf)."""
        margin = {Status.HOLDS: math.inf, Status.VIOLATED: -math.inf}.get(self.status, math.nan)
        return Verdict(
            f"machine:{self.machine}", self.robot, self.status, margin, "1", self.time_s, self.stage, True, self.reason
        )
