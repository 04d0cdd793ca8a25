"""Pairs a robot's samples with the expected samples as both arrive (the rule of alignment.py)."""

from __future__ import annotations

from collections import deque

from cosim_validation.monitor.properties.alignment import nearest
from cosim_validation.monitor.properties.sample import Block


class ExpectedStream:
    """Keeps the expected samples still needed and the robot samples waiting for their partner.

    Memory is bounded by the lag between the two streams (plus, while the expected stream has not
    ended, the robot samples later than the last expected one).
    """

    def __init__(self) -> None:
        self.expected: deque[Block] = deque()
        self.waiting: deque[Block] = deque()
        self.ended = False
        self.seen_any = False

    def add_expected(self, block: Block) -> None:
        """One expected sample (in time order).

        Args:
            block: The sample, as a block of n = 1.
        """
        self.expected.append(block)
        self.seen_any = True

    def add_robot(self, block: Block) -> None:
        """One robot sample (in time order).

        Args:
            block: The sample, as a block of n = 1.
        """
        self.waiting.append(block)

    def end(self) -> None:
        """No more expected samples will come."""
        self.ended = True

    def ready(self) -> list[tuple[Block, Block | None]]:
        """(robot sample, its expected partner) pairs now decided, in order; partner None if no expected at all."""
        out: list[tuple[Block, Block | None]] = []
        while self.waiting:
            t_a = float(self.waiting[0].t_s[0])
            after = next((i for i, e in enumerate(self.expected) if float(e.t_s[0]) >= t_a), -1)
            if after < 0:
                if not self.ended:
                    break
                out.append((self.waiting.popleft(), self.expected[-1] if self.expected else None))
                continue
            if after == 0:
                partner = self.expected[0]
            else:
                before_t, after_t = float(self.expected[after - 1].t_s[0]), float(self.expected[after].t_s[0])
                partner = self.expected[after if nearest(t_a, before_t, after_t) else after - 1]
                for _ in range(after - 1):  # later robot samples never need what lies before
                    self.expected.popleft()
            out.append((self.waiting.popleft(), partner))
        return out
