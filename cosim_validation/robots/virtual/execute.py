"""Executing a planned joint trajectory on a backend: the batch runner's loop, yielding a TrajectoryRecord."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from cosim_validation.common.record import Stage, TrajectoryRecord, kinematic_record
from cosim_validation.robots.model import Kinematics
from cosim_validation.robots.robot_backend import BackendSample, RobotBackend, marker_arrays
from cosim_validation.robots.virtual.errors import BackendInputError

_STAGE_VALUES = np.array([int(s) for s in Stage])


def _checked_plan(
    t_s: ArrayLike, stage: ArrayLike, q_setpoint: ArrayLike, backend: RobotBackend
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The plan as (n,) times, (n,) uint8 stages, (n, J) setpoints; every problem named with its sample."""
    t = np.asarray(t_s, dtype=np.float64)
    if t.ndim != 1 or t.shape[0] < 1:
        raise BackendInputError(f"plan t_s: expected a 1-D array of n >= 1 times [s], got shape {t.shape}")
    n, names = t.shape[0], backend.joint_names
    if not np.isfinite(t).all():
        raise BackendInputError(f"plan t_s[{int(np.argmax(~np.isfinite(t)))}] is not finite")
    if n > 1 and (np.diff(t) <= 0).any():
        k = int(np.argmax(np.diff(t) <= 0)) + 1
        raise BackendInputError(
            f"plan t_s must increase strictly; t_s[{k}] = {float(t[k])!r} after {float(t[k - 1])!r}"
        )
    st = np.asarray(stage)
    if st.shape != (n,) or not np.isin(st, _STAGE_VALUES).all():
        raise BackendInputError(f"plan stage: expected ({n},) Stage values {_STAGE_VALUES.tolist()}, got {stage!r}")
    q = np.asarray(q_setpoint, dtype=np.float64)
    if q.shape != (n, len(names)):
        raise BackendInputError(f"plan q_setpoint: expected shape ({n}, {len(names)}), got {q.shape}")
    bad = ~np.isfinite(q) | (q < backend.q_lower - 1e-9) | (q > backend.q_upper + 1e-9)
    if bad.any():
        k, j = (int(i) for i in np.argwhere(bad)[0])
        unit = backend.joint_units[j]
        raise BackendInputError(
            f"plan q_setpoint[{k}] ({names[j]} = {float(q[k, j])!r} {unit}) is not finite or outside "
            f"[{float(backend.q_lower[j])!r}, {float(backend.q_upper[j])!r}] {unit}"
        )
    return t, st.astype(np.uint8), q


def stamps_ns(t_s: np.ndarray) -> np.ndarray:
    """Setpoint stamps of times ``t_s``, rounded as the lockstep loop rounds a plan's.

    Args:
        t_s: Setpoint times, shape (n,), in [s].

    Returns:
        The stamps, shape (n,), int64, in [ns].
    """
    return np.round(np.asarray(t_s, dtype=np.float64) * 1e9).astype(np.int64)


def run_samples(backend: RobotBackend, t_s: np.ndarray, q_setpoint: np.ndarray) -> list[BackendSample]:
    """Stream the setpoints at their times, open loop; sample k is read when setpoint k is due (t_s[k]).

    The arm starts at rest at setpoint 0 (sample 0); setpoint k is commanded at t_s[k-1] to be reached at t_s[k]
    (first-order hold), so sample k measures how well the arm follows setpoint k. The steps between setpoints are
    those of their stamps in ns (:func:`stamps_ns`), as the lockstep loop and a live robot see them.

    Args:
        backend: The robot (reset by this call).
        t_s: Setpoint times, shape (n,), strictly increasing, in [s].
        q_setpoint: Joint setpoints, shape (n, J), in [rad], or [m] for a prismatic joint.

    Returns:
        The n samples, one per setpoint.
    """
    backend.reset(q_setpoint[0])
    samples = [backend.read()]
    stamps = stamps_ns(t_s)
    for k in range(1, len(stamps)):
        dt_s = int(stamps[k] - stamps[k - 1]) / 1e9
        backend.command(q_setpoint[k], dt_s)
        backend.advance(dt_s)
        samples.append(backend.read())
    return samples


def execute_trajectory(
    backend: RobotBackend,
    kinematics: Kinematics,
    t_s: ArrayLike,
    stage: ArrayLike,
    q_setpoint: ArrayLike,
    *,
    test_id: str = "",
    meta: Mapping[str, Any] | None = None,
) -> TrajectoryRecord:
    """Run a planned joint trajectory on ``backend`` and record it.

    Args:
        backend: The robot (reset by this call).
        kinematics: The nominal arm and needle: forward kinematics of the measured joints.
        t_s: (n,) plan times [s], strictly increasing.
        stage: (n,) :class:`~cosim_validation.common.record.Stage` of each sample.
        q_setpoint: (n, J) planned joint positions [rad], finite and within the joint limits.
        test_id: Id of the case, stored in the record.
        meta: Extra metadata for the record.

    Returns:
        The record: the plan's times (on the backend's physics clock) and stages, setpoints, measured
        joints, joint origins, axes and tip pose by nominal FK of the measured joints, and the actual tip
        pose (simulator ground truth or tracker).

    Raises:
        BackendInputError: Malformed plan (naming the sample and joint).
    """
    t, st, q = _checked_plan(t_s, stage, q_setpoint, backend)
    samples = run_samples(backend, t, q)
    measured = np.array([s.q_measured for s in samples])
    return kinematic_record(
        kinematics,
        test_id=test_id,
        robot=backend.role,
        backend=backend.name,
        t_s=t[0] + np.array([s.t_s for s in samples]),
        stage=st,
        q_setpoint=q,
        q_measured=measured,
        actual_tip_pos_m=np.array([s.actual_tip_pos_m for s in samples]),
        actual_tip_quat_wxyz=np.array([s.actual_tip_quat_wxyz for s in samples]),
        markers=marker_arrays(samples),
        meta=dict(meta or {}),
    )
