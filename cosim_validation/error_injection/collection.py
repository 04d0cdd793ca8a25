"""Collecting an error dataset from a physical robot ([Barragan et al. 2024], IV-B).

The motion: random goals in small settled steps, a continuous training motion and a continuous held-out motion
(:mod:`~cosim_validation.controllers.planning.collection_motion`).

The robot is any :class:`~cosim_validation.robots.robot_backend.RobotBackend`, driven as the lockstep loop drives
it (``assembly/robot_port.py``: reseeded with the collection's seed and reset at home, then setpoint k stamped
t_k reached linearly within t_k - t_(k-1) and read): a live session of ``error_collection`` cases drives the
physical robot's driver node the same way, so ``cosim errors collect --from-run`` gives the same rows
(:func:`dataset_of_collection`). The software learns nothing of the robot but what it reports (no hand-eye
transform, no error parameters).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cosim_validation.controllers.planning.collection_motion import (
    HELD_OUT,
    CollectionMotion,
    CollectSettings,
    collection_motion,
    continuous_setpoints,
    motion_box,
    training_setpoints,
)
from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.robot_identity import RobotIdentity, joint_units
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample, Reseedable, RobotBackend
from cosim_validation.robots.virtual.execute import run_samples

__all__ = [
    "CollectSettings",
    "collect",
    "continuous_setpoints",
    "dataset_of_collection",
    "drive",
    "motion_box",
    "training_setpoints",
]


def drive(backend: RobotBackend, motion: CollectionMotion, seed: int) -> list[BackendSample]:
    """Every sample of ``motion`` on ``backend``.

    Reseed its noise with ``seed``, reset at rest at the first setpoint and read it, then command each setpoint to
    be reached at its stamp and read the arm.

    Args:
        backend: The robot to drive (its noise reseeded when it is :class:`Reseedable`).
        motion: The collection's stamped setpoints: times (n,) in [s] and joints (n, J) in [rad] (or [m] for a
            prismatic joint).
        seed: The seed of the backend's noise.
    """
    if isinstance(backend, Reseedable):
        backend.reseed(int(seed))
    return run_samples(backend, motion.t_s, motion.q)


def dataset_of_collection(
    motion: CollectionMotion,
    t_s: np.ndarray,
    q_setpoint: np.ndarray,
    q_measured: np.ndarray,
    marker: tuple[np.ndarray, np.ndarray, np.ndarray],
    kinematics: Kinematics,
    meta: dict[str, Any],
    segment0: int = 0,
) -> ErrorDataset:
    """The dataset rows of one collection's samples (n, as ``motion``).

    The read samples only, set ``test`` for the held-out motion, a segment per part (from ``segment0``).

    Args:
        motion: The collection motion the samples followed.
        t_s: Sample times, shape (n,), in [s].
        q_setpoint: The commanded joints, shape (n, J), in [rad] (or [m] for a prismatic joint).
        q_measured: The joints the robot reported, shape (n, J), same units.
        marker: The tracked marker: position, shape (n, 3), in [m]; quaternion, shape (n, 4); registration
            error, shape (n,), in [m].
        kinematics: The nominal arm and needle.
        meta: Metadata of the dataset.
        segment0: The number of the first part's segment.
    """
    keep = motion.reading
    part = motion.part[keep].astype(np.int64)
    return ErrorDataset(
        RobotIdentity.of(kinematics),
        joint_units(kinematics),
        np.where(part == HELD_OUT, "test", "train"),
        part + segment0,
        np.asarray(t_s, dtype=np.float64)[keep],
        np.asarray(q_setpoint)[keep],
        np.asarray(q_measured)[keep],
        marker[0][keep],
        marker[1][keep],
        np.asarray(marker[2], dtype=np.float64)[keep],
        meta,
    )


def collect(backend: RobotBackend, kinematics: Kinematics, home: np.ndarray, settings: CollectSettings) -> ErrorDataset:
    """Drive ``backend`` through the collection of ``settings``; the dataset of what it reported.

    Motion and noise come from the settings' seed.

    Args:
        backend: The robot to collect on.
        kinematics: The nominal arm and needle of the robot (joint limits, identity and joint units of the dataset).
        home: The home pose the motion starts and returns to, shape (J,), in [rad] (or [m] for a prismatic joint).
        settings: The collection's settings (its ``seed`` draws the motion and reseeds the noise).
    """
    motion = collection_motion(home, kinematics.q_lower, kinematics.q_upper, settings)
    samples = drive(backend, motion, settings.seed)
    meta = {"source": f"cosim errors collect ({backend.name})", "settings": dict(vars(settings))}
    marker = (
        np.array([s.marker_pos_m for s in samples]),
        np.array([s.marker_quat_wxyz for s in samples]),
        np.array([s.marker_error_m for s in samples]),
    )
    return dataset_of_collection(
        motion,
        np.array([s.t_s for s in samples]),
        np.array([s.q_setpoint for s in samples]),
        np.array([s.q_measured for s in samples]),
        marker,
        kinematics,
        meta,
    )
