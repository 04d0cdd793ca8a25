"""Held-out splits of one dataset: which rows a model may learn from and which it is judged on.

A model judged on rows like the ones it learned from flatters itself: the networks extrapolate where they have no
data. ``cosim errors evaluate --split`` therefore puts every row of the dataset (both sets pooled, in file order)
into a training and a held-out part in one of three ways:

- ``time:F`` (chronological): the first fraction F of the rows train, the rest is held out (a teleoperated
  trajectory: learn from its first part, judge on its last);
- ``region[:F]`` (joint space): one joint, drawn by the seed, and one side of its setpoint range; the fraction F
  (default 0.3) of the rows furthest out on that side is held out, so every held-out row lies outside the box of
  the training rows on that joint;
- ``segment[:F]``: whole segments (runs from one reset) drawn by the seed are held out, F of them (default 0.3,
  at least one).

Repeated readings of one settled pose (consecutive rows of a segment with the same setpoint) are never split.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from cosim_validation.common.exceptions import InputError
from cosim_validation.error_injection.dataset import ErrorDataset

SPLIT_KINDS = ("time", "region", "segment")
#: Default held-out fraction of ``region`` and ``segment``.
DEFAULT_HELD_OUT = 0.3


@dataclass(frozen=True)
class Split:
    """A way to hold out rows.

    Attributes:
        kind: ``time``, ``region`` or ``segment``.
        fraction: ``time``: the share of rows that train; otherwise the share held out; in (0, 1).
    """

    kind: str
    fraction: float

    @property
    def text(self) -> str:
        """As given on the command line (``time:0.7``)."""
        return f"{self.kind}:{self.fraction!r}"  # every digit: time:0.9999999 read time:1


def parse_split(text: str) -> Split:
    """``time:F``, ``region[:F]`` or ``segment[:F]`` -> :class:`Split`.

    Args:
        text: The ``--split`` option's value: ``time:F``, ``region[:F]`` or ``segment[:F]``, F in (0, 1).

    Raises:
        InputError: Another kind, a fraction that is not a number in (0, 1), or ``time`` without one.
    """
    kind, sep, value = text.partition(":")
    if kind not in SPLIT_KINDS:
        raise InputError(f"--split {text!r}: expected time:F, region[:F] or segment[:F]")
    if not sep:
        if kind == "time":
            raise InputError("--split time: give the training fraction, e.g. time:0.7")
        return Split(kind, DEFAULT_HELD_OUT)
    try:
        fraction = float(value)
    except ValueError:
        fraction = float("nan")
    if not 0.0 < fraction < 1.0:
        raise InputError(f"--split {text!r}: the fraction must be a number in (0, 1), got {value!r}")
    return Split(kind, fraction)


def _groups(data: ErrorDataset) -> np.ndarray:
    """(n,) group index: consecutive rows of a segment with the same setpoint (repeated settled readings)."""
    new = data.segment_starts().copy()
    new[1:] |= (data.q_setpoint[1:] != data.q_setpoint[:-1]).any(axis=1)
    return np.cumsum(new) - 1


def held_out_rows(data: ErrorDataset, split: Split, seed: int) -> tuple[np.ndarray, str]:
    """(n,) bool, True on the held-out rows of ``data`` under ``split`` and ``seed``; and what was held out.

    Args:
        data: The rows, both sets pooled, in file order.
        split: How to hold out rows.
        seed: Seed of the joint and side (``region``) or of the segments (``segment``) held out; not used by ``time``.

    Raises:
        InputError: The dataset cannot be split so (one segment for ``segment``, no joint that moves for
            ``region``).
    """
    n = data.n_rows
    if split.kind == "time":
        group = _groups(data)
        cut = group[min(round(split.fraction * n), n - 1)]  # the group of the first held-out row
        return group >= cut, f"rows after the first {split.fraction:.0%} held out"
    rng = np.random.default_rng(seed)
    if split.kind == "segment":
        segments = np.unique(data.segment)
        if len(segments) < 2:
            raise InputError(f"--split {split.text}: the dataset has one segment, a segment split needs two or more")
        k = min(max(1, round(split.fraction * len(segments))), len(segments) - 1)
        chosen = np.sort(rng.choice(segments, size=k, replace=False))
        chosen_text = f"segment{'s' if k > 1 else ''} {', '.join(str(int(s)) for s in chosen)}"
        return np.isin(data.segment, chosen), f"{chosen_text} held out"
    moving = np.flatnonzero(np.ptp(data.q_setpoint, axis=0) > 0.0)
    if len(moving) == 0:
        raise InputError(f"--split {split.text}: no joint's setpoint moves, no region to hold out")
    joint = int(moving[rng.integers(len(moving))])
    high = bool(rng.integers(2))
    q = data.q_setpoint[:, joint]
    names, units = data.robot.joint_names, data.joint_units
    if high:
        bound = float(np.quantile(q, 1.0 - split.fraction))
        held = q > bound
    else:
        bound = float(np.quantile(q, split.fraction))
        held = q < bound
    side = "above" if high else "below"
    return held, f"joint {names[joint]} {side} {bound:.4g} {units[joint]} held out (outside the training box)"


def assign(data: ErrorDataset, split: Split, seed: int) -> tuple[ErrorDataset, str]:
    """``data`` with its ``set`` column made the split's (``train`` / ``test``); and what was held out.

    Args:
        data: The rows, both sets pooled, in file order.
        split: How to hold out rows.
        seed: Seed of the rows held out (see :func:`held_out_rows`).
    """
    held, what = held_out_rows(data, split, seed)
    return replace(data, set_name=np.where(held, "test", "train")), what
