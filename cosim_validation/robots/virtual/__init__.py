"""Virtual robots behind one protocol (MuJoCo default, PyBullet second engine) and trajectory execution.

The emulated physical arm lives in :mod:`cosim_validation.robots.emulated` and implements the same protocol;
:mod:`cosim_validation.robots.registry` builds any of them by name.
"""

from cosim_validation.robots.robot_backend import BackendSample, RobotBackend, marker_arrays
from cosim_validation.robots.virtual.backends_config import BackendsConfig, JointServoConfig
from cosim_validation.robots.virtual.errors import BackendInputError, BackendModelError
from cosim_validation.robots.virtual.execute import execute_trajectory, run_samples
from cosim_validation.robots.virtual.setpoint_ramp import SetpointRamp

__all__ = [
    "BackendInputError",
    "BackendModelError",
    "BackendSample",
    "BackendsConfig",
    "JointServoConfig",
    "RobotBackend",
    "SetpointRamp",
    "execute_trajectory",
    "marker_arrays",
    "run_samples",
]
