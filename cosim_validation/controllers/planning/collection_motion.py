"""Seed 001's data-collection motion (IV-B) as one stream of stamped setpoints, the same in batch and live.

Three parts, each starting at rest at the home pose:

0. settled steps: random joint goals inside a box around home (``reach`` of each joint's range on either side,
   within the limits), reached by linear interpolation in joint space in steps of at most ``step_rad``. Each step
   is two setpoints of the same joints: one stamped ``move_s`` later (the ramp, not read), one ``settle_s`` after
   that (the arm has stopped: the first reading); then ``repeats - 1`` more readings ``reading_period_s`` apart.
1. a continuous training motion (two slow sines per joint, even about home and each joint reaching its box's edge,
   ``motion_s`` long, at ``rate_hz``, every sample read): the controller error in motion, which settled readings do
   not show;
2. the held-out continuous, teleoperation-like motion (other frequencies and phases, ``test_s`` long).

Between two parts the arm goes back home in steps of ``step_rad`` (``move_s`` each) and rests ``settle_s``; those
samples are not read. A setpoint stamped t_k is reached linearly within t_k - t_(k-1) and the arm is read then (the
lockstep's contract, ``assembly/robot_port.py``), so streaming this motion to a robot gives the same samples in a
batch collection and in a live session through the driver nodes. The first sample is home at t = 0 (the arm at
rest after its reset). Joint values are rad, or m for a prismatic joint.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.controllers.planning.joint_space_motion import goal_box

#: Part of each sample: the settled steps, the continuous training motion, the held-out motion; -1 on the way home.
SETTLED, MOTION, HELD_OUT, BETWEEN = 0, 1, 2, -1
RAMP_S = 2.0  # the continuous motions speed up from rest over this time [s]


@dataclass(frozen=True)
class CollectSettings:
    """How the robot is driven (``controllers.collection`` of the configuration; ``cosim errors collect``).

    Attributes:
        goals: Random goals of the training motion.
        step_rad: Largest joint change of one step [rad | m].
        move_s: Duration of the ramp to each step [s].
        settle_s: Time given to stop after the ramp, before the first reading [s].
        reach: Half-width of the box around home, as a share of each joint's range.
        test_s: Length of the held-out continuous motion [s].
        motion_s: Length of the continuous training motion [s].
        rate_hz: Sampling rate of the continuous motions [Hz].
        seed: Goals, sine frequencies and phases (and, in batch, the robot's noise); a session case uses its
            case seed instead.
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
        # upper bounds far above any collection (a day of motion, 10,000 goals): beyond them the motion's arrays did
        # not fit in memory (--test-s 1e12) or the collection never ended (--goals 1e9)
        # a continuous motion shorter than one sample period has no sample (--test-s 5e-324: a dataset without
        # held-out rows, which every evaluation then refused)
        period = 1.0 / self.rate_hz if 0 < self.rate_hz <= 1_000 else 0.0
        checks = {  # name: (within its range, the range)
            "goals": (1 <= self.goals <= 10_000, "1..10000"),
            "step_rad": (self.step_rad > 0, "> 0"),
            "settle_s": (0 < self.settle_s <= 60, "(0, 60]"),
            "move_s": (0 < self.move_s <= 60, "(0, 60]"),
            "reach": (0 < self.reach <= 0.5, "(0, 0.5]"),
            "test_s": (0 < period <= self.test_s <= 86_400, f"[{period:g}, 86400]: at least one sample period"),
            "motion_s": (0 < period <= self.motion_s <= 86_400, f"[{period:g}, 86400]: at least one sample period"),
            "rate_hz": (0 < self.rate_hz <= 1_000, "(0, 1000]"),
            "repeats": (1 <= self.repeats <= 1_000, "1..1000"),
            "reading_period_s": (0 < self.reading_period_s <= 1, "(0, 1]"),
            "seed": (self.seed >= 0, ">= 0"),
        }
        bad = [name for name, (ok, _) in checks.items() if not ok]
        if bad:  # the values, not the whole settings' repr
            expected = ", ".join(f"{name} {checks[name][1]}" for name in bad)
            got = ", ".join(f"{name}={getattr(self, name)!r}" for name in bad)
            raise InputError(f"collection settings: {', '.join(bad)} out of range (expected {expected}; got {got})")


class CollectionMotion(NamedTuple):
    """The whole collection as stamped setpoints.

    Attributes:
        t_s: (n,) setpoint times since the start [s], increasing (0: home at rest).
        q: (n, J) setpoints [rad, or m].
        reading: (n,) bool, the samples a dataset keeps (settled readings, continuous samples).
        part: (n,) int8 :data:`SETTLED`, :data:`MOTION`, :data:`HELD_OUT`, or :data:`BETWEEN` (not read).
    """

    t_s: np.ndarray
    q: np.ndarray
    reading: np.ndarray
    part: np.ndarray


def motion_box(home: np.ndarray, q_lower: np.ndarray, q_upper: np.ndarray, reach: float) -> np.ndarray:
    """(2, J) the box goals and sines stay in: ``reach`` of each joint's range either side of home, in limits.

    Args:
        home: The home pose, shape (J,), in [rad], or [m] for a prismatic joint.
        q_lower: Lower joint limits, shape (J,), in the same units.
        q_upper: Upper joint limits, shape (J,), in the same units.
        reach: Fraction of each joint's range either side of home.
    """
    return goal_box(np.asarray(home, dtype=np.float64), q_lower, q_upper, 2.0 * reach)


def training_setpoints(home: np.ndarray, box: np.ndarray, settings: CollectSettings, seed: int) -> np.ndarray:
    """(n, J) the settled steps towards :attr:`CollectSettings.goals` random goals in ``box``, from home.

    Args:
        home: The home pose, shape (J,), in [rad], or [m] for a prismatic joint.
        box: Lower and upper corner the goals are drawn in, shape (2, J), in the same units.
        settings: Number of goals and the largest step.
        seed: The random stream's seed.
    """
    rng = np.random.default_rng(seed)
    rows: list[np.ndarray] = []
    here = np.asarray(home, dtype=np.float64)
    for _ in range(settings.goals):
        goal = rng.uniform(box[0], box[1])
        rows.extend(_steps(here, goal, settings.step_rad))
        here = goal
    return np.asarray(rows)


def continuous_setpoints(
    home: np.ndarray, box: np.ndarray, settings: CollectSettings, seed: int, stream: int = 1
) -> np.ndarray:
    """(n, J) a continuous motion at :attr:`CollectSettings.rate_hz`, starting at rest at home (speed zero at t = 0).

    ``stream`` 1: the held-out one, ``test_s`` long; 2: the continuous training motion, ``motion_s`` long, other sines.

    Args:
        home: The home pose, shape (J,), in [rad], or [m] for a prismatic joint.
        box: Lower and upper corner the motion stays in, shape (2, J), in the same units.
        settings: Rate and lengths of the motions.
        seed: The collection's seed (the stream's random numbers come from ``seed + stream``).
        stream: Which motion.
    """
    rng = np.random.default_rng(seed + stream)
    duration_s = settings.test_s if stream == 1 else settings.motion_s
    t = np.arange(1, int(duration_s * settings.rate_hz) + 1)[:, None] / settings.rate_hz
    freq = rng.uniform(0.02, 0.1, size=(2, len(home))) * 2 * np.pi  # [rad/s]: 10-50 s periods, at most ~0.3 rad/s
    if stream == 1:  # teleoperation-like: random phases, so each joint leans to one side of home
        phase = rng.uniform(0, 2 * np.pi, size=(2, len(home)))
        wave = 0.5 * (
            np.sin(freq[0] * t + phase[0]) - np.sin(phase[0]) + np.sin(freq[1] * t + phase[1]) - np.sin(phase[1])
        )
    else:  # training: even about home and spanning the box, so that the motion NN1 learns from covers where the
        # held-out motion goes (with random phases it swung to one side per joint, and NN1's guard faded its offsets
        # on most held-out samples: docs/ERRORS.md)
        sign = rng.choice([-1.0, 1.0], size=(2, len(home)))
        wave = sign[0] * np.sin(freq[0] * t) + sign[1] * np.sin(freq[1] * t)
    # the sines start at home but not at rest (their slope at t = 0 is up to ~0.3 rad/s): a smoothstep envelope over
    # the first RAMP_S (a quarter of a shorter motion) brings the speed up from zero, as an arm is moved from rest
    s = np.minimum(t / min(RAMP_S, duration_s / 4), 1.0)
    wave = wave * s * s * (3.0 - 2.0 * s)
    if stream != 1:
        wave = wave / np.maximum(np.abs(wave).max(axis=0), 1e-12)  # each joint reaches its box's edge
    half = 0.5 * (box[1] - box[0])
    return np.clip(home + half * np.clip(wave, -1.0, 1.0), box[0], box[1])  # type: ignore[no-any-return]


def _steps(start: np.ndarray, goal: np.ndarray, step_rad: float) -> list[np.ndarray]:
    """The points from ``start`` (excluded) to ``goal`` (included) in steps of at most ``step_rad``."""
    steps = max(1, int(np.ceil(np.abs(goal - start).max() / step_rad)))
    return [start + (goal - start) * (k / steps) for k in range(1, steps + 1)]


def collection_motion(
    home: np.ndarray, q_lower: np.ndarray, q_upper: np.ndarray, settings: CollectSettings, seed: int | None = None
) -> CollectionMotion:
    """The three parts of the collection from ``seed`` (default :attr:`CollectSettings.seed`) as one stream.

    Args:
        home: The home pose, shape (J,), in [rad], or [m] for a prismatic joint.
        q_lower: Lower joint limits, shape (J,), in the same units.
        q_upper: Upper joint limits, shape (J,), in the same units.
        settings: The collection's settings.
        seed: The seed; None: :attr:`CollectSettings.seed`.
    """
    seed = settings.seed if seed is None else int(seed)
    home = np.asarray(home, dtype=np.float64)
    box = motion_box(home, q_lower, q_upper, settings.reach)
    stream = _Stream(home)
    for q in training_setpoints(home, box, settings, seed):
        stream.add(settings.move_s, q, BETWEEN)
        stream.add(settings.settle_s, q, SETTLED)
        for _ in range(settings.repeats - 1):
            stream.add(settings.reading_period_s, q, SETTLED)
    period_s = 1.0 / settings.rate_hz
    for part, sines in ((MOTION, 2), (HELD_OUT, 1)):
        for q in _steps(stream.q[-1], home, settings.step_rad):
            stream.add(settings.move_s, q, BETWEEN)
        stream.add(settings.settle_s, home, BETWEEN)
        for q in continuous_setpoints(home, box, settings, seed, sines):
            stream.add(period_s, q, part)
    part_of = np.asarray(stream.part, dtype=np.int8)
    return CollectionMotion(np.cumsum(stream.dt_s), np.asarray(stream.q), part_of >= 0, part_of)


class _Stream:
    """Setpoints as they are added: the time since the previous one, the joints, the part."""

    def __init__(self, home: np.ndarray) -> None:
        self.dt_s, self.q, self.part = [0.0], [home], [BETWEEN]

    def add(self, dt_s: float, q: np.ndarray, part: int) -> None:
        self.dt_s.append(dt_s)
        self.q.append(np.asarray(q, dtype=np.float64))
        self.part.append(part)
