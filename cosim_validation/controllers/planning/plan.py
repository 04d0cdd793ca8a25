"""A planned case: joint setpoints at the sampling rate with their stages, and the expected trajectory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cosim_validation.common.record import RobotRole, Stage, TrajectoryRecord, kinematic_record
from cosim_validation.robots.model import Kinematics


@dataclass(frozen=True)
class InsertionLine:
    """Where and how the needle goes in.

    Attributes:
        target_m: (3,) target point in base_link [m].
        axis: (3,) unit needle direction (from the skin towards the target).
        entry_m: (3,) skin entry point on the line [m].
    """

    target_m: np.ndarray
    axis: np.ndarray
    entry_m: np.ndarray

    @property
    def depth_m(self) -> float:
        """Distance from the skin entry to the target [m]."""
        return float(np.linalg.norm(self.target_m - self.entry_m))


@dataclass(frozen=True)
class Plan:
    """The expected trajectory of one case.

    Attributes:
        t_s: (n,) increasing sample times from the case start [s], at the sampling period (the error collection's
            are not evenly spaced: each setpoint is stamped when the arm must reach it).
        stage: (n,) uint8 :class:`Stage` of each sample (the first sample belongs to initialization).
        q: (n, J) joint setpoints [rad].
        source_m: (3,) source point [m].
        line: The insertion line.
        controller: Name of the controller that made the plan.
        meta: Scalars about the plan (planning time, whether OMPL was used, ...).
    """

    t_s: np.ndarray
    stage: np.ndarray
    q: np.ndarray
    source_m: np.ndarray
    line: InsertionLine
    controller: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_stages(
        cls,
        stages: Sequence[tuple[Stage, np.ndarray]],
        dt_s: float,
        source_m: np.ndarray,
        line: InsertionLine,
        controller: str,
        meta: Mapping[str, Any] | None = None,
    ) -> Plan:
        """Join stage motions, each (N_k + 1, J) starting where the previous ended, into one plan.

        Args:
            stages: Each stage with its joint samples, shape (N_k + 1, J), in [rad], or [m] for a prismatic joint; the
                first sample of a stage is the last of the one before.
            dt_s: The sampling period, in [s].
            source_m: The source point in base_link, shape (3,), in [m].
            line: The insertion line.
            controller: Name of the controller that made the plan.
            meta: Scalars about the plan.
        """
        parts = [stages[0][1][:1]]
        labels = [np.array([int(stages[0][0])], dtype=np.uint8)]
        for stage, q in stages:
            parts.append(q[1:])
            labels.append(np.full(len(q) - 1, int(stage), dtype=np.uint8))
        q_all = np.concatenate(parts)
        return cls(np.arange(len(q_all)) * dt_s, np.concatenate(labels), q_all, source_m, line, controller, meta or {})

    @property
    def n_samples(self) -> int:
        """Number of samples n."""
        return int(self.t_s.shape[0])

    @property
    def duration_s(self) -> float:
        """Time of the last sample [s]."""
        return float(self.t_s[-1])

    def stage_indices(self, stage: Stage) -> np.ndarray:
        """Indices of the samples in ``stage``.

        Args:
            stage: The stage.
        """
        return np.flatnonzero(self.stage == int(stage))

    def to_record(
        self, kinematics: Kinematics, test_id: str, meta: Mapping[str, Any] | None = None
    ) -> TrajectoryRecord:
        """The expected :class:`TrajectoryRecord`: setpoints = measured joints, the actual tip = the planned tip.

        Args:
            kinematics: The arm and needle whose forward kinematics give the tip and joint frames.
            test_id: The case's id.
            meta: Extra metadata for the record, over the plan's own (it wins where keys are the same); None for none.
        """
        info: dict[str, Any] = {"controller": self.controller}
        if self.n_samples > 1:  # a plugin's plan may hold one sample (hold there): it has no rate
            info["sampling_rate_hz"] = 1.0 / float(self.t_s[1] - self.t_s[0])
        info.update(self.meta)
        info.update(meta or {})
        return kinematic_record(
            kinematics,
            test_id=test_id,
            robot=RobotRole.EXPECTED,
            backend="plan",
            t_s=self.t_s,
            stage=self.stage,
            q_setpoint=self.q,
            q_measured=self.q,
            meta=info,
        )
