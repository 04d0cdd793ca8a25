"""One robot's needle-tip path in one case: a growable, time-ordered buffer."""

from __future__ import annotations

import numpy as np

from cosim_validation.common.record import Stage


class TipTrack:
    """Tip positions of one robot, appended as samples arrive (amortised O(1), arrays grow by doubling).

    Samples usually arrive in time order; one that arrives late is inserted at its place, and a repeated
    stamp replaces the earlier sample, so the track always holds one sample per stamp, sorted.
    """

    def __init__(self, capacity: int = 256) -> None:
        self._t_ns = np.empty(capacity, dtype=np.int64)
        self._xyz_m = np.empty((capacity, 3), dtype=np.float64)
        self._stage = np.empty(capacity, dtype=np.uint8)
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, t_ns: int, position_m: np.ndarray, stage: Stage = Stage.NONE) -> None:
        """Add the sample at ``t_ns`` [ns] with ``position_m`` (3,) [m] in base_link.

        Args:
            t_ns: The sample's stamp in [ns]; a stamp already held replaces that sample.
            position_m: The tip's position in base_link, shape (3,), in [m].
            stage: The sample's stage (NONE where the message carried none).
        """
        n = self._n
        if n and t_ns <= self._t_ns[n - 1]:
            self._insert(t_ns, position_m, stage)
            return
        if n == self._t_ns.shape[0]:
            self._grow()
        self._t_ns[n] = t_ns
        self._xyz_m[n] = position_m
        self._stage[n] = int(stage)
        self._n = n + 1

    def contains(self, t_ns: int) -> bool:
        """Whether a sample is stamped ``t_ns``.

        Args:
            t_ns: The stamp looked for, in [ns].
        """
        i = int(np.searchsorted(self._t_ns[: self._n], t_ns))
        return i < self._n and int(self._t_ns[i]) == t_ns

    def _insert(self, t_ns: int, position_m: np.ndarray, stage: Stage) -> None:
        i = int(np.searchsorted(self._t_ns[: self._n], t_ns))
        if i < self._n and self._t_ns[i] == t_ns:
            self._xyz_m[i], self._stage[i] = position_m, int(stage)
            return
        if self._n == self._t_ns.shape[0]:
            self._grow()
        for array in (self._t_ns, self._xyz_m, self._stage):
            array[i + 1 : self._n + 1] = array[i : self._n].copy()
        self._t_ns[i], self._xyz_m[i], self._stage[i] = t_ns, position_m, int(stage)
        self._n += 1

    def _grow(self) -> None:
        size = 2 * self._t_ns.shape[0]
        self._t_ns = np.resize(self._t_ns, size)
        self._xyz_m = np.resize(self._xyz_m, (size, 3))
        self._stage = np.resize(self._stage, size)

    @property
    def t_ns(self) -> np.ndarray:
        """(n,) stamps [ns], increasing (a view: copy before keeping it)."""
        return self._t_ns[: self._n]

    @property
    def positions_m(self) -> np.ndarray:
        """(n, 3) tip positions [m] in base_link (a view)."""
        return self._xyz_m[: self._n]

    @property
    def stages(self) -> np.ndarray:
        """(n,) Stage values of the samples (uint8; NONE where the message carried none)."""
        return self._stage[: self._n]


def deviation(expected: TipTrack, actual: TipTrack) -> tuple[np.ndarray, np.ndarray]:
    """Distance of each actual tip sample from the expected tip at the same stamp.

    A robot answers expected sample k with a sample stamped exactly like it, so samples are paired by
    equal stamps; actual samples without an expected one (not yet arrived) are left out.

    Args:
        expected: The EXPECTED robot's track (the plan), positions in base_link [m].
        actual: An executing robot's track, positions in base_link [m].

    Returns:
        (t_ns (m,), deviation_m (m,)) for the m paired samples, in time order.
    """
    t_exp, t_act = expected.t_ns, actual.t_ns
    if not len(t_exp) or not len(t_act):
        return np.empty(0, dtype=np.int64), np.empty(0)
    index = np.minimum(np.searchsorted(t_exp, t_act), len(t_exp) - 1)
    paired = t_exp[index] == t_act
    delta = actual.positions_m[paired] - expected.positions_m[index[paired]]
    return t_act[paired].copy(), np.sqrt(np.einsum("ij,ij->i", delta, delta))
