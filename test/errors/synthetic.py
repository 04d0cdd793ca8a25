"""Known error functions to learn: a controller error with play (NN1) and a smooth kinematic error (NN2).

The controller error of joint j is ``BACKLASH_RAD[j] * direction`` (the gear's play, on the side the joint was last
pushed to: only a network with a direction feature can learn it) plus a small position-dependent sag; the kinematic
error is a smooth function of the measured joints (an offset and a sine, like a mis-mastered joint and a link that
bends with the pose). The joint count comes from the kinematics; nothing assumes seven joints.
"""

from __future__ import annotations

import numpy as np

from cosim_validation.errors.features import FeatureSpec, feature_matrix, series_directions
from cosim_validation.errors.model_file import ErrorModel
from cosim_validation.errors.robot_identity import RobotIdentity
from cosim_validation.errors.training import TrainingSettings, train_network
from cosim_validation.robot import Kinematics

#: Play of each joint [rad] (cycled over the joints).
BACKLASH_RAD = 4e-4


def controller_error(q_setpoint: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """(n, J) measured - setpoint [rad]: play on the side of motion plus a pose-dependent sag."""
    return BACKLASH_RAD * direction + 2e-4 * np.cos(q_setpoint)


def kinematic_error(q_measured: np.ndarray) -> np.ndarray:
    """(n, J) actual - measured [rad]: an offset growing along the chain and a sine of the pose."""
    n_joints = q_measured.shape[1]
    return 3e-4 * np.linspace(1.0, -1.0, n_joints) + 5e-4 * np.sin(q_measured + 0.3)


def random_walk(kinematics: Kinematics, n_rows: int, seed: int, step_rad: float = 0.1) -> np.ndarray:
    """(n, J) setpoints: linear moves between random goals inside the middle half of the limits, in small steps."""
    rng = np.random.default_rng(seed)
    lower, upper = kinematics.q_lower, kinematics.q_upper
    middle, half = 0.5 * (lower + upper), 0.25 * (upper - lower)
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
    previous = np.vstack((q_s[:1], q_s[:-1]))  # the measured joints lag the setpoint by the error; close enough
    direction = series_directions(q_s - previous, 5e-5, starts)
    q_m = q_s + controller_error(q_s, direction)
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
