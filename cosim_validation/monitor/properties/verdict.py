"""Results of the monitor: the verdict of one property and the value of one KPI.

Both map field by field onto ``cosim_validation_interfaces/msg/Verdict.msg`` and ``Kpi.msg``
(the ROS layer converts them; the core never imports message packages).
"""

from __future__ import annotations

import builtins
import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from cosim_validation.common.record import RobotRole, Stage


class Status(IntEnum):
    """Verdict of a property; values equal the ``Verdict.msg`` constants."""

    UNKNOWN = 0  # could not be decided (see Verdict.reason)
    HOLDS = 1
    VIOLATED = 2

    @property
    def label(self) -> str:
        """Lower-case name, as used in tables and files."""
        return self.name.lower()


@dataclass(frozen=True)
class Verdict:
    """The verdict of one property on one robot's run (robust semantics).

    Attributes:
        property: Property name, as in the properties file.
        robot: Which robot the verdict is about.
        status: HOLDS, VIOLATED or UNKNOWN.
        margin: Signed distance to violation in ``unit``: > 0 holds, <= 0 violated; NaN when UNKNOWN;
            +inf/-inf for properties made of boolean conditions only (unit "1").
        unit: ``m``, ``rad`` or ``1``.
        first_violation_time_s: Time since case start of the first violation [s]; NaN if none.
        first_violation_stage: Stage of that sample; ``Stage.NONE`` if none.
        final: False while a live monitor may still change the verdict or the margin.
        reason: Why UNKNOWN, or a short note (e.g. "margin is an upper bound: NaN samples").
    """

    property: str
    robot: RobotRole
    status: Status
    margin: float
    unit: str
    first_violation_time_s: float = math.nan
    first_violation_stage: Stage = Stage.NONE
    final: bool = True
    reason: str = ""

    @builtins.property
    def holds(self) -> bool:
        """Whether the status is HOLDS (the ``holds`` field of Verdict.msg)."""
        return self.status is Status.HOLDS

    def same_outcome(self, other: Verdict) -> bool:
        """Equal status, margin (NaN equals NaN), violation time and stage (for online/offline checks).

        Property and robot must be the same too; ``final`` and ``reason`` are not compared.

        Args:
            other: The verdict to compare with (e.g. the offline verdict of the same property and robot).
        """

        def eq(a: float, b: float) -> bool:
            return (math.isnan(a) and math.isnan(b)) or a == b

        return (
            self.property == other.property
            and self.robot == other.robot
            and self.status == other.status
            and eq(self.margin, other.margin)
            and eq(self.first_violation_time_s, other.first_violation_time_s)
            and self.first_violation_stage == other.first_violation_stage
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain values (labels for enums), e.g. for JSON."""
        return {
            "property": self.property,
            "robot": self.robot.label,
            "status": self.status.label,
            "margin": self.margin,
            "unit": self.unit,
            "first_violation_time_s": self.first_violation_time_s,
            "first_violation_stage": self.first_violation_stage.label,
            "final": self.final,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Kpi:
    """One key performance indicator of one robot's run.

    Attributes:
        name: e.g. ``targeting_error``, ``deviation_p2t_max``, ``duration``.
        robot: Which robot it measures.
        stage: The stage it covers; ``Stage.NONE`` for the whole case.
        value: In SI units (see ``unit``); NaN if it could not be computed (see ``reason``).
        unit: ``m``, ``rad``, ``s`` or ``1``.
        reason: Why the value is NaN, else "".
    """

    name: str
    robot: RobotRole
    stage: Stage
    value: float
    unit: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain values (labels for enums), e.g. for JSON."""
        return {
            "name": self.name,
            "robot": self.robot.label,
            "stage": self.stage.label,
            "value": self.value,
            "unit": self.unit,
            "reason": self.reason,
        }
