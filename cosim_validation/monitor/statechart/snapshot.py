"""What a behaviour test sees of one sample (LT4R's snapshot, [Fabry and Sinclair 2016] section 4.2), as named signals.

The values are computed exactly as :class:`cosim_validation.monitor.properties.machines.Snapshot` computes them
(same operations in the same order), so a YAML behaviour test and its Python original decide alike.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, KeysView, Mapping
from typing import Any, NamedTuple, Protocol

import numpy as np

from cosim_validation.common.record import Stage, TrajectoryRecord
from cosim_validation.monitor.statechart.guard_columns import ROUNDING as _ROUNDING
from cosim_validation.monitor.statechart.guard_columns import TINY, Fixed, Num, Text, Vec, row_max

#: Signals a behaviour machine may declare, with their meaning.
SIGNALS: dict[str, str] = {
    "t_s": "time since the case start [s]",
    "stage": "stage label: none, initialization, approach, injection, extraction, reset",
    "tip_m": "(3,) needle tip from forward kinematics, base_link [m]",
    "tip_axis": "(3,) unit needle direction, towards the tip",
    "tip_velocity_m_s": "(3,) backward difference of the tip [m/s]; zeros at the first sample",
    "insertion_speed_m_s": "tip velocity along the needle axis [m/s]: > 0 moving in, < 0 moving out",
    "q": "(J,) measured joint positions [rad]",
    "actual_tip_m": "(3,) tracked or ground-truth tip [m]; NaN if unknown",
    "has_target": "whether the case's target is known",
    "distance_to_target_m": "distance of the tip from the target [m]; NaN without a target",
    "index": "0-based sample index",
    "is_last": "the last sample of the run (LT4R's eof)",
}


class SampleLike(Protocol):
    """One sample of one robot (properties' ``Sample`` and :class:`RecordSample` both qualify)."""

    @property
    def t_s(self) -> float:
        """Time since the case start [s]."""
        ...

    @property
    def stage(self) -> Stage | int:
        """The stage of the sample."""
        ...

    @property
    def tip_pos_m(self) -> np.ndarray:
        """(3,) needle tip from forward kinematics, base_link [m]."""
        ...

    @property
    def tip_quat_wxyz(self) -> np.ndarray:
        """(4,) needle-tip orientation as a (w, x, y, z) quaternion, base_link."""
        ...

    @property
    def q_measured(self) -> np.ndarray:
        """(J,) measured joint positions [rad, or m for a prismatic joint]."""
        ...

    @property
    def actual_tip_pos_m(self) -> np.ndarray:
        """(3,) tracked or ground-truth tip [m]; NaN if unknown."""
        ...


class RecordSample(NamedTuple):
    """Row ``k`` of a :class:`TrajectoryRecord` (the fields a snapshot needs)."""

    t_s: float
    stage: Stage
    tip_pos_m: np.ndarray
    tip_quat_wxyz: np.ndarray
    q_measured: np.ndarray
    actual_tip_pos_m: np.ndarray


def record_row(record: TrajectoryRecord, k: int) -> RecordSample:
    """Sample ``k`` of ``record``.

    Args:
        record: One robot's recorded trajectory.
        k: Index of the sample.
    """
    return RecordSample(
        float(record.t_s[k]),
        Stage(int(record.stage[k])),
        record.tip_pos_m[k],
        record.tip_quat_wxyz[k],
        record.q_measured[k],
        record.actual_tip_pos_m[k],
    )


def record_rows(record: TrajectoryRecord) -> list[RecordSample]:
    """Every sample of ``record`` in order.

    Args:
        record: One robot's recorded trajectory.
    """
    return [record_row(record, k) for k in range(record.n_samples)]


def z_axis(quat_wxyz: np.ndarray) -> np.ndarray:
    """+z axis of a wxyz unit quaternion (the formula of ``properties.signals.z_axis_one``).

    Args:
        quat_wxyz: Unit quaternion (w, x, y, z), shape (4,), e.g. the needle tip's orientation in base_link.

    Returns:
        The rotated +z axis, shape (3,), in the quaternion's reference frame.
    """
    w, x, y, z = (float(v) for v in quat_wxyz)
    return np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])


def snapshot(
    sample: SampleLike, previous: SampleLike | None, target_m: np.ndarray | None, index: int, is_last: bool
) -> dict[str, Any]:
    """The signals of ``sample`` by name (:data:`SIGNALS`).

    Args:
        sample: The sample.
        previous: The sample before it, for the velocity; None at the first sample.
        target_m: The case's target in base_link, shape (3,), in [m]; None: no target.
        index: The 0-based index of the sample.
        is_last: Whether it is the last sample of the run.
    """
    tip = np.asarray(sample.tip_pos_m, dtype=np.float64)
    velocity = np.zeros(3)
    if previous is not None and sample.t_s > previous.t_s:
        velocity = (tip - previous.tip_pos_m) / (sample.t_s - previous.t_s)
    axis = z_axis(sample.tip_quat_wxyz)
    distance = math.nan
    if target_m is not None:
        d = tip - target_m
        distance = float(np.sqrt(d @ d))
    return {
        "t_s": sample.t_s,
        "stage": Stage(int(sample.stage)).label,
        "tip_m": tip,
        "tip_axis": axis,
        "tip_velocity_m_s": velocity,
        "insertion_speed_m_s": float(velocity @ axis),
        "q": np.asarray(sample.q_measured),
        "actual_tip_m": np.asarray(sample.actual_tip_pos_m),
        "has_target": target_m is not None,
        "distance_to_target_m": distance,
        "index": float(index),
        "is_last": is_last,
    }


