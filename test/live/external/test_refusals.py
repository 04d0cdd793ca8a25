"""A node streaming at the control rate to an arm that refuses: the refusals are kept (the last ones) and logged
without flooding the log."""

from __future__ import annotations

import pytest

from cosim_validation.live.ros import refusals as refusals_module
from cosim_validation.live.ros.refusals import Refusals


class _Logger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def error(self, line: str) -> None:
        self.lines.append(line)


def test_a_thousand_refusals_give_one_line_then_one_per_period_with_a_count(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(refusals_module.time, "monotonic", lambda: now[0])
    logger = _Logger()
    refusals: Refusals[str] = Refusals(logger)
    for n in range(1000):  # one second at 1 kHz
        refusals.add(f"servo_jp {n}", f"/PSM1/servo_jp ignored: not enabled ({n})")
        now[0] += 0.000_9
    assert logger.lines == ["/PSM1/servo_jp ignored: not enabled (0)"]
    now[0] += 0.2  # a second after the first line
    refusals.add("servo_jp 1000", "/PSM1/servo_jp ignored: not enabled (1000)")
    assert logger.lines[1] == "/PSM1/servo_jp ignored: not enabled (1000) (999 more refused since the last message)"
    assert refusals.count == 1001
    assert len(refusals) == Refusals.KEPT
    assert list(refusals)[-1] == "servo_jp 1000"
    assert refusals[0] == f"servo_jp {1001 - Refusals.KEPT}"


def test_another_kind_is_logged_at_once_and_a_burst_is_counted_at_the_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(refusals_module.time, "monotonic", lambda: now[0])
    logger = _Logger()
    refusals: Refusals[str] = Refusals(logger)
    for n in range(5):
        refusals.add("a", f"servo_jp ignored: not enabled ({n})", ("servo_jp", "not enabled"))
    refusals.add("b", "servo_jp ignored: outside the joint limits", ("servo_jp", "limits"))  # another kind: at once
    goal = [object(), object()]  # every refused goal is a kind of its own: each logged
    refusals.add("c", "goal refused (1)", goal[0])
    refusals.add("d", "goal refused (2)", goal[1])
    assert logger.lines == [
        "servo_jp ignored: not enabled (0)",
        "servo_jp ignored: outside the joint limits",
        "goal refused (1)",
        "goal refused (2)",
    ]
    refusals.flush()  # the case ends: the four unlogged of the burst are counted
    assert logger.lines[4:] == [
        "servo_jp ignored: not enabled (4) (4 refused since the last message, this the last of them)"
    ]
    refusals.add("e", "servo_jp ignored: not enabled (5)", ("servo_jp", "not enabled"))  # the next case: at once
    assert logger.lines[5:] == ["servo_jp ignored: not enabled (5)"]
