"""Fixtures for ROS tests live in test/conftest.py (ros_domain, rclpy_context, node_env)."""
