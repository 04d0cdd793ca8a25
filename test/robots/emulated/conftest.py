"""Fixtures of the hardware tests: the same as the sim tests (configuration, kinematics, plan)."""

from test.robots.virtual.conftest import config, kinematics, plan, robot_config

__all__ = ["config", "kinematics", "plan", "robot_config"]
