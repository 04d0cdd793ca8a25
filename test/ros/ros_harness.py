"""Test helpers for real ROS 2 graphs: an exclusive DDS domain per test and an rclpy context in the test."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

DOMAIN_RANGE = range(60, 160)  # valid Fast DDS domains are 0..232; leave low ones to users


@contextlib.contextmanager
def exclusive_domain() -> Iterator[int]:
    """A ROS_DOMAIN_ID no other test run on this machine holds (file locks in the temp folder)."""
    folder = Path(tempfile.gettempdir()) / "cosim-ros-domains"
    folder.mkdir(exist_ok=True)
    start = os.getpid() % len(DOMAIN_RANGE)
    for offset in range(len(DOMAIN_RANGE)):
        domain = DOMAIN_RANGE[(start + offset) % len(DOMAIN_RANGE)]
        handle: IO[str] = open(folder / f"{domain}.lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        try:
            yield domain
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
            handle.close()
        return
    raise RuntimeError("no free ROS domain id for the test")


def ros_env(domain: int) -> dict[str, str]:
    """Environment of node processes in ``domain``, discovery kept on this host."""
    return {**os.environ, "ROS_DOMAIN_ID": str(domain), "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


def spin_until(node: Any, executor: Any, condition: Callable[[], bool], timeout_s: float) -> bool:
    """Spin ``executor`` until ``condition()`` or the timeout; return whether it held."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        executor.spin_once(timeout_sec=0.05)
    return condition()
