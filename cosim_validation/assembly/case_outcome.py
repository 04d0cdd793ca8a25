"""What a case's ending means for its verdicts, the same live, in batch and on replay.

A case the controller completed is judged as it is. A case that was stopped (aborted: the state validator
refused a setpoint, a robot was lost, the client canceled; or unfinished: the recording ended) is a prefix of
the planned run: safety properties over it stand (what happened, happened), but a behaviour machine that had not
failed before the stop cannot say whether the behaviour would have completed, so its verdict becomes UNKNOWN
with the reason, on every robot, the plan included.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace

from cosim_validation.common.record import Stage
from cosim_validation.monitor.properties.machines.result import decided_by_the_end
from cosim_validation.monitor.properties.verdict import Status, Verdict

#: Outcomes after which the run is a prefix of the plan.
STOPPED_OUTCOMES = ("aborted", "unfinished")


def conclude_verdicts(verdicts: Iterable[Verdict], outcome: str, message: str) -> tuple[Verdict, ...]:
    """The final verdicts of a case that ended with ``outcome`` (``message`` says why).

    Args:
        verdicts: The verdicts of the case's records (properties and ``machine:<name>`` verdicts).
        outcome: How the case ended (``completed``, ``refused``, ``aborted``, ``unfinished``, ...); after one of
            :data:`STOPPED_OUTCOMES` a machine verdict decided only by the end of the run becomes UNKNOWN.
        message: Why it ended so; quoted in the reason of every verdict made UNKNOWN.
    """
    if outcome not in STOPPED_OUTCOMES:
        return tuple(verdicts)
    reason = f"the case was {outcome} before the behaviour could complete: {message}"
    return tuple(
        replace(
            v,
            status=Status.UNKNOWN,
            margin=math.nan,
            first_violation_time_s=math.nan,
            first_violation_stage=Stage.NONE,
            reason=reason,
        )
        if decided_by_the_end(v)
        else v
        for v in verdicts
    )
