"""The ROS 2 layer: message <-> array conversion, QoS profiles, rosbag2 (MCAP) reading and writing.

Only this package and ``cosim_validation.live.nodes`` import rclpy or message packages. Modules here that
read bags (``bag``) work on rosbags' message objects and do not need rclpy.
"""
