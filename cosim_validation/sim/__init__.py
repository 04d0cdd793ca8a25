"""Virtual robots behind one protocol (MuJoCo default, PyBullet second engine) and trajectory execution.

The emulated physical arm lives in :mod:`cosim_validation.hardware` and implements the same protocol;
:mod:`cosim_validation.backends` builds any of them by name.
"""

from cosim_validation.sim.backends_config import BackendsConfig, JointServoConfig
from cosim_validation.sim.errors import BackendInputError, BackendModelError
from cosim_validation.sim.execute import execute_trajectory, run_samples
from cosim_validation.sim.robot_backend import BackendSample, RobotBackend, marker_arrays
from cosim_validation.sim.setpoint_ramp import SetpointRamp

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
