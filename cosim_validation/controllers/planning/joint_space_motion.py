"""Joint-space cases for any robot: the motions of [Barragan et al. 2024]'s data collection, not a needle insertion.

Two kinds, both drawn from a case's random stream (its case seed) and both starting and ending at rest at the
home pose:

* ``joint_goals``: random joint goals, each reached by a straight joint-space line and held still (the robot
  stops at each step), then back home; [Barragan et al. 2024] collected its dVRK PSM data this way.
* ``teleoperation``: a smooth continuous motion, as under a surgeon's hand: per joint a sum of a few sinusoids
  of random frequency and phase, faded in and out, its amplitude kept within the joint range and its speed and
  acceleration within the commanding limits.

Joint values are in rad, or m for a prismatic joint; goals and amplitudes are fractions of each joint's range,
so one setting serves revolute and prismatic joints alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from cosim_validation.controllers.planning.joint_motion import joint_line
from cosim_validation.robots.model import CommandLimits

_FADE_S = 1.0  # teleoperation: the motion fades in and out over this long (rest to rest)
_SINES = 3  # sinusoids per joint


@dataclass(frozen=True)
class JointSpaceSettings:
    """The shape of joint-space cases (``controllers.joint_space`` of the configuration).

    Attributes:
        goals: Joint goals per ``joint_goals`` case.
        range_fraction: Goals and teleoperation stay within this fraction of each joint's range around the home
            pose (1: anywhere within the planning limits).
        hold_s: Time the robot rests at each goal [s].
        teleoperation_s: Duration of a ``teleoperation`` case [s].
        max_frequency_hz: Highest frequency of the teleoperation sinusoids [Hz] (lowest: a tenth of it).
        max_attempts: Goals drawn per step before the case is refused (a goal must be free of self-collision
            and keep the arm out of the anatomy).
    """

    goals: int = 5
    range_fraction: float = 0.5
    hold_s: float = 0.5
    teleoperation_s: float = 10.0
    max_frequency_hz: float = 0.3
    max_attempts: int = 50


def goal_box(home: np.ndarray, q_lower: np.ndarray, q_upper: np.ndarray, fraction: float) -> np.ndarray:
    """(2, J) lower and upper corners of the box goals are drawn from [rad, or m].

    ``fraction`` of each joint's range, centred on ``home`` as far as the limits allow.

    Args:
        home: The home pose, shape (J,), in [rad], or [m] for a prismatic joint.
        q_lower: Lower joint limits, shape (J,), in the same units.
        q_upper: Upper joint limits, shape (J,), in the same units.
        fraction: The box's width as a fraction of each joint's range.
    """
    half = 0.5 * fraction * (q_upper - q_lower)
    low = np.clip(home - half, q_lower, q_upper)
    high = np.clip(home + half, q_lower, q_upper)
    return np.stack([low, high])


def goal_motion(
    home: np.ndarray, goals: np.ndarray, limits: CommandLimits, dt_s: float, hold_s: float
) -> tuple[np.ndarray, np.ndarray]:
    """Samples from ``home`` through every goal (m, J), resting ``hold_s`` at each, and back home.

    Args:
        home: The home pose, shape (J,), in [rad], or [m] for a prismatic joint.
        goals: The goals in order, shape (m, J), in the same units.
        limits: Joint velocity, acceleration and jerk limits of every leg.
        dt_s: Sampling period, in [s].
        hold_s: Rest at each goal, in [s] (rounded to whole periods).

    Returns:
        (n, J) joint vectors at period ``dt_s`` and (n,) the index of the leg each sample belongs to (0 for the first
        leg, m for the way back home).
    """
    hold = max(0, round(hold_s / dt_s))
    parts, legs = [home[None, :]], [np.zeros(1, dtype=np.int64)]
    points = [home, *goals, home]
    for leg, (a, b) in enumerate(pairwise(points)):
        q = joint_line(a, b, limits, dt_s)[1:]
        if leg < len(goals):
            q = np.concatenate([q, np.repeat(q[-1:], hold, axis=0)])
        parts.append(q)
        legs.append(np.full(len(q), leg, dtype=np.int64))
    return np.concatenate(parts), np.concatenate(legs)


def teleoperation_motion(
    home: np.ndarray,
    box: np.ndarray,
    limits: CommandLimits,
    dt_s: float,
    settings: JointSpaceSettings,
    rng: np.random.Generator,
) -> np.ndarray:
    """(n, J) samples of a smooth motion about ``home`` within ``box`` (2, J), at rest at both ends.

    Per joint, q(t) = home + w(t) sum_k a_k sin(2 pi f_k t + phi_k), w a sin^2 fade over the first and last second; the
    amplitudes share the room to the nearer side of the box and are scaled down until the sampled speed and acceleration
    are within ``limits``.

    Args:
        home: The home pose, shape (J,), in [rad], or [m] for a prismatic joint.
        box: Lower and upper corner the motion stays in, shape (2, J), in the same units.
        limits: Joint velocity and acceleration limits the samples keep.
        dt_s: Sampling period, in [s].
        settings: The motion's length and highest frequency.
        rng: The case's random stream (frequencies, phases, amplitude shares).
    """
    t = np.arange(0.0, settings.teleoperation_s + 0.5 * dt_s, dt_s)
    n_joints = len(home)
    f_max = settings.max_frequency_hz
    freq = rng.uniform(0.1 * f_max, f_max, (_SINES, n_joints))
    phase = rng.uniform(0.0, 2.0 * np.pi, (_SINES, n_joints))
    weight = rng.dirichlet(np.ones(_SINES), n_joints).T  # (_SINES, J), each column sums to 1
    room = np.minimum(home - box[0], box[1] - home)
    waves = np.sin(2.0 * np.pi * freq[:, None, :] * t[None, :, None] + phase[:, None, :])  # (_SINES, n, J)
    shape = np.einsum("kj,knj->nj", weight, waves)
    fade = np.clip(np.minimum(t, t[-1] - t) / _FADE_S, 0.0, 1.0)
    shape *= (np.sin(0.5 * np.pi * fade) ** 2)[:, None]
    for _ in range(20):  # shrink until within the speed and acceleration limits
        q = home + room * shape
        velocity = np.abs(np.diff(q, axis=0)) / dt_s
        acceleration = np.abs(np.diff(q, n=2, axis=0)) / dt_s**2
        ratio = max(float((velocity / limits.velocity).max()), float((acceleration / limits.acceleration).max()))
        if ratio <= 1.0:
            return np.asarray(q)
        room = room / (1.05 * ratio)
    return np.asarray(home + room * shape)
