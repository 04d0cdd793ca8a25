"""Fixtures for tests that start real ROS 2 nodes over DDS."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from test.ros.ros_harness import exclusive_domain, ros_env


@pytest.fixture
def ros_domain(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """An exclusive ROS_DOMAIN_ID with localhost discovery, set for this process and its children."""
    with exclusive_domain() as domain:
        monkeypatch.setenv("ROS_DOMAIN_ID", str(domain))
        monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        yield domain


@pytest.fixture
def rclpy_context(ros_domain: int) -> Iterator[Any]:
    """An initialized rclpy context in the test's domain, shut down afterwards."""
    import rclpy
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context, domain_id=ros_domain)
    try:
        yield context
    finally:
        context.try_shutdown()


@pytest.fixture
def node_env(ros_domain: int) -> dict[str, str]:
    """Environment for node processes of this test."""
    assert os.environ["ROS_DOMAIN_ID"] == str(ros_domain)
    return ros_env(ros_domain)