class Snapshots:
    """The snapshots of one robot's samples, each computed once for every machine replaying them.

    Several machines on the same samples (a property set's behaviour tests) ask for the same snapshot in turn;
    the last one is kept and given again while the sample, its predecessor, the index and ``is_last`` are the same
    (the same objects, so a changed sample is never mistaken for a kept one).

    Args:
        target_m: The case's target in base_link, shape (3,), in [m]; None: no target.
    """

    def __init__(self, target_m: np.ndarray | None) -> None:
        self.target_m = target_m
        self._last: tuple[SampleLike, SampleLike | None, int, bool, dict[str, Any]] | None = None

    def of(self, sample: SampleLike, previous: SampleLike | None, index: int, is_last: bool) -> dict[str, Any]:
        """:func:`snapshot` of ``sample`` with this target (the kept one if it is the same request). Read only.

        Args:
            sample: The sample.
            previous: The sample before it, for the velocity; None at the first sample.
            index: The 0-based index of the sample.
            is_last: Whether it is the last sample of the run.
        """
        last = self._last
        if last is not None and last[0] is sample and last[1] is previous and last[2] == index and last[3] == is_last:
            return last[4]
        env = snapshot(sample, previous, self.target_m, index, is_last)
        self._last = (sample, previous, index, is_last, env)
        return env


class SnapshotColumns:
    """The signals of stretches of one record's samples as columns (:mod:`.guard_columns`), for a replay.

    Each column holds, sample by sample, the value :func:`snapshot` gives with the previous sample, the index
    counted from ``first`` (the first sample replayed) and ``is_last`` false, within the error the column states
    (sums of products may round differently from the per-sample computation).

    Args:
        record: One robot's recorded trajectory, times finite and not decreasing from ``first`` on.
        target_m: The case's target in base_link, shape (3,), in [m]; None: no target.
        first: Index of the first sample replayed (its velocity is zero, its index 0).
    """

    def __init__(self, record: TrajectoryRecord, target_m: np.ndarray | None, first: int) -> None:
        self.first = first
        n = record.n_samples
        exact = np.zeros(n)
        self.t_s = np.asarray(record.t_s, dtype=np.float64)
        labels = {int(code): Stage(int(code)).label for code in np.unique(record.stage)}
        tip = np.asarray(record.tip_pos_m, dtype=np.float64)
        w, x, y, z = np.asarray(record.tip_quat_wxyz, dtype=np.float64).T
        axis = np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], axis=1)
        velocity = np.zeros_like(tip)
        dt = np.diff(self.t_s)
        moving = np.flatnonzero(dt > 0) + 1
        velocity[moving] = (tip[moving] - tip[moving - 1]) / dt[moving - 1][:, None]
        velocity[: first + 1] = 0.0  # the first replayed sample has no previous one
        products = velocity * axis
        speed = products.sum(axis=1)  # any order of the sum: within 3 roundings of the sum of |products|
        still = ~velocity.any(axis=1)  # a zero velocity gives exactly zero however the products are summed
        speed_err = np.where(still, 0.0, _ROUNDING * (np.abs(products).sum(axis=1) + np.abs(speed)) + TINY)
        distance: Num | Fixed = Fixed(math.nan)
        if target_m is not None:
            d = tip - target_m
            norm = np.sqrt((d * d).sum(axis=1))
            distance = Num(norm, _ROUNDING * norm + TINY)
        self.columns: dict[str, Num | Vec | Text | Fixed] = {
            "t_s": Num(self.t_s, exact),
            "stage": Text(np.array([labels[int(code)] for code in record.stage], dtype=object)),
            "tip_m": Vec(tip, exact),
            "tip_axis": Vec(axis, _ROUNDING * row_max(axis)),
            "tip_velocity_m_s": Vec(velocity, _ROUNDING * row_max(velocity)),
            "insertion_speed_m_s": Num(speed, speed_err),
            "q": Vec(np.asarray(record.q_measured, dtype=np.float64), exact),
            "actual_tip_m": Vec(np.asarray(record.actual_tip_pos_m, dtype=np.float64), exact),
            "has_target": Fixed(target_m is not None),
            "distance_to_target_m": distance,
            "index": Num(np.arange(n, dtype=np.float64) - first, exact),
            "is_last": Fixed(False),
        }

    def signals(self, start: int, stop: int) -> Mapping[str, Any]:
        """Every signal of :data:`SIGNALS` on the samples [start, stop) as columns (each cut when first asked for).

        Args:
            start: First sample, >= ``first``.
            stop: One past the last sample; the record's last sample excluded (``is_last`` is false here).
        """
        return _Stretch(self.columns, slice(start, stop))


class _Stretch(Mapping[str, Any]):
    """The columns of a stretch of samples, each cut from the whole record's when first looked up."""

    def __init__(self, columns: Mapping[str, Num | Vec | Text | Fixed], rows: slice) -> None:
        self._columns, self._rows = columns, rows
        self._cut: dict[str, Num | Vec | Text | Fixed] = {}

    def __getitem__(self, name: str) -> Num | Vec | Text | Fixed:
        cut = self._cut.get(name)
        if cut is None:
            column, rows = self._columns[name], self._rows
            if isinstance(column, Num):
                cut = Num(column.value[rows], column.err[rows])
            elif isinstance(column, Vec):
                cut = Vec(column.value[rows], column.err[rows])
            elif isinstance(column, Text):
                cut = Text(column.value[rows])
            else:
                cut = column
            self._cut[name] = cut
        return cut

    def __iter__(self) -> Iterator[str]:
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def keys(self) -> KeysView[str]:
        """The signals' names, a view of the record's columns (set operations on it need no lookups)."""
        return self._columns.keys()
