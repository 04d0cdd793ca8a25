"""cosim_validation: co-simulation validation of autonomous surgical-robot software.

The packages below this one form a ROS-free core (numpy, numba, trimesh, open3d, pinocchio,
MuJoCo); only ``cosim_validation.live.nodes`` and ``cosim_validation.live.ros`` import rclpy or ROS messages.
"""

__version__ = "0.1.0"
