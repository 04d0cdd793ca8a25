"""Pairing live tip samples into deviations as they arrive, in whichever order the topics deliver them."""

from __future__ import annotations

from typing import NamedTuple, TypeVar

import numpy as np

from cosim_validation.common.record import RobotRole, Stage
from cosim_validation.live.dashboard.events import TipSample

T = TypeVar("T")
MAX_PENDING = 4096  # unpaired samples kept per robot (a robot that never answers cannot grow memory)


class DeviationPoint(NamedTuple):
    """One robot's actual tip against the expected tip of the same stamp."""

    t_ns: int
    robot: RobotRole
    test_id: str
    stage: Stage
    deviation_m: float


class DeviationStream:
    """Emits a :class:`DeviationPoint` as soon as an expected and an actual tip sample of one stamp are both in."""

    def __init__(self) -> None:
        self._expected: dict[int, TipSample] = {}
        self._actual: dict[RobotRole, dict[int, np.ndarray]] = {}

    def push(self, sample: TipSample) -> list[DeviationPoint]:
        """Take one tip sample; return the deviations it completes (none, one, or one per waiting robot).

        Args:
            sample: A tip sample of any robot: an EXPECTED one (carrying case and stage) or a robot's actual tip, paired
                by equal stamps.
        """
        if sample.robot is RobotRole.EXPECTED:
            _bounded_put(self._expected, sample.t_ns, sample)
            return [
                self._point(sample, robot, waiting.pop(sample.t_ns))
                for robot, waiting in self._actual.items()
                if sample.t_ns in waiting
            ]
        expected = self._expected.get(sample.t_ns)
        if expected is None:
            _bounded_put(self._actual.setdefault(sample.robot, {}), sample.t_ns, sample.position_m)
            return []
        return [self._point(expected, sample.robot, sample.position_m)]

    @staticmethod
    def _point(expected: TipSample, robot: RobotRole, actual_m: np.ndarray) -> DeviationPoint:
        distance = float(np.linalg.norm(np.asarray(actual_m) - expected.position_m))
        return DeviationPoint(expected.t_ns, robot, expected.test_id, expected.stage, distance)


def _bounded_put(store: dict[int, T], key: int, value: T) -> None:
    store[key] = value
    if len(store) > MAX_PENDING:
        del store[next(iter(store))]  # the oldest (dicts keep insertion order)
