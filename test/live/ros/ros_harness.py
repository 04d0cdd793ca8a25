"""Test helpers for real ROS 2 graphs: an exclusive DDS domain per test and an rclpy context in the test."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any

from cosim_validation.live.session.discovery_scope import DiscoveryScope, DomainLease


@contextlib.contextmanager
def exclusive_domain() -> Iterator[int]:
    """A ROS_DOMAIN_ID no other test or session on this machine holds (the sessions' own lease)."""
    with DomainLease.acquire() as scope:
        yield scope.domain_id


def ros_env(domain: int) -> dict[str, str]:
    """Environment of node processes in ``domain``, discovery kept on this host."""
    return DiscoveryScope(domain).env()


def spin_until(node: Any, executor: Any, condition: Callable[[], bool], timeout_s: float) -> bool:
    """Spin ``executor`` until ``condition()`` or the timeout; return whether it held."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        executor.spin_once(timeout_sec=0.05)
    return condition()
