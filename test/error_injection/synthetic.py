"""Known error functions to learn: a controller error with play (NN1) and a smooth kinematic error (NN2).

The controller error is the gear's play (a dead zone: the joint trails the setpoint by ``BACKLASH_RAD`` on the side
it was last pushed to; only a network that sees the direction or the previous joints learns it) plus a sag; the
kinematic error is a smooth function of the measured joints (an offset and a sine, like a mis-mastered joint and a
link that bends with the pose). The joint count comes from the kinematics; nothing assumes seven joints.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from cosim_validation.error_injection.dataset import ErrorDataset
from cosim_validation.error_injection.features import FeatureSpec, feature_matrix
from cosim_validation.error_injection.model_file import ErrorModel
from cosim_validation.error_injection.robot_identity import RobotIdentity
from cosim_validation.error_injection.training import TrainingSettings, train_network
from cosim_validation.error_injection.transforms import inverse, quat_wxyz
from cosim_validation.robots.model import Kinematics

#: Play of each joint [rad]; with the sag and the kinematic error below the tip misses the plan by 1-3 mm, as the
#: emulated ER3 Pro does (RQ3: 1.43 mm mean), well above the tracker's 0.1 mm noise.
BACKLASH_RAD = 1e-3


def measured_joints(q_setpoint: np.ndarray, segment_start: np.ndarray) -> np.ndarray:
    """(n, J) measured joints of a series of setpoints under play and sag [rad].

    Play: a joint stays where it is until the setpoint is more than ``BACKLASH_RAD`` away from it, then trails the
    setpoint by ``BACKLASH_RAD`` (a dead zone); sag: ``5e-4 cos(q)`` on top. A segment starts at rest on its setpoint.
    """
    trailing = np.empty_like(q_setpoint)
    for i, u in enumerate(q_setpoint):
        last = u if segment_start[i] else trailing[i - 1]
        gap = u - last
        trailing[i] = np.where(np.abs(gap) > BACKLASH_RAD, u - BACKLASH_RAD * np.sign(gap), last)
    return trailing + 5e-4 * np.cos(q_setpoint)  # type: ignore[no-any-return]


def kinematic_error(q_measured: np.ndarray) -> np.ndarray:
    """(n, J) actual - measured [rad]: an offset growing along the chain and a sine of the pose."""
    n_joints = q_measured.shape[1]
    return 1e-3 * np.linspace(1.0, -1.0, n_joints) + 2e-3 * np.sin(2.0 * q_measured + 0.3)


def workspace(kinematics: Kinematics) -> tuple[np.ndarray, np.ndarray]:
    """Centre and half-width (each (J,)) of the joint box the synthetic motion stays in: around the shipped home
    pose (elbow and wrist bent, away from the stretched-arm singularity), a tenth of each joint's range."""
    from cosim_validation.common.config import load_config
    from cosim_validation.robots.model import RobotConfig
    from test.robots.virtual.plans import CONFIG_PATH

    home = RobotConfig.from_config(load_config(CONFIG_PATH)["robot"]).home_q
    if len(home) != kinematics.n_joints:
        home = 0.5 * (kinematics.q_lower + kinematics.q_upper)
    return home, 0.1 * (kinematics.q_upper - kinematics.q_lower)


def random_walk(kinematics: Kinematics, n_rows: int, seed: int, step_rad: float = 0.05) -> np.ndarray:
    """(n, J) setpoints: linear moves between random goals inside :func:`workspace`, in small steps."""
    rng = np.random.default_rng(seed)
    middle, half = workspace(kinematics)
    rows = [middle.copy()]
    while len(rows) < n_rows:
        goal = middle + half * rng.uniform(-1.0, 1.0, size=middle.shape)
        start = rows[-1]
        steps = max(1, int(np.ceil(np.abs(goal - start).max() / step_rad)))
        rows.extend([start + (goal - start) * k / steps for k in range(1, steps + 1)])
    return np.asarray(rows[:n_rows])


