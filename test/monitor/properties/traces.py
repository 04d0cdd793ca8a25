"""Synthetic trajectory records and an analytic obstacle for the property tests."""

from __future__ import annotations

import numpy as np

from cosim_validation.common.record import RobotRole, TrajectoryRecord

JOINTS = tuple(f"joint{i + 1}" for i in range(7))


def quat_z_to(axis: np.ndarray) -> np.ndarray:
    """(n, 4) wxyz quaternions rotating +z onto the unit vectors ``axis`` (n, 3)."""
    z = np.array([0.0, 0.0, 1.0])
    out = np.empty((axis.shape[0], 4))
    for i, a in enumerate(axis / np.linalg.norm(axis, axis=1, keepdims=True)):
        c = np.cross(z, a)
        w = 1.0 + float(z @ a)
        q = np.array([w, *c]) if w > 1e-12 else np.array([0.0, 1.0, 0.0, 0.0])
        out[i] = q / np.linalg.norm(q)
    return out


def make_record(
    tip_m: np.ndarray,
    stage: np.ndarray,
    *,
    t_s: np.ndarray | None = None,
    q: np.ndarray | None = None,
    joint_pos_m: np.ndarray | None = None,
    tip_axis: np.ndarray | None = None,
    actual_tip_m: np.ndarray | None = None,
    robot: RobotRole = RobotRole.VIRTUAL,
    needle_length_m: float = 0.1,
    test_id: str = "synthetic",
) -> TrajectoryRecord:
    """A record with the given tip path and stages; other fields simple but consistent."""
    tip_m = np.asarray(tip_m, dtype=np.float64)
    n = tip_m.shape[0]
    t_s = np.arange(n) * 0.1 if t_s is None else t_s
    q = np.zeros((n, 7)) if q is None else q
    if joint_pos_m is None:
        joint_pos_m = np.zeros((n, 7, 3))
        joint_pos_m[:, :, 2] = np.linspace(0.0, 1.3, 7)
    axes = np.zeros((n, 7, 3))
    axes[..., 2] = 1.0
    tip_axis = np.tile([0.0, 0.0, -1.0], (n, 1)) if tip_axis is None else tip_axis
    quat = quat_z_to(tip_axis)
    actual = np.full((n, 3), np.nan) if actual_tip_m is None else actual_tip_m
    actual_quat = np.full((n, 4), np.nan) if actual_tip_m is None else quat
    return TrajectoryRecord(
        test_id,
        robot,
        "synthetic",
        JOINTS,
        needle_length_m,
        t_s,
        np.asarray(stage, dtype=np.uint8),
        q,
        q,
        joint_pos_m,
        axes,
        tip_m,
        quat,
        actual,
        actual_quat,
    )


