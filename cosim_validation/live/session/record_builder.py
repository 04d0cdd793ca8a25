"""Collecting a robot's monitor samples back into a TrajectoryRecord (what a session stores per case)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cosim_validation.common.record import RobotRole, TrajectoryRecord
from cosim_validation.monitor.properties import Sample


class RecordBuilder:
    """Appends samples of one robot in one case; :meth:`build` makes the record.

    Args:
        test_id: The case.
        robot: Whose samples.
        backend: What produced them (e.g. ``mujoco`` or the driver node's name).
        joint_names: Names of the J joints.
        needle_length_m: Needle length [m].
    """

    def __init__(
        self, test_id: str, robot: RobotRole, backend: str, joint_names: tuple[str, ...], needle_length_m: float
    ) -> None:
        self._head = (test_id, robot, backend, tuple(joint_names), float(needle_length_m))
        self._samples: list[Sample] = []

    def __len__(self) -> int:
        return len(self._samples)

    def add(self, sample: Sample) -> None:
        """One more sample (in time order).

        Args:
            sample: The robot's next monitor sample.
        """
        self._samples.append(sample)

    def build(self, meta: Mapping[str, Any] | None = None) -> TrajectoryRecord:
        """The record of every sample added so far.

        Args:
            meta: The record's metadata; None: empty.
        """
        test_id, robot, backend, names, needle = self._head
        s = self._samples

        def stack(name: str, shape: tuple[int, ...]) -> np.ndarray:
            return np.array([getattr(x, name) for x in s], dtype=np.float64).reshape((len(s), *shape))

        j = len(names)
        return TrajectoryRecord(
            test_id=test_id,
            robot=robot,
            backend=backend,
            joint_names=names,
            needle_length_m=needle,
            t_s=np.array([x.t_s for x in s], dtype=np.float64),
            stage=np.array([int(x.stage) for x in s], dtype=np.uint8),
            q_setpoint=stack("q_setpoint", (j,)),
            q_measured=stack("q_measured", (j,)),
            joint_pos_m=stack("joint_pos_m", (j, 3)),
            joint_axis=stack("joint_axis", (j, 3)),
            tip_pos_m=stack("tip_pos_m", (3,)),
            tip_quat_wxyz=stack("tip_quat_wxyz", (4,)),
            actual_tip_pos_m=stack("actual_tip_pos_m", (3,)),
            actual_tip_quat_wxyz=stack("actual_tip_quat_wxyz", (4,)),
            meta=dict(meta or {}),
            marker_pos_m=stack("marker_pos_m", (3,)),
            marker_quat_wxyz=stack("marker_quat_wxyz", (4,)),
            marker_error_m=stack("marker_error_m", ()),
            supervisor=np.array([int(x.supervisor) for x in s], dtype=np.uint8),
        )
