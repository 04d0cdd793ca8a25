"""A robot is stale only when it owes a sample for longer than the timeout, never when merely idle."""

from __future__ import annotations

import pytest

from cosim_validation.common.record import RobotRole
from cosim_validation.live.session.robot_liveness import RobotLiveness

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


def test_idle_robots_are_not_stale_and_a_stale_one_stays_stale_until_it_answers() -> None:
    live = RobotLiveness(1.0)
    live.start_case([V], now_s=0.0)
    live.expected(100, now_s=0.0)
    live.joints(V, 100, now_s=0.1)
    assert live.newly_stale(now_s=60.0) == []  # nothing owed for a minute: a paused controller
    live.expected(200, now_s=60.0)
    assert live.newly_stale(now_s=61.5) == [(V, 1.5)]
    live.start_case([V], now_s=62.0)
    assert live.stale == {V}  # a new case does not make a dead robot alive
    assert live.newly_stale(now_s=70.0) == []  # nothing owed yet in the new case, and reported once
    assert live.joints(V, 300, now_s=70.5) is True  # it answers: alive again


def test_an_older_answer_does_not_settle_the_newest_sample() -> None:
    live = RobotLiveness(1.0)
    live.start_case([V], now_s=0.0)
    live.expected(100, now_s=0.0)
    live.expected(200, now_s=0.1)
    live.joints(V, 100, now_s=0.2)
    assert live.newly_stale(now_s=1.05) == []  # it answered (an older sample) 0.85 s ago
    assert live.newly_stale(now_s=1.25) == [(V, 1.25)]  # silent for 1.05 s while it owes sample 200


def test_a_stale_robot_that_answers_again_is_alive() -> None:
    live = RobotLiveness(0.5)
    live.start_case([P], now_s=0.0)
    live.expected(100, now_s=0.0)
    assert live.newly_stale(now_s=0.6) == [(P, 0.6)]  # frozen
    assert live.joints(P, 100, now_s=5.0) is True  # thawed: its late answer arrives, once
    assert live.stale == set()
    assert live.joints(P, 100, now_s=5.1) is False
    live.expected(200, now_s=5.2)
    assert live.newly_stale(now_s=5.8) == [(P, pytest.approx(0.6))]  # and it can go stale again


def test_a_robot_still_sending_older_answers_is_not_stale() -> None:
    """The monitor lags (a loaded machine): it is still taking in the robot's older joint states."""
    live = RobotLiveness(0.5)
    live.start_case([P], now_s=0.0)
    for k in range(10):  # the newest sample is owed for 1 s, but an older answer comes every 0.1 s
        live.expected(100 * (k + 10), now_s=0.1 * k)
        live.joints(P, 100 * k, now_s=0.1 * k + 0.05)
        assert live.newly_stale(now_s=0.1 * k + 0.09) == []
    assert live.newly_stale(now_s=1.6) == [(P, pytest.approx(1.6))]  # then silence: stale


def test_a_late_check_waits_for_the_answers_queued_behind_it() -> None:
    """The checking process did not run for 1.1 s (a loaded machine): both robots answered meanwhile, but their
    answers are taken after the check. A late check judges nothing; the next one does, never two late ones in a
    row, so a robot that really is silent is still reported by a process that is late at every check."""
    live = RobotLiveness(0.5)
    live.start_case([V, P], now_s=0.0)
    live.expected(100, now_s=0.0)
    assert live.newly_stale(now_s=1.1, since_check_s=1.1) == []  # late: the answers wait in the queue
    live.joints(V, 100, now_s=1.1)
    live.joints(P, 100, now_s=1.1)
    assert live.newly_stale(now_s=1.15, since_check_s=0.05) == []  # judged: both answered
    live.expected(200, now_s=1.2)
    live.joints(V, 200, now_s=1.21)
    assert live.newly_stale(now_s=2.4, since_check_s=1.25) == []  # late again: deferred once
    assert live.newly_stale(now_s=3.4, since_check_s=1.0) == [(P, pytest.approx(2.2))]  # late, but judged


def test_a_late_check_then_an_on_time_one_reports_a_dead_robot_and_a_new_case_starts_afresh() -> None:
    live = RobotLiveness(0.5)
    live.start_case([P], now_s=0.0)
    live.expected(100, now_s=0.0)
    assert live.newly_stale(now_s=0.9, since_check_s=0.9) == []  # late: deferred
    assert live.newly_stale(now_s=0.95, since_check_s=0.05) == [(P, pytest.approx(0.95))]  # on time: reported
    assert live.deferred_gap_s == pytest.approx(0.9)  # the report may say why it came past the first check
    assert live.newly_stale(now_s=1.0, since_check_s=0.05) == []
    assert live.deferred_gap_s is None  # the check before this one judged
    live.start_case([V], now_s=1.0)
    live.expected(200, now_s=1.0)
    assert live.newly_stale(now_s=1.3, since_check_s=0.3) == []  # late at the case's start: deferred, not judged
    live.joints(V, 200, now_s=1.3)
    assert live.newly_stale(now_s=1.35, since_check_s=0.05) == []
    # a late check at the end of a case does not carry its deferral into the next
    live.expected(300, now_s=1.4)
    assert live.newly_stale(now_s=2.0, since_check_s=0.6) == []  # deferred
    live.start_case([V], now_s=2.1)
    live.expected(400, now_s=2.1)
    assert live.newly_stale(now_s=2.7, since_check_s=0.6) == []  # the new case's first late check defers too
    assert live.newly_stale(now_s=2.75, since_check_s=0.05) == [(V, pytest.approx(0.65))]