def line_record(n: int = 50, **kwargs: object) -> TrajectoryRecord:
    """Tip moving along x from 0 to 1 m in 5 equal stages of n / 5 samples at 10 Hz."""
    tip = np.zeros((n, 3))
    tip[:, 0] = np.linspace(0.0, 1.0, n)
    stage = np.repeat(np.arange(1, 6), n // 5)
    return make_record(tip, stage, **kwargs)  # type: ignore[arg-type]


class Sphere:
    """An analytic ball obstacle (a DistanceField): signed distance to its surface [m]."""

    def __init__(self, center_m: tuple[float, float, float], radius_m: float) -> None:
        self.center = np.asarray(center_m, dtype=np.float64)
        self.radius = radius_m

    def point_distance_m(self, points_m: np.ndarray) -> np.ndarray:
        return np.linalg.norm(points_m - self.center, axis=1) - self.radius  # type: ignore[no-any-return]

    def segment_distance_m(self, start_m: np.ndarray, end_m: np.ndarray) -> np.ndarray:
        d = end_m - start_m
        length2 = np.maximum((d * d).sum(axis=1), 1e-300)
        s = np.clip(((self.center - start_m) * d).sum(axis=1) / length2, 0.0, 1.0)
        closest = start_m + s[:, None] * d
        return np.linalg.norm(closest - self.center, axis=1) - self.radius  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------- insertion case
TARGET = np.array([0.45, 0.0, 0.25])
HEART_CENTER = np.array([0.45, 0.10, 0.22])
HEART_RADIUS = 0.04
DOWN = np.array([0.0, 0.0, -1.0])  # needle direction (tip frame +z)
STAGE_POINTS = [
    np.array([0.30, 0.0, 0.60]),  # home
    TARGET + np.array([0.0, 0.0, 0.16]),  # source
    TARGET + np.array([0.0, 0.0, 0.06]),  # skin
    TARGET,  # target
    TARGET + np.array([0.0, 0.0, 0.06]),  # skin again
    TARGET + np.array([0.0, 0.0, 0.16]),  # source again
]
STAGE_SAMPLES = (20, 10, 12, 12, 10)


def insertion_tip(scale: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Tip positions (n, 3) and stages (n,) of a nominal case at 10 Hz x ``scale``: lines between stage points."""
    tips, stages = [STAGE_POINTS[0][None]], [np.array([1])]
    for i, count in enumerate(c * scale for c in STAGE_SAMPLES):  # every stage ends exactly at its end point
        s = np.linspace(0.0, 1.0, count + 1)[1:, None]
        tips.append(STAGE_POINTS[i] + s * (STAGE_POINTS[i + 1] - STAGE_POINTS[i]))
        stages.append(np.full(count, i + 1))
    return np.concatenate(tips), np.concatenate(stages)


def insertion_joints(tip: np.ndarray) -> np.ndarray:
    """(n, 7, 3) joint origins spread along the line from the base to 5 cm above the needle's base."""
    mount = tip - 0.1 * DOWN + np.array([0.0, 0.0, 0.05])
    frac = np.linspace(0.0, 1.0, 7)[None, :, None]
    return frac * mount[:, None, :]


def insertion_q(n: int, dt: float = 0.1) -> np.ndarray:
    """(n, 7) smooth joint angles [rad]."""
    t = np.arange(n) * dt
    return 0.1 * np.arange(1, 8)[None, :] * np.sin(0.3 * t)[:, None]


def insertion_case(
    robot: RobotRole = RobotRole.VIRTUAL, seed: int = 0, noise_m: float = 2e-4, scale: int = 1
) -> tuple[TrajectoryRecord, TrajectoryRecord]:
    """(robot record, expected record) of a nominal needle insertion that satisfies every shipped property.

    ``scale`` multiplies the sampling rate (10 Hz) and the number of samples.
    """
    tip, stage = insertion_tip(scale)
    n = tip.shape[0]
    dt = 0.1 / scale
    t_s = np.arange(n) * dt
    q = insertion_q(n, dt)
    axis = np.tile(DOWN, (n, 1))
    expected = make_record(
        tip, stage, t_s=t_s, q=q, joint_pos_m=insertion_joints(tip), tip_axis=axis, robot=RobotRole.EXPECTED
    )
    rng = np.random.default_rng(seed)
    moved = tip + rng.uniform(-noise_m, noise_m, tip.shape) * np.array([1.0, 1.0, 0.0])  # lateral tracking noise
    record = make_record(
        moved,
        stage,
        t_s=t_s,
        q=q + rng.uniform(-1e-3, 1e-3, q.shape),
        joint_pos_m=insertion_joints(moved),
        tip_axis=axis,
        actual_tip_m=moved + rng.uniform(-noise_m, noise_m, tip.shape) * np.array([1.0, 1.0, 0.0]),
        robot=robot,
    )
    return record, expected


def heart_mesh_obstacle() -> object:
    """The heart as a triangle mesh (icosphere) behind metrics.MeshDistance."""
    import trimesh

    from cosim_validation.monitor.properties.obstacles import MeshObstacle

    sphere = trimesh.creation.icosphere(subdivisions=4, radius=HEART_RADIUS)
    return MeshObstacle.from_arrays(np.asarray(sphere.vertices) + HEART_CENTER, np.asarray(sphere.faces))


def edited(record: TrajectoryRecord, **arrays: np.ndarray) -> TrajectoryRecord:
    """``record`` with some arrays replaced."""
    import dataclasses

    return dataclasses.replace(record, **arrays)


def machine_verdicts(names: tuple[str, ...], record: TrajectoryRecord, target_m: np.ndarray | None) -> list[object]:
    """The offline ``machine:<name>`` verdicts an online monitor appends after the properties'."""
    from test.monitor.properties.lt4r_reference import run_machine, shipped

    return [run_machine(shipped(name), record, target_m).to_verdict() for name in names]
