"""The rows of ``error_collection`` cases from a run's stored records.

The records are of a live session through the drivers, or of a campaign: the read samples of each case, as
:func:`~.collection.collect` keeps them in batch.

A record is recognised by its setpoints: the collection motion of the run's settings (``controllers.collection``)
drawn from the case seed gives every setpoint of the record, to the stored record's quantum. A record that
stopped early, or of another case, is an error naming the case, never silently a dataset of other rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cosim_validation.common.record import TrajectoryRecord
from cosim_validation.controllers.planning.collection_motion import CollectionMotion, CollectSettings, collection_motion
from cosim_validation.error_injection.collection import dataset_of_collection
from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.error_types import DatasetError
from cosim_validation.robots.model import Kinematics

#: Setpoints of a stored record differ from the planned ones by its codec's quantum at most (1e-8); 1e-6 keeps a
#: margin and is far below the smallest collection step (a joint change of 0.05 rad split into steps).
SETPOINT_TOLERANCE = 1e-6
#: Segments per collection case (settled steps, continuous training motion, held-out motion).
PARTS = 3


def _matching_motion(
    record: TrajectoryRecord, kinematics: Kinematics, home: np.ndarray, settings: CollectSettings, seeds: Sequence[int]
) -> tuple[CollectionMotion, int]:
    """The collection motion (and its seed) whose setpoints the record followed.

    Raises:
        DatasetError: No seed's motion has the record's setpoints (names the case and what differs).
    """
    why = "no case seed to try"
    for seed in seeds:
        motion = collection_motion(home, kinematics.q_lower, kinematics.q_upper, settings, seed)
        if len(motion.t_s) != len(record.t_s):
            why = f"{len(record.t_s)} samples stored, the collection has {len(motion.t_s)} (a case stopped early?)"
            continue
        gap = float(np.abs(motion.q - record.q_setpoint).max())
        if gap <= SETPOINT_TOLERANCE:
            return motion, int(seed)
        why = f"its setpoints differ from the collection's by up to {gap:.3g}"
    raise DatasetError(
        f"case {record.test_id}: not the error_collection motion of the run's settings (controllers.collection) and "
        f"case seed: {why}"
    )


def dataset_of_collection_records(
    records: Sequence[TrajectoryRecord],
    kinematics: Kinematics,
    home: np.ndarray,
    settings: CollectSettings,
    seeds: Sequence[Sequence[int]],
    source: str,
) -> ErrorDataset:
    """The read samples of every record, three segments per case; the held-out motion is set ``test``.

    Each record is an ``error_collection`` case; ``seeds[i]`` are the case seeds record i may have been drawn from.

    Args:
        records: One robot's stored records, one per ``error_collection`` case.
        kinematics: The nominal arm and needle of the robot.
        home: The collection's home pose, shape (J,), in [rad] (or [m] for a prismatic joint).
        settings: The run's collection settings (``controllers.collection``).
        seeds: Per record, the case seeds it may have been drawn from.
        source: Where the records come from, for messages and the dataset's metadata.

    Raises:
        DatasetError: No records, or a record that is not a whole collection case.
    """
    if not records:
        raise DatasetError(f"{source}: no stored trajectories to make a dataset of")
    parts, case_seeds = [], []
    for i, record in enumerate(records):
        motion, seed = _matching_motion(record, kinematics, home, settings, seeds[i])
        marker = (record.marker_pos_m, record.marker_quat_wxyz, record.marker_error_m)
        parts.append(
            dataset_of_collection(
                motion, record.t_s, record.q_setpoint, record.q_measured, marker, kinematics, {}, PARTS * i
            )
        )
        case_seeds.append(seed)
    meta = {
        "source": source,
        "cases": [r.test_id for r in records],
        "case_seeds": case_seeds,
        "settings": dict(vars(settings)) | {"seed": None},
    }
    first = parts[0]
    return ErrorDataset(
        first.robot,
        first.joint_units,
        np.concatenate([p.set_name for p in parts]),
        np.concatenate([p.segment for p in parts]),
        np.concatenate([p.time_s for p in parts]),
        np.concatenate([p.q_setpoint for p in parts]),
        np.concatenate([p.q_measured for p in parts]),
        np.concatenate([p.marker_pos_m for p in parts]),
        np.concatenate([p.marker_quat_wxyz for p in parts]),
        np.concatenate([p.marker_error_m for p in parts]),
        meta,
    )
