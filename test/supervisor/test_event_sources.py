"""Event sources: levels, rising edges, the tracking timeout, user requests."""

from __future__ import annotations

import math

import pytest

from cosim_validation.common.exceptions import InputError
from cosim_validation.supervisor.event_sources import (
    ClearanceMonitor,
    ForceLimitMonitor,
    TrackingMonitor,
    UserRequests,
    any_active,
)


def test_clearance_raises_once_per_approach_and_keeps_the_level() -> None:
    monitor = ClearanceMonitor(0.005)
    distances = [0.02, 0.006, 0.0049, 0.001, 0.0, math.nan, 0.004, 0.0051, 0.003]
    events = [monitor.update(d) for d in distances]
    assert events == [None, None, "e_FRTooClose", None, None, None, None, None, "e_FRTooClose"]
    assert monitor.active


def test_force_limit_uses_the_magnitude() -> None:
    monitor = ForceLimitMonitor(3.5, "e_ForceLimit")
    assert [monitor.update(f) for f in (1.0, 3.5, 3.6, 4.0, -2.0, -3.7)] == [
        None,
        None,
        "e_ForceLimit",
        None,
        None,
        "e_ForceLimit",
    ]
    assert not ForceLimitMonitor(3.5).update(math.nan)


def test_tracking_times_out_and_recovers() -> None:
    monitor = TrackingMonitor(0.5)
    monitor.start(10.0)
    seen = [(10.1, True), (10.2, False), (10.6, False), (10.7, False), (10.8, False), (10.9, True), (11.5, False)]
    events = [monitor.update(t, tracked) for t, tracked in seen]
    assert events == [None, None, None, "e_NeedleLost", None, None, "e_NeedleLost"]
    assert monitor.active


def test_any_active() -> None:
    a, b = ClearanceMonitor(0.005), ForceLimitMonitor(1.0)
    a.update(0.001)
    assert any_active([a, b])
    a.update(0.01)
    assert not any_active([a, b])


def test_user_requests_are_queued_in_order() -> None:
    requests = UserRequests({"abort": "e_TaskAborted", "recover": "e_TaskRecovered"})
    requests.request("abort")
    requests.request("recover")
    assert requests.drain() == ["e_TaskAborted", "e_TaskRecovered"]
    assert requests.drain() == []
    with pytest.raises(InputError, match="unknown request 'abrot'; requests: abort, recover"):
        requests.request("abrot")
