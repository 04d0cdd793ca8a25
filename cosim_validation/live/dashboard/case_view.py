"""Everything the dashboard shows about one case: stages, tip paths, deviations, verdicts, outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.live.dashboard.events import CaseStarted, VerdictRow
from cosim_validation.live.dashboard.tip_track import TipTrack, deviation

NS_PER_S = 1_000_000_000


class StageSpan(NamedTuple):
    """A run of consecutive expected samples in one stage, in seconds since the case start."""

    stage: Stage
    start_s: float
    end_s: float


@dataclass
class CaseView:
    """The live state of one case.

    Attributes:
        info: What the controller announced when the case started.
        stage: The stage the controller reported last.
        outcome: ``running`` until the controller ends the case, then completed | refused | aborted.
        tracks: Tip path per robot (EXPECTED from the plan, VIRTUAL/PHYSICAL from the actual tip).
        verdicts: Latest verdict per (property, robot): non-final first violations, then the final ones.
        reported: Whether the monitor's CaseReport arrived (the verdicts are then final and complete).
    """

    info: CaseStarted
    stage: Stage = Stage.INITIALIZATION
    outcome: str = "running"
    message: str = ""
    tracks: dict[RobotRole, TipTrack] = field(default_factory=dict)
    verdicts: dict[tuple[str, RobotRole], VerdictRow] = field(default_factory=dict)
    reported: bool = False
    samples: dict[RobotRole, int] = field(default_factory=dict)

    @property
    def test_id(self) -> str:
        """The case's test id."""
        return self.info.test_id

    def track(self, robot: RobotRole) -> TipTrack:
        """The tip track of ``robot`` (created empty on first use).

        Args:
            robot: Role of the robot whose track is returned.
        """
        if robot not in self.tracks:
            self.tracks[robot] = TipTrack()
        return self.tracks[robot]

    def seconds(self, t_ns: np.ndarray) -> np.ndarray:
        """Stamps [ns] as seconds since the case start.

        Args:
            t_ns: Stamps, any shape, in [ns].

        Returns:
            Seconds since the case's start stamp, same shape, float64, in [s].
        """
        return (np.asarray(t_ns, dtype=np.int64) - self.info.t_ns) / NS_PER_S

    def progress(self) -> float:
        """Share of the planned samples streamed so far, in [0, 1] (1 once the case ended)."""
        if self.outcome != "running":
            return 1.0
        done = len(self.tracks.get(RobotRole.EXPECTED, ()))
        return min(1.0, done / self.info.sample_count) if self.info.sample_count else 0.0

    def deviation(self, robot: RobotRole) -> tuple[np.ndarray, np.ndarray]:
        """(t_s (m,) since case start, deviation_m (m,)) of ``robot``'s actual tip from the expected tip.

        Args:
            robot: Role of the executing robot (VIRTUAL or PHYSICAL) compared with the EXPECTED track.
        """
        if robot not in self.tracks or RobotRole.EXPECTED not in self.tracks:
            return np.empty(0), np.empty(0)
        t_ns, dev_m = deviation(self.tracks[RobotRole.EXPECTED], self.tracks[robot])
        return self.seconds(t_ns), dev_m

    def stage_spans(self) -> list[StageSpan]:
        """The stage timeline from the expected samples' stages: one span per run of equal stages.

        A span ends where the next begins (the last at its last sample), so spans tile the case.
        """
        expected = self.tracks.get(RobotRole.EXPECTED)
        if expected is None or not len(expected):
            return []
        stages, t_s = expected.stages, self.seconds(expected.t_ns)
        starts = np.flatnonzero(np.r_[True, stages[1:] != stages[:-1]])
        ends = np.r_[starts[1:], len(stages) - 1]
        return [
            StageSpan(Stage(int(stages[a])), float(t_s[a]), float(t_s[b])) for a, b in zip(starts, ends, strict=True)
        ]

    def violations(self) -> list[VerdictRow]:
        """Verdicts that are violated, sorted by property and robot."""
        return sorted((v for v in self.verdicts.values() if v.status == 2), key=lambda v: (v.property, v.robot))

    def verdict_rows(self) -> list[VerdictRow]:
        """Every verdict, violated first, then by property and robot."""
        return sorted(self.verdicts.values(), key=lambda v: (v.status != 2, v.property, int(v.robot)))