def synthetic_rows(kinematics: Kinematics, n_rows: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Setpoints, measured and actual joints (each (n, J)) of one segment under the known errors."""
    q_s = random_walk(kinematics, n_rows, seed)
    starts = np.zeros(n_rows, dtype=bool)
    starts[0] = True
    q_m = measured_joints(q_s, starts)
    return q_s, q_m, q_m + kinematic_error(q_m)


def train_synthetic_model(kinematics: Kinematics, n_rows: int = 3000, seed: int = 1) -> ErrorModel:
    """NN1 (CPE) and NN2 (OC) trained on :func:`synthetic_rows` (about ten seconds on one core)."""
    q_s, q_m, q_a = synthetic_rows(kinematics, n_rows, seed)
    starts = np.zeros(n_rows, dtype=bool)
    starts[0] = True
    previous = np.vstack((q_m[:1], q_m[:-1]))
    n_joints = kinematics.n_joints
    settings = TrainingSettings(max_epochs=150, patience=15, seed=seed)
    spec1, spec2 = FeatureSpec("CPE", n_joints), FeatureSpec("OC", n_joints)
    nn1 = train_network(spec1, feature_matrix(spec1, q_s, previous, starts), q_m - q_s, settings)
    nn2 = train_network(spec2, feature_matrix(spec2, q_m, previous, starts), q_a - q_m, settings)
    meta = {"nn1": nn1.to_json(), "nn2": nn2.to_json(), "dataset": "synthetic"}
    return ErrorModel(RobotIdentity.of(kinematics), nn1.network, nn2.network, "0" * 64, meta)


def hidden_transforms() -> tuple[np.ndarray, np.ndarray]:
    """The hidden X = T_tip_marker and Y = T_base_tracker of the synthetic tracker."""
    X, Y = np.eye(4), np.eye(4)
    X[:3, :3] = Rotation.from_rotvec([0.3, -0.2, 0.9]).as_matrix()
    X[:3, 3] = [0.04, -0.01, -0.08]
    Y[:3, :3] = Rotation.from_rotvec([0.1, 2.8, -0.4]).as_matrix()
    Y[:3, 3] = [1.5, 0.2, 0.6]
    return X, Y


def _teleoperation(kinematics: Kinematics, n_rows: int, seed: int) -> np.ndarray:
    """(n, J) a continuous, smooth held-out motion: sums of slow sines around the middle of the limits."""
    rng = np.random.default_rng(seed)
    t = np.arange(n_rows)[:, None] * 0.05
    middle, half = workspace(kinematics)
    freq, phase = rng.uniform(0.05, 0.3, size=(2, kinematics.n_joints)), rng.uniform(0, 6.3, (2, kinematics.n_joints))
    return middle + half * 0.5 * (np.sin(freq[0] * t + phase[0]) + np.sin(freq[1] * t + phase[1]))  # type: ignore[no-any-return]


def synthetic_dataset(kinematics: Kinematics, n_train: int, n_test: int, seed: int) -> ErrorDataset:
    """A dataset as a tracker would record it: random-goal training rows, a continuous held-out segment.

    The marker poses are Y^-1 FK(actual joints) X with 0.1 mm / 0.02 deg noise; the registration error is 0.1 mm.
    """
    rng = np.random.default_rng(seed)
    q_s = np.vstack((random_walk(kinematics, n_train, seed), _teleoperation(kinematics, n_test, seed + 1)))
    segment = np.r_[np.zeros(n_train), np.ones(n_test)].astype(np.int64)
    starts = np.r_[True, segment[1:] != segment[:-1]]
    q_m = measured_joints(q_s, starts)
    q_a = q_m + kinematic_error(q_m)
    X, Y = hidden_transforms()
    pos, R = kinematics.tip_poses(q_a)
    T = np.tile(np.eye(4), (len(q_a), 1, 1))
    T[:, :3, :3], T[:, :3, 3] = R, pos
    B = inverse(Y) @ T @ X
    B[:, :3, :3] = B[:, :3, :3] @ Rotation.from_rotvec(rng.normal(0, np.radians(0.02), (len(B), 3))).as_matrix()
    B[:, :3, 3] += rng.normal(0.0, 1e-4, size=(len(B), 3))
    n = len(q_s)
    return ErrorDataset(
        RobotIdentity.of(kinematics),
        ("rad",) * kinematics.n_joints,
        np.array(["train"] * n_train + ["test"] * n_test),
        segment,
        0.1 * np.arange(n),
        q_s,
        q_m,
        B[:, :3, 3],
        quat_wxyz(B),
        np.full(n, 1e-4),
        {"source": "synthetic"},
    )
