"""Online value of one top-level clause at the case start, with the first violation (O(1) state)."""

from __future__ import annotations

import math

from cosim_validation.common.record import Stage
from cosim_validation.monitor.properties.language import formula as f
from cosim_validation.monitor.properties.language.robustness import ClauseResult
from cosim_validation.monitor.properties.online.operators import El, Leaf, Node, build

INF = math.inf


class ClauseMonitor:
    """Consumes the stream of a clause's operands and keeps the clause's value at sample 0.

    ``always`` clauses keep a running min and the first sample whose robustness is <= 0 (the
    violation is known at once); unbounded ``eventually`` / ``until`` keep a running max; any
    other clause takes the first element of its own stream.
    """

    def __init__(self, clause: f.Formula, leaves: list[Leaf]) -> None:
        self.clause = clause
        self.window: tuple[float, float] | None = None
        self.kind = "generic"
        if isinstance(clause, f.Always):
            self.kind, self.window = "always", clause.window
            self.streams: list[Node] = [build(clause.operand, leaves)]
        elif isinstance(clause, f.Eventually) and clause.window is None:
            self.kind = "eventually"
            self.streams = [build(clause.operand, leaves)]
        elif isinstance(clause, f.Until) and clause.window is None:
            self.kind = "until"
            self.streams = [build(clause.left, leaves), build(clause.right, leaves)]
            self.pending: tuple[list[El], list[El]] = ([], [])
            self.prefix = (INF, INF)
        else:
            self.streams = [build(clause, leaves)]
        empty = INF if self.kind == "always" else -INF
        self.lo, self.hi = empty, empty
        self.t0 = math.nan
        self.done = False
        self.violation: tuple[float, Stage] | None = None
        self.last: tuple[float, int] = (math.nan, 0)

    def update(self, final: bool) -> None:
        """Consume what the operand streams produced.

        Args:
            final: Whether the trace has ended (the streams then give every pending sample, windows truncated).
        """
        if self.kind == "until":
            self._until(final)
            return
        for el in self.streams[0].pull(final):
            self.last = (el[0], el[1])
            if math.isnan(self.t0):
                self.t0 = el[0]
            if self.done:
                continue
            if self.kind == "always":
                self._always(el)
            elif self.kind == "eventually":
                self.lo, self.hi = max(self.lo, el[2]), max(self.hi, el[3])
            else:
                self.lo, self.hi, self.done = el[2], el[3], True

    def _always(self, el: El) -> None:
        t, stage, lo, hi = el
        if self.window is not None:
            if t < self.t0 + self.window[0]:
                return
            if t > self.t0 + self.window[1]:
                self.done = True
                return
        self.lo, self.hi = min(self.lo, lo), min(self.hi, hi)
        if self.violation is None and hi <= 0:
            self.violation = (t, Stage(stage))

    def absorb(self, value: float, unknown: bool = False) -> None:
        """Take in a positive value of an unbounded ``always`` clause's operand that arrived out of order.

        Its sample was already counted; ``unknown``: some of those values were unknown (NaN).

        Args:
            value: The smallest of the late values, in the property's unit (+inf if none was known).
            unknown: Whether some of the late values were NaN (the lower bound then drops to -inf).
        """
        self.lo = min(self.lo, -INF if unknown else value)
        self.hi = min(self.hi, value)

    def _until(self, final: bool) -> None:
        for queue, stream in zip(self.pending, self.streams, strict=True):
            queue.extend(stream.pull(final))
        n = min(len(self.pending[0]), len(self.pending[1]))
        for i in range(n):
            left, right = self.pending[0][i], self.pending[1][i]
            self.last = (left[0], left[1])
            self.lo = max(self.lo, min(right[2], self.prefix[0]))
            self.hi = max(self.hi, min(right[3], self.prefix[1]))
            self.prefix = (min(self.prefix[0], left[2]), min(self.prefix[1], left[3]))
        del self.pending[0][:n], self.pending[1][:n]

    def result(self) -> ClauseResult:
        """The clause's value (final once the trace has ended)."""
        if self.kind == "always":
            if self.violation is None:
                return ClauseResult(self.lo, self.hi)
            return ClauseResult(self.lo, self.hi, self.violation[0], self.violation[1])
        return ClauseResult(self.lo, self.hi, self.last[0], Stage(self.last[1]))
