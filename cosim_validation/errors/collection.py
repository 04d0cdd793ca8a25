"""Collecting an error dataset from a physical robot (seed 001, IV-B): random goals in small settled steps, and a
continuous held-out motion.

Training motion: random joint goals inside a box around the case study's home pose (``reach`` of each joint's
range on either side, kept inside the limits), reached by linear interpolation in joint space in steps of at most
``step_rad``; each step is commanded as a ramp over ``move_s``, then the robot is given ``settle_s`` to stop,
then sampled ``repeats`` times, one tracker period apart (setpoint, encoders, marker pose and registration error;
labelling averages them, :mod:`~.repeats`). Then a continuous training motion (sines as below, other frequencies
and phases, ``motion_s`` long): the controller error in motion, which settled samples do not show. Held-out
motion: a continuous, teleoperation-like trajectory (two slow sines per joint with random frequencies and phases,
in the same box) sampled at ``rate_hz`` without stopping. Each part starts from rest at the home pose (one segment
each). The robot is any :class:`~cosim_validation.sim.robot_backend.RobotBackend`;
the software learns nothing of it but what it reports (no hand-eye transform, no error parameters).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cosim_validation.errors.dataset import ErrorDataset
from cosim_validation.errors.robot_identity import RobotIdentity, joint_units
from cosim_validation.exceptions import InputError
from cosim_validation.planning.joint_space_motion import goal_box
from cosim_validation.robot import Kinematics
from cosim_validation.sim.robot_backend import BackendSample, RobotBackend


@dataclass(frozen=True)
class CollectSettings:
    """How the robot is driven.

    Attributes:
        goals: Random goals of the training motion.
        step_rad: Largest joint change of one step [rad | m].
        move_s: Duration of the ramp to each step [s].
        settle_s: Time given to stop after the ramp, before sampling [s].
        reach: Half-width of the box around home, as a share of each joint's range.
        test_s: Length of the held-out continuous motion [s].
        motion_s: Length of the continuous training motion (other sines, for NN1's controller error in motion) [s].
        rate_hz: Sampling rate of the held-out motion [Hz].
        seed: Goals, sine frequencies and phases; the robot's own noise (``reseed``).
        repeats: Readings of each settled step (averaged when labelling: the tracker's noise shrinks by sqrt).
        reading_period_s: Time between two readings of one step (an optical tracker's frame period) [s].
    """

    goals: int = 60
    step_rad: float = 0.05
    move_s: float = 0.2
    settle_s: float = 0.3
    reach: float = 0.1
    test_s: float = 60.0
    motion_s: float = 120.0
    rate_hz: float = 10.0
    seed: int = 0
    repeats: int = 5
    reading_period_s: float = 0.01

    def __post_init__(self) -> None:
        checks = {"goals": self.goals >= 1, "step_rad": self.step_rad > 0, "settle_s": self.settle_s > 0,
                  "move_s": self.move_s > 0, "reach": 0 < self.reach <= 0.5, "test_s": self.test_s > 0,
                  "motion_s": self.motion_s > 0, "rate_hz": self.rate_hz > 0, "repeats": self.repeats >= 1,
                  "reading_period_s": self.reading_period_s > 0}  # fmt: skip
        bad = [name for name, ok in checks.items() if not ok]
        if bad:
            raise InputError(f"collection settings: {', '.join(bad)} out of range ({self!r})")


def _box(kinematics: Kinematics, home: np.ndarray, reach: float) -> tuple[np.ndarray, np.ndarray]:
    """The joint-space planner's goal box: ``reach`` of each joint's range on either side of home, within limits."""
    lower, upper = goal_box(home, kinematics.q_lower, kinematics.q_upper, 2.0 * reach)
    return lower, upper


def training_setpoints(kinematics: Kinematics, home: np.ndarray, settings: CollectSettings) -> np.ndarray:
    """(n, J) the settled steps towards :attr:`CollectSettings.goals` random goals, from home."""
    rng = np.random.default_rng(settings.seed)
    lower, upper = _box(kinematics, home, settings.reach)
    rows: list[np.ndarray] = []
    here = np.asarray(home, dtype=np.float64)
    for _ in range(settings.goals):
        goal = rng.uniform(lower, upper)
        steps = max(1, int(np.ceil(np.abs(goal - here).max() / settings.step_rad)))
        rows.extend(here + (goal - here) * (k / steps) for k in range(1, steps + 1))
        here = goal
    return np.asarray(rows)


def held_out_setpoints(kinematics: Kinematics, home: np.ndarray, settings: CollectSettings,
                       stream: int = 1) -> np.ndarray:  # fmt: skip
    """(n, J) a continuous motion at :attr:`CollectSettings.rate_hz`, starting at rest at home (``stream`` 1: the
    held-out one; 2: the continuous training motion, other frequencies and phases)."""
    rng = np.random.default_rng(settings.seed + stream)
    lower, upper = _box(kinematics, home, settings.reach)
    duration_s = settings.test_s if stream == 1 else settings.motion_s
    t = np.arange(1, int(duration_s * settings.rate_hz) + 1)[:, None] / settings.rate_hz
    freq = rng.uniform(0.02, 0.1, size=(2, len(home))) * 2 * np.pi  # [rad/s]: 10-50 s periods, at most ~0.3 rad/s
    phase = rng.uniform(0, 2 * np.pi, size=(2, len(home)))
    wave = 0.5 * (np.sin(freq[0] * t + phase[0]) - np.sin(phase[0]) + np.sin(freq[1] * t + phase[1]) - np.sin(phase[1]))
    half = 0.5 * (upper - lower)
    return np.clip(home + half * np.clip(wave, -1.0, 1.0), lower, upper)  # type: ignore[no-any-return]


def drive(backend: RobotBackend, home: np.ndarray, setpoints: np.ndarray, move_s: float, settle_s: float = 0.0,
          repeats: int = 1, reading_period_s: float = 0.01) -> list[BackendSample]:  # fmt: skip
    """Reset at ``home``, then command each setpoint as a ramp over ``move_s`` [s], wait ``settle_s`` [s] more and
    sample ``repeats`` times, ``reading_period_s`` [s] apart (``settle_s`` 0: a continuous motion, sampled at the
    end of each ramp)."""
    backend.reset(home)
    samples = []
    for q in setpoints:
        backend.command(q, move_s)
        backend.advance(move_s + settle_s)
        samples.append(backend.read())
        for _ in range(repeats - 1):
            backend.advance(reading_period_s)
            samples.append(backend.read())
    return samples


def collect(backend: RobotBackend, kinematics: Kinematics, home: np.ndarray, settings: CollectSettings) -> ErrorDataset:
    """Drive ``backend`` through the training and the held-out motion; the dataset of what it reported."""
    reseed = getattr(backend, "reseed", None)
    if reseed is not None:
        reseed(settings.seed)
    train = drive(backend, home, training_setpoints(kinematics, home, settings), settings.move_s,
                  settings.settle_s, settings.repeats, settings.reading_period_s)  # fmt: skip
    period_s = 1.0 / settings.rate_hz
    moving = drive(backend, home, held_out_setpoints(kinematics, home, settings, 2), period_s)
    test = drive(backend, home, held_out_setpoints(kinematics, home, settings), period_s)
    parts = [("train", train), ("train", moving), ("test", test)]
    samples = [s for _, part in parts for s in part]
    set_name = np.array([name for name, part in parts for _ in part])
    segment = np.repeat(np.arange(len(parts)), [len(part) for _, part in parts]).astype(np.int64)
    meta = {"source": f"cosim errors collect ({backend.name})", "settings": dict(vars(settings))}
    return ErrorDataset(
        RobotIdentity.of(kinematics), joint_units(kinematics), set_name, segment,
        np.array([s.t_s for s in samples]), np.array([s.q_setpoint for s in samples]),
        np.array([s.q_measured for s in samples]), np.array([s.marker_pos_m for s in samples]),
        np.array([s.marker_quat_wxyz for s in samples]), np.array([s.marker_error_m for s in samples]), meta,
    )  # fmt: skip
