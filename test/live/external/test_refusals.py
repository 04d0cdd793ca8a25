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
