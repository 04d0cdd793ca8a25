"""Rows that cannot be used, dropped and counted (never silently).

- a row whose setpoint or measured joints are not all finite is dropped for everything, and the history
  restarts after it (the next row starts a new segment: its "previous sample" is gone);
- a row whose marker was not seen (a dropout) or whose registration error exceeds the threshold keeps its joints
  (NN1 and the history use them) but gives no actual pose: calibration and NN2 leave it out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import NamedTuple

import numpy as np

from cosim_validation.error_injection.dataset import ErrorDataset

#: Default largest registration error of a usable marker pose [m].
DEFAULT_MAX_REGISTRATION_ERROR_M = 0.5e-3


class CleanedDataset(NamedTuple):
    """What is left, and what was dropped.

    Attributes:
        dataset: The rows with finite joints (segments renumbered where a dropped row cut the history).
        tracked: (n,) bool over ``dataset``: the marker pose is usable.
        counts: ``rows`` (before), ``nan_joints`` (dropped), ``marker_dropouts`` and ``registration_error_above``
            (rows without an actual pose), ``tracked`` (rows with one).
    """

    dataset: ErrorDataset
    tracked: np.ndarray
    counts: dict[str, int]

    def describe(self) -> str:
        """One line for people."""
        c = self.counts
        return (
            f"{c['rows']} rows: {c['nan_joints']} dropped (joints not finite); of the rest "
            f"{c['marker_dropouts']} without a marker (dropout), {c['registration_error_above']} with a "
            f"registration error above the threshold; {c['tracked']} with an actual pose"
        )


def clean(dataset: ErrorDataset, max_registration_error_m: float = DEFAULT_MAX_REGISTRATION_ERROR_M) -> CleanedDataset:
    """Drop rows with non-finite joints; mark rows whose marker pose is usable.

    Args:
        dataset: As read or collected.
        max_registration_error_m: Marker poses with a larger registration error are not used [m].
    """
    joints_ok = np.isfinite(dataset.q_setpoint).all(axis=1) & np.isfinite(dataset.q_measured).all(axis=1)
    joints_ok &= np.isfinite(dataset.time_s)
    new_segment = dataset.segment_starts()
    after_drop = np.zeros(dataset.n_rows, dtype=bool)
    after_drop[1:] = ~joints_ok[:-1]
    segment = np.cumsum(new_segment | after_drop) - 1  # a dropped row ends its history
    kept = replace(dataset.rows(joints_ok), segment=segment[joints_ok].astype(np.int64))
    seen = kept.marker_seen
    too_large = seen & ~(kept.marker_error_m <= max_registration_error_m)
    tracked = seen & ~too_large
    counts = {
        "rows": dataset.n_rows,
        "nan_joints": int((~joints_ok).sum()),
        "marker_dropouts": int((~seen).sum()),
        "registration_error_above": int(too_large.sum()),
        "tracked": int(tracked.sum()),
    }
    return CleanedDataset(kept, tracked, counts)
