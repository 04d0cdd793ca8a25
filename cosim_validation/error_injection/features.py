"""What an error network sees: [Barragan et al. 2024]'s feature sets OC, CP and CPE over joint vectors.

A network maps the robot's joints now (the setpoint for NN1, the measured joints for NN2) and, optionally, where
it came from, to joint offsets:

- ``OC`` (only current): the J joints now;
- ``CP`` (current + previous): the J joints now and the J measured joints of the previous sample;
- ``CPE`` (current + previous encoded): the J joints now and, per joint, the direction of motion as +1 / -1: the
  sign of (now - previous measured). A move smaller than ``deadband`` keeps the last direction (encoder noise
  must not flip it; a gear's play stays on the side it was last pushed to), and a series starts with 0 (at rest,
  no direction yet);
- ``CS`` (current + setpoint step, this project's addition): the J joints now and the setpoint's change since the
  previous sample (0 at a series' start). It comes from the setpoint history only, which the injector knows
  exactly; a history of measured joints is the simulated robot's own in the injector (its predicted errors fed
  back), and the physical robot's when training. On continuous motion the controller error is mostly a lag
  proportional to the speed, which this feature carries and the direction does not (docs/ERRORS.md, "Diagnosis").

The same encoding runs over a whole dataset (:func:`feature_matrix`, rows in time order, restarting at every new
segment) and one command at a time in the injector (:class:`DirectionState`); they agree exactly (tested).
Joint values are rad, or m for a prismatic joint.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.common.exceptions import InputError

FEATURE_KINDS = ("OC", "CP", "CPE", "CS")

#: Default deadband of the direction encoding [rad | m]: a few times the encoder noise of a real arm.
DEFAULT_DEADBAND = 5e-5


@dataclass(frozen=True)
class FeatureSpec:
    """Which features a network takes.

    Attributes:
        kind: ``OC``, ``CP``, ``CPE`` or ``CS``.
        n_joints: J.
        deadband: Smallest move that sets a direction (CPE) [rad | m], >= 0.
    """

    kind: str
    n_joints: int
    deadband: float = DEFAULT_DEADBAND

    def __post_init__(self) -> None:
        if self.kind not in FEATURE_KINDS:
            raise InputError(f"feature set {self.kind!r}: expected one of {', '.join(FEATURE_KINDS)}")
        if self.n_joints < 1:
            raise InputError(f"feature set: expected at least one joint, got {self.n_joints}")
        if not (np.isfinite(self.deadband) and self.deadband >= 0.0):
            raise InputError(f"feature set: deadband must be a finite number >= 0, got {self.deadband!r}")

    @property
    def n_features(self) -> int:
        """F: J for OC, 2 J otherwise."""
        return self.n_joints if self.kind == "OC" else 2 * self.n_joints

    @property
    def uses_history(self) -> bool:
        """Whether the previous measured joints matter."""
        return self.kind in ("CP", "CPE")

    def row(
        self, current: np.ndarray, previous: np.ndarray, direction: np.ndarray, setpoint_step: np.ndarray | None = None
    ) -> np.ndarray:
        """(F,) features of one sample.

        Args:
            current: The measured joints of the sample, shape (J,).
            previous: The measured joints of the previous sample, shape (J,).
            direction: The direction state, shape (J,).
            setpoint_step: The setpoint change, shape (J,); only for CS.
        """
        if self.kind == "OC":
            return np.asarray(current, dtype=np.float64)
        if self.kind == "CS":
            return np.concatenate((current, _required(setpoint_step)))
        return np.concatenate((current, previous if self.kind == "CP" else direction))

    def to_json(self) -> dict[str, object]:
        """As stored in a model file."""
        return {"kind": self.kind, "n_joints": self.n_joints, "deadband": self.deadband}


def _required(setpoint_step: np.ndarray | None) -> np.ndarray:
    if setpoint_step is None:
        raise InputError("feature set CS: the setpoint step is needed")
    return setpoint_step


def setpoint_steps(q_setpoint: np.ndarray, segment_start: np.ndarray) -> np.ndarray:
    """(n, J) each setpoint minus the one before in its series (0 at a series' start) [rad | m].

    Args:
        q_setpoint: Setpoints in time order, shape (n, J), in [rad] (or [m] for a prismatic joint).
        segment_start: True where a new series starts, shape (n,), bool.
    """
    step = np.zeros_like(q_setpoint, dtype=np.float64)
    step[1:] = q_setpoint[1:] - q_setpoint[:-1]
    step[segment_start] = 0.0
    return step


def step_directions(state: np.ndarray, move: np.ndarray, deadband: float) -> np.ndarray:
    """The direction state after a move: its sign where larger than the deadband.

    Args:
        state: The direction state before the move (+1, -1, 0), shape (J,).
        move: The move, shape (J,), in [rad] (or [m] for a prismatic joint).
        deadband: Smallest move that sets a direction, in the units of the move.

    Returns:
        The new direction state, shape (J,).
    """
    return np.where(np.abs(move) > deadband, np.sign(move), state)


def series_directions(move: np.ndarray, deadband: float, segment_start: np.ndarray) -> np.ndarray:
    """Direction state after each move of a series, vectorised; equal to :func:`step_directions` row by row.

    Args:
        move: (n, J) moves [rad | m] in time order.
        deadband: Smallest move that sets a direction.
        segment_start: (n,) bool, True where a new series starts (its state starts at 0 before the move).
    """
    n, n_joints = move.shape
    signs = np.where(np.abs(move) > deadband, np.sign(move), 0.0)
    rows = np.broadcast_to(np.arange(n)[:, None], (n, n_joints))
    last_set = np.maximum.accumulate(np.where(signs != 0.0, rows, -1), axis=0)
    start_row = np.maximum.accumulate(np.where(segment_start, np.arange(n), 0))
    valid = last_set >= start_row[:, None]  # a direction set in this segment, not in one before
    picked = signs[np.maximum(last_set, 0), np.arange(n_joints)[None, :]]
    return np.where(valid, picked, 0.0)


def feature_matrix(
    spec: FeatureSpec,
    current: np.ndarray,
    previous: np.ndarray,
    segment_start: np.ndarray,
    setpoint_step: np.ndarray | None = None,
) -> np.ndarray:
    """(n, F) features of a series.

    Args:
        spec: The feature set.
        current: (n, J) the joints now (setpoints for NN1, measured joints for NN2).
        previous: (n, J) the measured joints of the sample before (the row itself at a segment's start).
        segment_start: (n,) bool, True at each segment's first row.
        setpoint_step: (n, J) :func:`setpoint_steps` (CS only).
    """
    if spec.kind == "OC":
        return np.array(current, dtype=np.float64)
    if spec.kind == "CS":
        return np.hstack((current, _required(setpoint_step)))
    if spec.kind == "CP":
        return np.hstack((current, previous))
    return np.hstack((current, series_directions(current - previous, spec.deadband, segment_start)))


class DirectionState:
    """The direction state of one network, one command at a time (the injector's history)."""

    def __init__(self, spec: FeatureSpec) -> None:
        self.spec = spec
        self.state = np.zeros(spec.n_joints)

    def reset(self) -> None:
        """A new series: no direction yet."""
        self.state = np.zeros(self.spec.n_joints)

    def features(
        self, current: np.ndarray, previous: np.ndarray, setpoint_step: np.ndarray | None = None
    ) -> np.ndarray:
        """(F,) features of ``current`` after ``previous``; advances the state.

        Args:
            current: The measured joints of the sample, shape (J,).
            previous: The previous measured joints, shape (J,).
            setpoint_step: The setpoint change, shape (J,); CS only.
        """
        if self.spec.kind == "CPE":
            self.state = step_directions(self.state, current - previous, self.spec.deadband)
        return self.spec.row(current, previous, self.state, setpoint_step)
