"""How a robot's samples are paired with the expected (planned) samples.

Rule (docs/PROPERTIES.md): the robot's sample at time t is compared with the expected sample
nearest in time (ties go to the earlier one); before the first expected sample the first is used,
after the last the last (the plan's final setpoint stays commanded). At the session's fixed
sampling rate both streams are sampled at t = k / rate, so this pairs sample k with sample k, and
stays right under timestamp jitter below half a sample period.
"""

from __future__ import annotations

import numpy as np


def nearest(t_a: float, t_before: float, t_after: float) -> bool:
    """True if the later of two expected samples (times t_before <= t_a <= t_after) is strictly nearer.

    Args:
        t_a: Time of the robot sample [s]; a float, or an (n,) array (the result is then an (n,) bool array).
        t_before: Time of the earlier expected sample [s]; a float, or an (n,) array.
        t_after: Time of the later expected sample [s]; a float, or an (n,) array.
    """
    return (t_after - t_a) < (t_a - t_before)


def align_expected(t_robot_s: np.ndarray, t_expected_s: np.ndarray) -> np.ndarray:
    """Index of the expected sample paired with every robot sample.

    Args:
        t_robot_s: (n,) robot sample times [s], non-decreasing.
        t_expected_s: (m,) expected sample times [s], non-decreasing, m >= 1.

    Returns:
        (n,) int64 indices into the expected samples.
    """
    m = t_expected_s.shape[0]
    after = np.searchsorted(t_expected_s, t_robot_s, side="left")  # first expected with t_e >= t_a
    out = np.clip(after, 0, m - 1).astype(np.int64)
    inner = (after > 0) & (after < m)
    i = after[inner]
    t_a = t_robot_s[inner]
    later = nearest(t_a, t_expected_s[i - 1], t_expected_s[i])
    out[inner] = np.where(later, i, i - 1)
    return out
