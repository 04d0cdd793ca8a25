"""A dataset's rows as one robot's trajectory record (``cosim import-crtk ... -o X.npz``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from cosim_validation.error_injection.record_of_dataset import record_of_dataset
from cosim_validation.robots.model import Kinematics
from test.error_injection.synthetic import synthetic_dataset


def test_a_tracker_quaternion_a_dataset_takes_becomes_a_unit_one_in_the_record(kinematics: Kinematics) -> None:
    """A dataset takes a marker quaternion within 10 % of unit; a record holds unit ones (one of norm 1.05 was
    refused when the record was made)."""
    data = synthetic_dataset(kinematics, 30, 0, seed=1)
    data = replace(data, time_s=np.arange(data.n_rows) * 0.1, set_name=np.full(data.n_rows, "train"))
    quat = data.marker_quat_wxyz.copy()
    quat[3] *= 1.05
    quat[4] = np.nan  # not seen
    record = record_of_dataset(replace(data, marker_quat_wxyz=quat), kinematics, "tracked")
    np.testing.assert_allclose(np.linalg.norm(record.marker_quat_wxyz[[0, 3]], axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(record.marker_quat_wxyz[3], quat[3] / 1.05 / np.linalg.norm(quat[3] / 1.05))
    assert np.isnan(record.marker_quat_wxyz[4]).all()
