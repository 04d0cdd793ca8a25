"""A robot is stale only when it owes a sample for longer than the timeout, never when merely idle."""

from __future__ import annotations

from cosim_validation.record import RobotRole
from cosim_validation.session.robot_liveness import RobotLiveness

V, P = RobotRole.VIRTUAL, RobotRole.PHYSICAL


def test_owing_robot_goes_stale_once() -> None:
    live = RobotLiveness(1.0)
    live.start_case([V, P], now_s=0.0)
    live.expected(100, now_s=0.0)
    live.joints(V, 100, now_s=0.01)
    assert live.newly_stale(now_s=0.9) == []
    assert live.newly_stale(now_s=1.2) == [(P, 1.2)]
    assert live.newly_stale(now_s=5.0) == []  # reported once
    assert live.stale == {P}
    assert live.silent_for_s(V, now_s=5.0) == 4.99


def test_idle_robots_are_not_stale_and_a_new_case_clears() -> None:
    live = RobotLiveness(1.0)
    live.start_case([V], now_s=0.0)
    live.expected(100, now_s=0.0)
    live.joints(V, 100, now_s=0.1)
    assert live.newly_stale(now_s=60.0) == []  # nothing owed for a minute: a paused controller
    live.expected(200, now_s=60.0)
    assert live.newly_stale(now_s=61.5) == [(V, 1.5)]
    live.start_case([V], now_s=62.0)
    assert live.stale == set()
    assert live.newly_stale(now_s=70.0) == []


def test_an_older_answer_does_not_settle_the_newest_sample() -> None:
    live = RobotLiveness(1.0)
    live.start_case([V], now_s=0.0)
    live.expected(100, now_s=0.0)
    live.expected(200, now_s=0.1)
    live.joints(V, 100, now_s=0.2)
    assert live.newly_stale(now_s=1.05) == [(V, 1.05)]
